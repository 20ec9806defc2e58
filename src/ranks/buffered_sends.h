// The room buffered sends (MPI_Bsend, MPI_Ibsend, MPI_Bsend_init) between MPI processes of an
// address space take in the buffer their process attached with MPI_Buffer_attach (MPI-4.0
// §3.6.1). The engine copies a buffered message into a packet of its own, so the buffer is
// accounted, not written: each message needs its packed size plus MPI_BSEND_OVERHEAD free, or
// the send fails with MPI_ERR_BUFFER (also when nothing is attached). A message to a rank of this
// process leaves the buffer once copied into its packet, as an MPI's eager message leaves it once
// sent; one to another process keeps its room until the MPI has sent it, and MPI_Buffer_detach
// waits for those. Thread-ranks of a threadcomm use the buffer the MPI keeps for their process,
// which tsmpi does not see: their buffered sends are not accounted.
#pragma once
#include <mpi.h>

#include <cstddef>

namespace tsmpi::ranks::bsend {

struct Buffer;

// Room a message keeps until the MPI has sent it (b == nullptr: none).
struct Held {
  Buffer* b = nullptr;
  MPI_Count n = 0;
};

// One buffer per MPI process of the address space (asp::start).
void make_buffers(int k);
int attach(int index, void* buffer, MPI_Count size);
// Waits for the messages that keep room to be sent (progressing the engine's network).
int detach(int index, void* buffer_addr, MPI_Count* size);

// Room for one buffered message of `bytes` packed bytes from the calling thread's MPI process:
// MPI_SUCCESS or MPI_ERR_BUFFER. `keep`: the message goes to another process and keeps its room
// in *held until release(). Outside address spaces: MPI_SUCCESS, nothing held.
int reserve(std::size_t bytes, bool keep, Held* held);
void release(const Held& held);

}  // namespace tsmpi::ranks::bsend

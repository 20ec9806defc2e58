// The room buffered sends (MPI_Bsend, MPI_Ibsend, MPI_Bsend_init) between MPI processes of an
// address space take in the buffer their process attached with MPI_Buffer_attach (MPI-4.0
// §3.6.1). The engine copies a buffered message into a packet of its own, so the buffer is
// accounted, not written: each message needs its packed size plus MPI_BSEND_OVERHEAD free, or
// the send fails with MPI_ERR_BUFFER (also when nothing is attached). A message to a rank of this
// process leaves the buffer once copied into its packet, as an MPI's eager message leaves it once
// sent; one to another process keeps its room until the MPI has sent it, and MPI_Buffer_detach
// waits for those. Thread-ranks of a threadcomm share the buffer their process attached through
// the MPI: MPI_Buffer_attach and detach are seen in every mode (the table's `record` rows), which
// notes its size; their buffered sends take room in it the same way (the MPI's own buffered
// sends, on its communicators, are the MPI's business and not counted).
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

// The calling thread belongs to an MPI process of an address space: the engine keeps its buffer.
bool engine_buffer();
int engine_attach(void* buffer, MPI_Count size);
int engine_detach(void* buffer_addr, MPI_Count* size);
// The buffer this OS process attached through the MPI (for its threadcomm thread-ranks).
void process_attached(void* buffer, MPI_Count size);
void process_detach_wait();  // until no thread-rank's message keeps room in it
void process_detached();

}  // namespace tsmpi::ranks::bsend

namespace tsmpi::ranks::record {

// MPI_Buffer_attach and MPI_Buffer_detach (and _c), from the generated wrappers in every mode:
// `call` is the call the wrapper would make (pass-through or hooked).
template <class Call, class Size>
int Buffer_attach(void* caller, Call call, void* buffer, Size size) {
  if (bsend::engine_buffer()) return bsend::engine_attach(buffer, static_cast<MPI_Count>(size));
  const int rc = call(buffer, size);
  if (rc == MPI_SUCCESS) bsend::process_attached(buffer, static_cast<MPI_Count>(size));
  return rc;
}
template <class Call, class Size>
int Buffer_detach(void* caller, Call call, void* buffer_addr, Size* size) {
  if (bsend::engine_buffer()) {
    MPI_Count n = 0;
    const int rc = bsend::engine_detach(buffer_addr, &n);
    *size = static_cast<Size>(n);
    return rc;
  }
  bsend::process_detach_wait();
  const int rc = call(buffer_addr, size);
  if (rc == MPI_SUCCESS) bsend::process_detached();
  return rc;
}
template <class Call, class Size>
int Buffer_attach_c(void* caller, Call call, void* buffer, Size size) {
  return Buffer_attach(caller, call, buffer, size);
}
template <class Call, class Size>
int Buffer_detach_c(void* caller, Call call, void* buffer_addr, Size* size) {
  return Buffer_detach(caller, call, buffer_addr, size);
}

}  // namespace tsmpi::ranks::record

// Several MPI processes in one address space (MPI Forum ticket 310; include/tsmpi.h): under
// `tsmpirun -asp K` each OS process holds K MPI processes, the local ranks of one family over
// the MPI's own MPI_COMM_WORLD. A thread acts as one of them after MPIX_Thread_attach; its
// MPI_COMM_WORLD is the family's root communicator, its MPI_COMM_SELF that process's own.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>

#include "runtime/config.h"
#include "runtime/handles.h"

namespace tsmpi::ranks {
struct Comm;
struct Family;
}

namespace tsmpi::ranks::asp {

// Live from an MPI_Init_thread at MPIX_THREAD_ATTACH/REATTACH under -asp until the MPI is finalized.
extern std::atomic<bool> g_live;
extern Comm* g_world;
extern constinit TSMPI_TLS Comm* tl_self;  // the attached process's MPI_COMM_SELF

inline bool live() { return g_live.load(std::memory_order_relaxed); }
// The MPI processes of this address space are f's local ranks (communicators made from
// MPI_COMM_WORLD belong to f).
bool owns(const Family* f);

// The engine's communicator the calling thread means by MPI_COMM_WORLD or MPI_COMM_SELF (the
// latter only once attached), else nullptr.
inline Comm* predefined(std::uintptr_t bits) {
  if (!live()) return nullptr;
  if (bits == handle_bits(MPI_COMM_WORLD)) return g_world;
  if (bits == handle_bits(MPI_COMM_SELF)) return tl_self;
  return nullptr;
}

// MPI_Init/MPI_Init_thread, once the MPI is initialized: k MPI processes per address space.
// Sets the key asp of MPI_INFO_ENV; at MPIX_THREAD_ATTACH/REATTACH builds the processes and
// returns the level to report; below it only k = 1 is possible (the program's threads are then
// its one MPI process, natively). Any other combination ends the job with a message.
int init(int k, int required, int tsmpi_provided, int reported);
int attach(int index);
// MPI_Finalize from the calling thread: finalizes its MPI process (the thread that initialized
// MPI, unattached: every process not finalized yet). True when the caller must now finalize
// the MPI underneath (the last one; the processes' traffic is over); else *rc is the result.
bool finalize(int* rc);
bool initialized();            // the calling thread belongs to an MPI process
bool finalized();              // its MPI process has finalized
bool is_thread_main();         // the first thread that attached to its MPI process
int attached_index();          // the index of the calling thread's MPI process, or -1
// An error the MPI returned for a call of function `fn` (fn::Id) made by a thread of an address
// space (the MPI's MPI_COMM_WORLD and MPI_COMM_SELF return errors there): raised through the
// calling MPI process's handler on MPI_COMM_WORLD (where both MPIs raise them), or for an
// unattached thread MPI_COMM_WORLD's default. Errors of files, windows and sessions
// stay with those objects' handlers.
int raise_native(int fn, int code);
// An error code (and its message) for a call on MPI_COMM_WORLD from a thread not attached.
int not_attached_code(const char* call);

}  // namespace tsmpi::ranks::asp

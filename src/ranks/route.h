// Where the hook hands a call to the thread-rank engine. Nothing here runs until a program
// makes its first threadcomm (live() is one relaxed load); the table's threadcomm column says
// per function which test applies.
#pragma once
#include <mpi.h>

#include <atomic>

#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi {
struct CallArgs;
}

namespace tsmpi::ranks {

struct Unranked {};  // the wrapper has no engine form
struct Refused {};   // the call is refused on a thread-rank communicator

extern std::atomic<bool> g_live;
inline bool live() { return g_live.load(std::memory_order_relaxed); }

// An `engine` row: a communicator, group or message argument is the engine's; a `complete` row:
// the calling thread is a thread-rank, calling from outside the MPI (depth 0: not from inside
// another call, e.g. ROMIO's waits). `in`: the object the call acts on (Objects::in).
bool routes(fn::Id id, const HandleRef& in, const CallArgs& args, int depth);
// A `refuse` row: true (and *rc, raised through the error handler) when an argument is the
// engine's.
bool refuses(fn::Id id, const CallArgs& args, int* rc);
// A generated Fortran entry point (codegen/fortran.py): the MPI's own routine reads the object
// behind a handle, which it cannot do for one the engine made, so such an argument is refused
// as `refuses` does. An address space's MPI_COMM_WORLD, the MPI's own handle, goes through.
bool refuses_in_fortran(fn::Id id, const CallArgs& args, int* rc);
// A generated Fortran entry point of an attribute call (MPI_Comm_get_attr, _set_attr,
// MPI_Attr_get, _put): on a thread-rank communicator the MPI's routine works on the MPI
// communicator that holds the thread-rank's attributes (api::attribute_comm), so Fortran's
// attribute conventions stay the MPI's. True when *comm was the engine's: *comm is then that
// communicator, or *rc an error raised through comm's handler (fortran_handles.cpp).
bool attributes_in_fortran(fn::Id id, MPI_Comm* comm, int keyval, int* rc);

// Switches on every wrapper the engine needs (first MPIX_Threadcomm_init).
void activate();

}  // namespace tsmpi::ranks

// The calling thread as a rank of a thread-rank communicator, with the argument checks every
// call makes; errors go through the communicator's error handler.
#pragma once
#include <mpi.h>

#include "ranks/comm.h"
#include "ranks/errors.h"

namespace tsmpi::ranks {

struct Caller {
  Comm* c = nullptr;
  Member* m = nullptr;
  int rc = MPI_SUCCESS;
  explicit operator bool() const { return rc == MPI_SUCCESS; }
  int fail(int code, const char* call) { return rc = raise(c, code, call); }
};

Caller caller(MPI_Comm comm, const char* call);

// The caller and the topology (or its part) a topology call reads, found by find(caller);
// false (k.rc raised through the handler) when the communicator has none (MPI_ERR_TOPOLOGY).
template <class T>
struct OnTopology {
  Caller k;
  const T* t = nullptr;
  explicit operator bool() const { return t != nullptr; }
};
template <class T, class Find>
OnTopology<T> on_topology(MPI_Comm comm, const char* call, Find&& find) {
  OnTopology<T> o{caller(comm, call)};
  if (!o.k) return o;
  o.t = find(o.k);
  if (!o.t) o.k.fail(MPI_ERR_TOPOLOGY, call);
  return o;
}

// MPI_ERR_* when the argument is invalid for the communicator, else MPI_SUCCESS.
int check_dest(const Comm* c, int rank);
int check_source(const Comm* c, int rank);
int check_send_tag(int tag);
int check_recv_tag(int tag);
int check_count(MPI_Count count);
int check_type(MPI_Datatype type);
int check_root(const Comm* c, int root);

}  // namespace tsmpi::ranks

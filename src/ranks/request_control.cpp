// Starting, cancelling, freeing and converting requests of thread-ranks: the persistent
// collectives' requests (MPI_Bcast_init ...), MPI_Start(all) on arrays mixing the engine's
// persistent requests and the MPI's, MPI_Cancel, MPI_Request_free,
// MPI_Request_c2f (the engine's request promoted to a generalized request, requests.h).
#include "ranks/api.h"
#include "ranks/caller.h"
#include "ranks/request_entries.h"

namespace tsmpi::ranks::api {

// ---- starting, cancelling, freeing ----------------------------------------------------------

int collective_init(const char* call, MPI_Comm comm, MPI_Request* request, std::optional<int> root,
                    std::function<int(Request*)> start) {
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (root)
    if (int e = check_root(k.c, *root)) return k.fail(e, call);
  return raise(k.c, persistent_collective_init(k.c, k.m->rank, std::move(start), request), call);
}

int start(MPI_Request* request) {
  Entry e = classify(*request);
  if (e.what == Entry::kFreed) return freed_request("MPI_Start");
  if (e.r && !e.stand_in) {
    if (!e.r->persistent) return raise(e.r->comm, MPI_ERR_REQUEST, "MPI_Start");
    // An inactive persistent collective raises its own errors (an active one is refused below).
    if (e.r->start_collective && !e.r->active) return persistent_start(e.r);
    return raise(e.r->comm, persistent_start(e.r), "MPI_Start");
  }
  return mpi::start(request);
}

int startall(int count, MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    int rc = start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int cancel(MPI_Request* request) {
  Entry e = classify(*request);
  if (e.what == Entry::kFreed) return freed_request("MPI_Cancel");
  if (e.r) {  // the engine's (a stand-in's operation too)
    ranks::cancel(e.r);
    return MPI_SUCCESS;
  }
  if (Request* r = promoted_request(*request)) {  // a stand-in, by the handle Fortran holds
    ranks::cancel(r);
    return MPI_SUCCESS;
  }
  return mpi::cancel(request);
}

int request_free(MPI_Request* request) {
  Entry e = classify(*request);
  if (e.what == Entry::kFreed) return freed_request("MPI_Request_free");
  if (e.stand_in) {  // the generalized request goes, and the engine's with it (its free_fn)
    MPI_Request g = e.mpi;
    int rc = mpi::request_free(&g);
    if (rc == MPI_SUCCESS) *request = MPI_REQUEST_NULL;
    return rc;
  }
  if (e.r) {
    release(e.r, request);
    return MPI_SUCCESS;
  }
  return mpi::request_free(request);
}

MPI_Fint request_c2f(MPI_Request request) {
  Entry e = classify(request);
  if (e.what == Entry::kFreed) {
    freed_request("MPI_Request_c2f");
    return PMPI_Request_c2f(MPI_REQUEST_NULL);
  }
  // Under serialize mode's lock: Open MPI adds a request to its Fortran table on its first
  // c2f, unlocked below MPI_THREAD_MULTIPLE, and thread-ranks promote requests at once.
  if (!e.r) return mpi::locked([&] { return PMPI_Request_c2f(request); });
  if (e.r->persistent) {  // a generalized request completes once: it cannot stand for one
    raise(e.r->comm, unsupported_code("MPI_Request_c2f (a persistent request of a thread-rank communicator)"),
          "MPI_Request_c2f");
    return PMPI_Request_c2f(MPI_REQUEST_NULL);
  }
  const MPI_Request stand_in = promote(e.r);
  return mpi::locked([&] { return PMPI_Request_c2f(stand_in); });
}

}  // namespace tsmpi::ranks::api

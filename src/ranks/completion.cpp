// Completion of requests by a thread-rank (the `complete` rows of the table). The MPI's own test
// calls do the work (engine requests are generalized requests, completed by whichever thread
// finishes the operation); between tests the thread polls for messages from other processes
// and backs off. Persistent operations get their status from the engine.
#include <vector>

#include "locking/backoff.h"
#include "matching/mpi_calls.h"
#include "ranks/api.h"
#include "ranks/p2p.h"
#include "ranks/requests.h"
#include "ranks/transport.h"

namespace tsmpi::ranks::api {

namespace {
// The persistent operations among requests, before the call (their handles do not change).
struct PersistentSnapshot {
  std::vector<Persistent*> ops;
  bool any = false;
  PersistentSnapshot(int n, const MPI_Request* r) {
    if (!any_persistent()) return;
    ops.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      ops[static_cast<std::size_t>(i)] = find_persistent(r[i]);
      any = any || ops[static_cast<std::size_t>(i)];
    }
  }
  void fix(int i, MPI_Status* status) const {
    if (any && status != MPI_STATUS_IGNORE && ops[static_cast<std::size_t>(i)])
      persistent_status(ops[static_cast<std::size_t>(i)], status);
  }
};

template <class Test>
int until_done(Test&& test) {
  Backoff backoff;
  for (;;) {
    int flag = 0;
    int rc = test(&flag);
    if (rc != MPI_SUCCESS || flag) return rc;
    progress();
    backoff.pause();
  }
}
}  // namespace

int test(MPI_Request* request, int* flag, MPI_Status* status) {
  PersistentSnapshot p(1, request);
  progress();
  int rc = mpi::test(request, flag, status);
  if (*flag) p.fix(0, status);
  return rc;
}

int wait(MPI_Request* request, MPI_Status* status) {
  PersistentSnapshot p(1, request);
  int rc = until_done([&](int* flag) { return mpi::test(request, flag, status); });
  p.fix(0, status);
  return rc;
}

int testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  PersistentSnapshot p(count, requests);
  progress();
  int rc = mpi::testall(count, requests, flag, statuses);
  if (*flag && statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < count; ++i) p.fix(i, &statuses[i]);
  return rc;
}

int waitall(int count, MPI_Request* requests, MPI_Status* statuses) {
  PersistentSnapshot p(count, requests);
  int rc = until_done([&](int* flag) { return mpi::testall(count, requests, flag, statuses); });
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < count; ++i) p.fix(i, &statuses[i]);
  return rc;
}

int testany(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  PersistentSnapshot p(count, requests);
  progress();
  int rc = mpi::testany(count, requests, index, flag, status);
  if (*flag && *index != MPI_UNDEFINED) p.fix(*index, status);
  return rc;
}

int waitany(int count, MPI_Request* requests, int* index, MPI_Status* status) {
  PersistentSnapshot p(count, requests);
  int rc = until_done([&](int* flag) { return mpi::testany(count, requests, index, flag, status); });
  if (*index != MPI_UNDEFINED) p.fix(*index, status);
  return rc;
}

int testsome(int incount, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  PersistentSnapshot p(incount, requests);
  progress();
  int rc = mpi::locked([&] { return PMPI_Testsome(incount, requests, outcount, indices, statuses); });
  if (statuses != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; ++i) p.fix(indices[i], &statuses[i]);
  return rc;
}

int waitsome(int incount, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  PersistentSnapshot p(incount, requests);
  int rc = until_done([&](int* flag) {
    int r = mpi::locked([&] { return PMPI_Testsome(incount, requests, outcount, indices, statuses); });
    *flag = *outcount != 0;
    return r;
  });
  if (statuses != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; ++i) p.fix(indices[i], &statuses[i]);
  return rc;
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  PersistentSnapshot p(1, &request);
  progress();
  int rc = mpi::locked([&] { return PMPI_Request_get_status(request, flag, status); });
  if (*flag) p.fix(0, status);
  return rc;
}

#if TSMPI_HAVE_MPI_4_1
int request_get_status_any(int count, const MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  PersistentSnapshot p(count, requests);
  progress();
  int rc = mpi::request_get_status_any(count, requests, index, flag, status);
  if (*flag && *index != MPI_UNDEFINED) p.fix(*index, status);
  return rc;
}

int request_get_status_all(int count, const MPI_Request* requests, int* flag, MPI_Status* statuses) {
  PersistentSnapshot p(count, requests);
  progress();
  int rc = mpi::request_get_status_all(count, requests, flag, statuses);
  if (*flag && statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < count; ++i) p.fix(i, &statuses[i]);
  return rc;
}

int request_get_status_some(int incount, const MPI_Request* requests, int* outcount, int* indices,
                            MPI_Status* statuses) {
  PersistentSnapshot p(incount, requests);
  progress();
  int rc = mpi::request_get_status_some(incount, requests, outcount, indices, statuses);
  if (statuses != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; ++i) p.fix(indices[i], &statuses[i]);
  return rc;
}
#endif

int start(MPI_Request* request) {
  if (Persistent* p = find_persistent(*request)) return persistent_start(p);
  return mpi::locked([&] { return PMPI_Start(request); });
}

int startall(int count, MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    int rc = start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int cancel(MPI_Request* request) {
  if (Persistent* p = find_persistent(*request)) {
    if (p->is_recv) cancel_recv(p->comm, p->me, Channel::kP2P, &p->recv);
    return MPI_SUCCESS;
  }
  return ranks::cancel(request);
}

int request_free(MPI_Request* request) {
  if (find_persistent(*request)) return persistent_free(request);
  return mpi::locked([&] { return PMPI_Request_free(request); });
}

}  // namespace tsmpi::ranks::api

// Completion of requests by a thread-rank (the `complete` rows of the table), over arrays that
// may mix the engine's own requests (requests.h) with the MPI's and MPI_REQUEST_NULL. The
// engine's are tested by a flag and waited on by a futex (or by polling other processes when
// their communicator spans several); the MPI's by the MPI's own tests, one request at a time,
// between which the thread polls and backs off. Semantics as MPI-4.0 §3.7.3-3.7.5: an inactive
// persistent request counts as MPI_REQUEST_NULL, statuses of such entries are empty, the
// multiple-completion calls report a failed operation with MPI_ERR_IN_STATUS, and the
// single-completion calls leave a status's MPI_ERROR field alone.
#include <vector>

#include "locking/backoff.h"
#include "ranks/api.h"
#include "ranks/p2p.h"
#include "ranks/request_entries.h"

namespace tsmpi::ranks::api {

namespace {
template <class Poll>
void until(Poll&& poll) {
  Backoff backoff;
  while (!poll()) {
    progress();
    backoff.pause();
  }
}
}  // namespace

// ---- one request ----------------------------------------------------------------------------

int wait(MPI_Request* request, MPI_Status* status) {
  Entry e = classify(*request);
  switch (e.what) {
    case Entry::kNull: empty_status(status); return MPI_SUCCESS;
    case Entry::kFreed: return freed_request("MPI_Wait");
    case Entry::kMpi: {
      int rc = MPI_SUCCESS;
      until([&] {
        int flag = 0;
        rc = test_mpi(e, request, &flag, status);
        return rc != MPI_SUCCESS || flag;
      });
      return rc;
    }
    case Entry::kEngine: break;
  }
  wait_for(e.r);
  KeepErrorField keep(status);
  Comm* c = e.r->comm;
  return raise(c, finish(e.r, request, status), "MPI_Wait");
}

int test(MPI_Request* request, int* flag, MPI_Status* status) {
  Entry e = classify(*request);
  switch (e.what) {
    case Entry::kNull: *flag = 1; empty_status(status); return MPI_SUCCESS;
    case Entry::kFreed: return freed_request("MPI_Test");
    case Entry::kMpi: progress(); return test_mpi(e, request, flag, status);
    case Entry::kEngine: break;
  }
  *flag = done_now(e.r);
  if (!*flag) return MPI_SUCCESS;
  KeepErrorField keep(status);
  Comm* c = e.r->comm;
  return raise(c, finish(e.r, request, status), "MPI_Test");
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  Entry e = classify(request);
  switch (e.what) {
    case Entry::kNull: *flag = 1; empty_status(status); return MPI_SUCCESS;
    case Entry::kFreed: return freed_request("MPI_Request_get_status");
    case Entry::kMpi: progress(); return mpi::request_get_status(e.mpi, flag, status);
    case Entry::kEngine: break;
  }
  *flag = done_now(e.r);
  if (!*flag) return MPI_SUCCESS;
  KeepErrorField keep(status);
  return raise(e.r->comm, peek(e.r, status), "MPI_Request_get_status");
}

// ---- all ------------------------------------------------------------------------------------

int waitall(int count, MPI_Request* requests, MPI_Status* statuses) {
  const Entries e(count, requests);
  if (e.freed()) return freed_request("MPI_Waitall");
  Outcome out;
  // Only the engine's: each one waited for (sleeping when it takes long) and finished in turn.
  if (!e.mixed()) {
    for (int i = 0; i < count; ++i) {
      MPI_Status* st = at(statuses, i);
      if (e[i].what == Entry::kNull) {
        null_entry_status(st);
        continue;
      }
      wait_for(e[i].r);
      finish_into(e[i].r, &requests[i], st, out);
    }
    return out.report("MPI_Waitall");
  }
  std::vector<char> done(static_cast<std::size_t>(count), 0);
  until([&] {
    bool all = true;
    for (int i = 0; i < count; ++i) {
      if (done[i]) continue;
      MPI_Status* st = at(statuses, i);
      if (e[i].what == Entry::kNull) {
        null_entry_status(st);
        done[i] = 1;
      } else if (e[i].what == Entry::kEngine) {
        if (!completed(e[i].r)) {
          all = false;
          continue;
        }
        finish_into(e[i].r, &requests[i], st, out);
        done[i] = 1;
      } else {
        int flag = 0;
        test_mpi_into(e[i], &requests[i], &flag, st, out);
        if (flag) done[i] = 1;
        else all = false;
      }
    }
    return all;
  });
  return out.report("MPI_Waitall");
}

int testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  const Entries e(count, requests);
  if (e.freed()) return freed_request("MPI_Testall");
  Theirs theirs(e);  // tested together by the MPI's MPI_Testall
  progress();
  // Nothing is modified unless everything has completed (MPI-4.0 §3.7.5).
  *flag = 0;
  for (auto& x : e)
    if (x.what == Entry::kEngine && !completed(x.r)) {
      if (theirs.size() > 0) {  // the MPI's progress, leaving its requests as they are
        int f = 0;
        mpi::request_get_status(theirs.h[0], &f, MPI_STATUS_IGNORE);
      }
      return MPI_SUCCESS;
    }
  Outcome out;
  if (theirs.size() > 0) {
    std::vector<MPI_Status> sts(theirs.h.size());
    int f = 0;
    int rc = mpi::testall(theirs.size(), theirs.h.data(), &f, statuses == MPI_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : sts.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
    if (!f) return MPI_SUCCESS;
    for (int k = 0; k < theirs.size(); ++k) {
      theirs.write_back(k, requests, e);
      if (statuses == MPI_STATUSES_IGNORE) {
        out.failed(rc, nullptr);
        continue;
      }
      MPI_Status& st = statuses[theirs.at[static_cast<std::size_t>(k)]];
      st = sts[static_cast<std::size_t>(k)];
      if (rc == MPI_SUCCESS) st.MPI_ERROR = MPI_SUCCESS;
      out.failed(st.MPI_ERROR, nullptr);
    }
  }
  *flag = 1;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = at(statuses, i);
    if (e[i].what == Entry::kNull) {
      null_entry_status(st);
    } else if (e[i].what == Entry::kEngine) {
      finish_into(e[i].r, &requests[i], st, out);
    }
  }
  return out.report("MPI_Testall");
}

// ---- any ------------------------------------------------------------------------------------

namespace {
// One pass over the array for MPI_Waitany/MPI_Testany: *index is the first completed entry of
// the engine's, else one of the MPI's; MPI_UNDEFINED when none has completed, and *all_null
// when every entry is null or inactive.
int any_pass(MPI_Request* requests, const Entries& e, Theirs& theirs, int* index, bool* all_null,
             MPI_Status* status, const char* call) {
  *index = MPI_UNDEFINED;
  *all_null = false;
  bool engine_null = true;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i].what != Entry::kEngine) continue;
    engine_null = false;
    if (!completed(e[i].r)) continue;
    *index = static_cast<int>(i);
    KeepErrorField keep(status);
    Comm* c = e[i].r->comm;
    return raise(c, finish(e[i].r, &requests[i], status), call);
  }
  if (theirs.size() == 0) {
    *all_null = engine_null;
    return MPI_SUCCESS;
  }
  int k = MPI_UNDEFINED, flag = 0;
  int rc = mpi::testany(theirs.size(), theirs.h.data(), &k, &flag, status);
  if (k != MPI_UNDEFINED) {
    theirs.write_back(k, requests, e);
    *index = theirs.at[static_cast<std::size_t>(k)];
    return rc;
  }
  *all_null = engine_null && flag;
  return rc;
}
}  // namespace

int waitany(int count, MPI_Request* requests, int* index, MPI_Status* status) {
  const Entries e(count, requests);
  if (e.freed()) return freed_request("MPI_Waitany");
  Theirs theirs(e);
  int rc = MPI_SUCCESS;
  bool all_null = false;
  until([&] {
    rc = any_pass(requests, e, theirs, index, &all_null, status, "MPI_Waitany");
    return rc != MPI_SUCCESS || all_null || *index != MPI_UNDEFINED;
  });
  if (all_null) empty_status(status);
  return rc;
}

int testany(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  const Entries e(count, requests);
  if (e.freed()) return freed_request("MPI_Testany");
  Theirs theirs(e);
  progress();
  bool all_null = false;
  int rc = any_pass(requests, e, theirs, index, &all_null, status, "MPI_Testany");
  *flag = all_null || *index != MPI_UNDEFINED;
  if (all_null) empty_status(status);
  return rc;
}

// ---- some -----------------------------------------------------------------------------------

namespace {
// One pass for MPI_Waitsome/MPI_Testsome: completed requests are finished.
int finish_some(MPI_Request* requests, const Entries& e, Theirs& theirs, int* outcount, int* indices,
                MPI_Status* statuses, const char* call) {
  return some_pass(
      e, theirs,
      [&](std::size_t i, MPI_Status* st, Outcome& out) { finish_into(e[i].r, &requests[i], st, out); },
      [](int count, MPI_Request* h, int* got, int* idx, MPI_Status* sts) {
        return mpi::testsome(count, h, got, idx, sts);
      },
      requests, outcount, indices, statuses, call);
}
}  // namespace

int waitsome(int incount, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  const Entries e(incount, requests);
  if (e.freed()) return freed_request("MPI_Waitsome");
  Theirs theirs(e);
  int rc = MPI_SUCCESS;
  until([&] {
    rc = finish_some(requests, e, theirs, outcount, indices, statuses, "MPI_Waitsome");
    return rc != MPI_SUCCESS || *outcount != 0;
  });
  return rc;
}

int testsome(int incount, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  const Entries e(incount, requests);
  if (e.freed()) return freed_request("MPI_Testsome");
  Theirs theirs(e);
  progress();
  return finish_some(requests, e, theirs, outcount, indices, statuses, "MPI_Testsome");
}

}  // namespace tsmpi::ranks::api

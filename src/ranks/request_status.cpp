// MPI 4.1's MPI_Request_get_status_any/_all/_some for thread-ranks: the status of completed
// requests without completing them, over arrays mixing the engine's and the MPI's requests (the
// MPI's handed to the MPI's own calls, which know an inactive persistent request of theirs).
#include "ranks/api.h"
#include "ranks/request_entries.h"

namespace tsmpi::ranks::api {

#if TSMPI_HAVE_MPI_4_1

int request_get_status_any(int count, const MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  const Entries e(count, requests);
  if (e.freed()) return freed_request("MPI_Request_get_status_any");
  Theirs theirs(e);
  progress();
  *index = MPI_UNDEFINED;
  *flag = 0;
  bool engine_null = true;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i].what != Entry::kEngine) continue;
    engine_null = false;
    if (!completed(e[i].r)) continue;
    *index = static_cast<int>(i);
    *flag = 1;
    KeepErrorField keep(status);
    return raise(e[i].r->comm, peek(e[i].r, status), "MPI_Request_get_status_any");
  }
  bool their_null = true;
  if (theirs.size() > 0) {
    int k = MPI_UNDEFINED, f = 0;
    int rc = mpi::request_get_status_any(theirs.size(), theirs.h.data(), &k, &f, status);
    if (k != MPI_UNDEFINED) {
      *index = theirs.at[static_cast<std::size_t>(k)];
      *flag = 1;
      return rc;
    }
    if (rc != MPI_SUCCESS) return rc;
    their_null = f;
  }
  if (engine_null && their_null) {
    *flag = 1;
    empty_status(status);
  }
  return MPI_SUCCESS;
}

int request_get_status_all(int count, const MPI_Request* requests, int* flag, MPI_Status* statuses) {
  const Entries e(count, requests);
  if (e.freed()) return freed_request("MPI_Request_get_status_all");
  Theirs theirs(e);
  progress();
  *flag = 0;
  for (auto& x : e)
    if (x.what == Entry::kEngine && !completed(x.r)) return MPI_SUCCESS;
  Outcome out;
  if (theirs.size() > 0) {
    std::vector<MPI_Status> sts(static_cast<std::size_t>(theirs.size()));
    int f = 0;
    int rc = mpi::request_get_status_all(theirs.size(), theirs.h.data(), &f, sts.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
    if (!f) return MPI_SUCCESS;
    for (std::size_t k = 0; k < sts.size(); ++k) {
      if (rc == MPI_SUCCESS) sts[k].MPI_ERROR = MPI_SUCCESS;
      out.failed(sts[k].MPI_ERROR, nullptr);
      if (statuses != MPI_STATUSES_IGNORE) statuses[theirs.at[k]] = sts[k];
    }
  }
  for (std::size_t i = 0; i < e.size(); ++i) {
    MPI_Status* st = at(statuses, static_cast<int>(i));
    if (e[i].what == Entry::kNull) {
      null_entry_status(st);
    } else if (e[i].what == Entry::kEngine) {
      const int rc = peek(e[i].r, st);
      if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = rc;
      out.failed(rc, e[i].r->comm);
    }
  }
  *flag = 1;
  return out.report("MPI_Request_get_status_all");
}

int request_get_status_some(int incount, const MPI_Request* requests, int* outcount, int* indices,
                            MPI_Status* statuses) {
  const Entries e(incount, requests);
  if (e.freed()) return freed_request("MPI_Request_get_status_some");
  Theirs theirs(e);
  progress();
  // Completed requests are only peeked at: they stay as they are.
  return some_pass(
      e, theirs,
      [&](std::size_t i, MPI_Status* st, Outcome& out) {
        const int rc = peek(e[i].r, st);
        if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = rc;
        out.failed(rc, e[i].r->comm);
      },
      [](int count, MPI_Request* h, int* got, int* idx, MPI_Status* sts) {
        return mpi::request_get_status_some(count, h, got, idx, sts);
      },
      nullptr, outcount, indices, statuses, "MPI_Request_get_status_some");
}
#endif

}  // namespace tsmpi::ranks::api

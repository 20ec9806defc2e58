// What the request calls of thread-ranks (completion.cpp, request_status.cpp,
// request_control.cpp) share: an entry of a request array as the engine sees it (null or
// inactive, the engine's, the MPI's, freed), the MPI's entries of an array handed to the MPI's
// own multiple-completion calls, and MPI-4.0 §3.7's statuses and error reporting.
#pragma once
#include <mpi.h>

#include <new>
#include <type_traits>
#include <vector>

#include "matching/mpi_calls.h"
#include "ranks/errors.h"
#include "ranks/requests.h"
#include "ranks/transport.h"

namespace tsmpi::ranks::api {

// What one entry of a request array is.
struct Entry {
  enum What { kNull, kEngine, kMpi, kFreed } what = kNull;
  Request* r = nullptr;        // kEngine; also an inactive persistent request (kNull)
  MPI_Request mpi = MPI_REQUEST_NULL;  // kMpi: the MPI's request (a promoted one's stand-in)
  bool stand_in = false;       // mpi stands for an engine request (the program holds the engine's handle)
};

inline Entry classify(MPI_Request h) {
  Entry e;
  if (h == MPI_REQUEST_NULL) return e;
  bool ours = false;
  if (requests_made()) e.r = find_request(handle_bits(h), &ours);
  if (!ours) {
    e.what = Entry::kMpi;
    e.mpi = h;
    return e;
  }
  if (!e.r) {
    e.what = Entry::kFreed;
    return e;
  }
  if (MPI_Request g = e.r->promoted.load(); g != MPI_REQUEST_NULL) {
    e.what = Entry::kMpi;
    e.mpi = g;
    e.stand_in = true;
    return e;
  }
  if (e.r->persistent && !e.r->active) return e;  // inactive: as MPI_REQUEST_NULL
  e.what = Entry::kEngine;
  return e;
}

// Every entry of an array, classified once. Arrays of up to kInline requests (what programs
// pass to every wait and test) live on the caller's stack: no allocation per call.
class Entries {
 public:
  static constexpr int kInline = 64;
  Entries(int count, const MPI_Request* requests) : n_(static_cast<std::size_t>(count > 0 ? count : 0)) {
    if (n_ > static_cast<std::size_t>(kInline)) {
      large_.resize(n_);
      data_ = large_.data();
    } else {
      data_ = reinterpret_cast<Entry*>(inline_);
    }
    for (std::size_t i = 0; i < n_; ++i) {
      new (&data_[i]) Entry(classify(requests[i]));
      freed_ = freed_ || data_[i].what == Entry::kFreed;
      mixed_ = mixed_ || data_[i].what == Entry::kMpi;
    }
  }
  Entries(const Entries&) = delete;
  Entries& operator=(const Entries&) = delete;
  std::size_t size() const { return n_; }
  const Entry& operator[](std::size_t i) const { return data_[i]; }
  const Entry& operator[](int i) const { return data_[static_cast<std::size_t>(i)]; }
  const Entry* begin() const { return data_; }
  const Entry* end() const { return data_ + n_; }
  bool freed() const { return freed_; }  // one is a freed request of the engine's
  bool mixed() const { return mixed_; }  // one is the MPI's

 private:
  static_assert(std::is_trivially_destructible_v<Entry>);
  alignas(Entry) unsigned char inline_[kInline * sizeof(Entry)];
  std::vector<Entry> large_;
  Entry* data_ = nullptr;
  std::size_t n_ = 0;
  bool freed_ = false;
  bool mixed_ = false;
};

// MPI-4.0 §3.7.3: the status of a null or inactive request.
inline void empty_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  const int keep = status->MPI_ERROR;
  set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  status->MPI_ERROR = keep;
}

// A null or inactive entry of a multiple-completion call: an empty status, MPI_ERROR success.
inline void null_entry_status(MPI_Status* status) {
  empty_status(status);
  if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_SUCCESS;
}

// Single-completion calls do not touch MPI_ERROR (MPI-4.0 §3.2.5).
struct KeepErrorField {
  MPI_Status* status;
  int value;
  explicit KeepErrorField(MPI_Status* s) : status(s), value(s != MPI_STATUS_IGNORE ? s->MPI_ERROR : 0) {}
  ~KeepErrorField() {
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = value;
  }
};

inline MPI_Status* at(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

inline int freed_request(const char* call) { return raise(nullptr, MPI_ERR_REQUEST, call); }

// Tests an MPI request of an array (a stand-in through its own variable, the program's entry
// becoming MPI_REQUEST_NULL with it).
inline int test_mpi(const Entry& e, MPI_Request* h, int* flag, MPI_Status* status) {
  if (!e.stand_in) return mpi::test(h, flag, status);
  MPI_Request g = e.mpi;
  int rc = mpi::test(&g, flag, status);
  if (*flag && g == MPI_REQUEST_NULL) *h = MPI_REQUEST_NULL;
  return rc;
}

inline bool done_now(Request* r) {
  if (completed(r)) return true;
  progress();
  return completed(r);
}

// Records a completed operation's error for the multiple-completion calls.
struct Outcome {
  int rc = MPI_SUCCESS;     // MPI_ERR_IN_STATUS once an operation failed
  Comm* comm = nullptr;     // whose handler hears of it (an engine request's), if any
  bool raised = false;      // an MPI request's failure, already raised by the MPI
  void failed(int err, Comm* c) {
    if (err == MPI_SUCCESS) return;
    rc = MPI_ERR_IN_STATUS;
    if (c && !comm) comm = c;
    if (!c) raised = true;
  }
  int report(const char* call) const {
    if (rc == MPI_SUCCESS) return rc;
    if (comm) return raise(comm, rc, call);
    return rc;
  }
};

// An engine request's completion inside a multiple-completion call: its status with MPI_ERROR.
inline int finish_into(Request* r, MPI_Request* h, MPI_Status* status, Outcome& out) {
  Comm* c = r->comm;
  int err = finish(r, h, status);
  if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = err;
  out.failed(err, c);
  return err;
}
inline int test_mpi_into(const Entry& e, MPI_Request* h, int* flag, MPI_Status* status, Outcome& out) {
  int rc = test_mpi(e, h, flag, status);
  if (rc != MPI_SUCCESS) *flag = 1;  // a failed request is complete (MPI-4.0 §9.3)
  if (*flag && status != MPI_STATUS_IGNORE) status->MPI_ERROR = rc;
  out.failed(rc, nullptr);
  return rc;
}

// The MPI's requests of an array, handed to the MPI's own multiple-completion calls (which know
// an inactive persistent request of theirs from a completed one; a test of one at a time does not).
struct Theirs {
  std::vector<MPI_Request> h;  // their handles (a stand-in's generalized request)
  std::vector<int> at;         // where each is in the program's array
  explicit Theirs(const Entries& e) {
    for (std::size_t i = 0; i < e.size(); ++i)
      if (e[i].what == Entry::kMpi) {
        h.push_back(e[i].mpi);
        at.push_back(static_cast<int>(i));
      }
  }
  int size() const { return static_cast<int>(h.size()); }
  // The program's entry after the MPI changed their k-th handle (freed: MPI_REQUEST_NULL).
  void write_back(int k, MPI_Request* requests, const Entries& e) const {
    const int i = at[static_cast<std::size_t>(k)];
    if (!e[static_cast<std::size_t>(i)].stand_in) requests[i] = h[static_cast<std::size_t>(k)];
    else if (h[static_cast<std::size_t>(k)] == MPI_REQUEST_NULL) requests[i] = MPI_REQUEST_NULL;
  }
  // One of the MPI's "some" calls (MPI_Testsome, MPI_Request_get_status_some) on their
  // requests: each one it reports appended at *n of indices and statuses (its MPI_ERROR set),
  // handles written back when `requests` is given. *reported: not all of theirs null or
  // inactive. An error that is not MPI_ERR_IN_STATUS is returned.
  template <class SomeCall>
  int some(SomeCall&& call, MPI_Request* requests, const Entries& e, int* n, int* indices,
           MPI_Status* statuses, Outcome& out, bool* reported) {
    *reported = false;
    if (h.empty()) return MPI_SUCCESS;
    std::vector<int> idx(h.size());
    std::vector<MPI_Status> sts(h.size());
    int got = 0;
    const int rc = call(size(), h.data(), &got, idx.data(), sts.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
    if (got == MPI_UNDEFINED) return MPI_SUCCESS;
    *reported = true;
    for (int k = 0; k < got; ++k) {
      const int j = idx[static_cast<std::size_t>(k)];
      if (requests) write_back(j, requests, e);
      MPI_Status& st = sts[static_cast<std::size_t>(k)];
      if (rc == MPI_SUCCESS) st.MPI_ERROR = MPI_SUCCESS;
      out.failed(st.MPI_ERROR, nullptr);
      if (statuses != MPI_STATUSES_IGNORE) statuses[*n] = st;
      indices[(*n)++] = at[static_cast<std::size_t>(j)];
    }
    return MPI_SUCCESS;
  }
};

// One pass of a "some" call (MPI_Waitsome, MPI_Testsome, MPI_Request_get_status_some): every
// completed engine request through engine(i, status, out) first (finishing or peeking), then the
// MPI's through `call` (Theirs::some; handles written back when `requests` is given).
// *outcount is MPI_UNDEFINED when every entry is null or inactive.
template <class Engine, class SomeCall>
int some_pass(const Entries& e, Theirs& theirs, Engine&& engine, SomeCall&& call, MPI_Request* requests,
              int* outcount, int* indices, MPI_Status* statuses, const char* name) {
  Outcome out;
  int n = 0;
  bool all_null = true;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i].what != Entry::kEngine) continue;
    all_null = false;
    if (!completed(e[i].r)) continue;
    engine(i, at(statuses, n), out);
    indices[n++] = static_cast<int>(i);
  }
  bool reported = false;
  const int rc = theirs.some(call, requests, e, &n, indices, statuses, out, &reported);
  if (rc != MPI_SUCCESS) {
    *outcount = n;
    return rc;
  }
  *outcount = all_null && !reported ? MPI_UNDEFINED : n;
  return out.report(name);
}

}  // namespace tsmpi::ranks::api

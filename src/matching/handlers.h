// What the probe policies do for each receive-side MPI function. The generator routes every
// function of the families probe, mprobe, recv, sendrecv, start, wait, test and cancel (and
// MPI_Request_free) here, by name without MPI_ and _c, whenever a policy is on
// (codegen/generate.py, MATCHED_FAMILIES). One template serves a function and its large-count
// form; each takes first the call as it would run without a policy.
#pragma once
#include <mpi.h>

#include <optional>
#include <utility>
#include <vector>

#include "locking/packed_copy.h"
#include "matching/match_stats.h"
#include "matching/mpi_calls.h"
#include "matching/persistent_recv.h"
#include "matching/policies.h"
#include "matching/reservations.h"

namespace tsmpi::matching {

#define TSMPI_POLICY_CALL(call)                                    \
  switch (g_policy) {                                              \
    case Policy::kMprobe: return mprobe_policy::call;              \
    case Policy::kLock2d: return lock2d_policy::call;              \
    default: return helper_policy::call;                           \
  }

// Handlers also run in serialize mode without a policy, for the receives from MPI_PROC_NULL
// below; everything else then goes straight to the original call.
inline bool policy_on() { return g_policy != Policy::kOff; }
// Under mprobe, a thread without reservations receives exactly as without a policy.
inline bool receives_as_without_policy() { return g_policy == Policy::kMprobe && !thread_has_reservations(); }

// A receive from MPI_PROC_NULL: serialize mode carries MPI_Recv out as MPI_Irecv + MPI_Test, and
// MPICH 4.0's MPI_Irecv from MPI_PROC_NULL reports source 0, tag 0. The status is the one MPI
// defines (source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0).
inline int from_proc_null(int rc, MPI_Status* status) {
  if (rc != MPI_SUCCESS || status == MPI_STATUS_IGNORE || !serial::enabled()) return rc;
  status->MPI_SOURCE = MPI_PROC_NULL;
  status->MPI_TAG = MPI_ANY_TAG;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  return rc;
}

// ---- probes --------------------------------------------------------------------------------
template <class O>
int probe_as_policy(O&& o, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL) return o();
  TSMPI_POLICY_CALL(probe(source, tag, comm, status))
}
template <class O>
int Probe(O&& o, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const int rc = probe_as_policy(o, source, tag, comm, status);
  if (TSMPI_UNLIKELY(checks::unordered::g_probes) && rc == MPI_SUCCESS)
    checks::unordered::probed(fn::MPI_Probe, comm, source, tag, status);
  return rc;
}
template <class O>
int iprobe_as_policy(O&& o, int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL) return o();
  TSMPI_POLICY_CALL(iprobe(source, tag, comm, flag, status))
}
template <class O>
int Iprobe(O&& o, int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const int rc = iprobe_as_policy(o, source, tag, comm, flag, status);
  if (TSMPI_UNLIKELY(checks::unordered::g_probes) && rc == MPI_SUCCESS && flag && *flag)
    checks::unordered::probed(fn::MPI_Iprobe, comm, source, tag, status);
  return rc;
}

// Checking mode's probe rule sees every receive with its pattern (checks/unordered_probes.cpp).
#define TSMPI_OBSERVE_RECEIVE(fn_id, comm, source, tag) \
  if (TSMPI_UNLIKELY(checks::unordered::g_probes)) checks::unordered::receiving(fn::fn_id, comm, source, tag)
template <class O>
int Mprobe(O&& o, int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL) return o();
  TSMPI_POLICY_CALL(mprobe(source, tag, comm, message, status))
}
template <class O>
int Improbe(O&& o, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL) return o();
  TSMPI_POLICY_CALL(improbe(source, tag, comm, flag, message, status))
}

// ---- receives ------------------------------------------------------------------------------
template <class O, class Count>
int Recv(O&& o, void* buf, Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  TSMPI_OBSERVE_RECEIVE(MPI_Recv, comm, source, tag);
  if (source == MPI_PROC_NULL) return from_proc_null(o(), status);
  if (!policy_on() || receives_as_without_policy()) return o();
  OriginalCall original(o);
  TSMPI_POLICY_CALL(recv(buffer(buf, count, type), source, tag, comm, status, original))
}
template <class O, class Count>
int Irecv(O&& o, void* buf, Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  TSMPI_OBSERVE_RECEIVE(MPI_Irecv, comm, source, tag);
  if (!policy_on() || receives_as_without_policy()) return o();
  if (source == MPI_PROC_NULL) return o();
  OriginalCall original(o);
  TSMPI_POLICY_CALL(irecv(buffer(buf, count, type), source, tag, comm, request, original))
}
template <class O, class Count>
int Recv_init(O&& o, void* buf, Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  int rc = o();
  if (rc == MPI_SUCCESS && source != MPI_PROC_NULL && policy_on())
    remember_persistent_recv(*request, PersistentRecv{buffer(buf, count, type), source, tag, comm});
  return rc;
}
// Partitioned receives are matched by the MPI itself.
template <class O, class... A>
int Precv_init(O&& o, A...) {
  return o();
}
// MPICH's stream receives name a source and destination stream index, which the policies' own
// receives cannot: the MPI matches them itself (docs/probe-policies.md).
template <class O, class... A>
int Stream_recv(O&& o, A...) {
  return o();
}
template <class O, class... A>
int Stream_irecv(O&& o, A...) {
  return o();
}

// ---- send-receive --------------------------------------------------------------------------
inline bool policy_takes_receive(MPI_Comm comm, int source, int tag) {
  TSMPI_POLICY_CALL(takes_receive(comm, source, tag))
}

template <class O, class Count>
int Sendrecv(O&& o, const void* sendbuf, Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void* recvbuf, Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status) {
  TSMPI_OBSERVE_RECEIVE(MPI_Sendrecv, comm, source, recvtag);
  if (source == MPI_PROC_NULL) return from_proc_null(o(), status);
  if (!policy_on() || !policy_takes_receive(comm, source, recvtag)) return o();
  TSMPI_POLICY_CALL(sendrecv(buffer(sendbuf, sendcount, sendtype), dest, sendtag,
                             buffer(recvbuf, recvcount, recvtype), source, recvtag, comm, status))
}

// A packed copy of what a send-receive-replace sends, made under serialize mode's lock; none to
// MPI_PROC_NULL.
template <class Count>
PackedCopy packed_send(const void* buf, Count count, MPI_Datatype type, int dest, MPI_Comm comm) {
  PackedCopy copy;
  if (dest != MPI_PROC_NULL) mpi::locked([&] { return (copy = pack_copy(buf, count, type, comm)).rc; });
  return copy;
}

template <class O, class Count>
int Sendrecv_replace(O&& o, void* buf, Count count, MPI_Datatype type, int dest, int sendtag, int source,
                     int recvtag, MPI_Comm comm, MPI_Status* status) {
  TSMPI_OBSERVE_RECEIVE(MPI_Sendrecv_replace, comm, source, recvtag);
  if (source == MPI_PROC_NULL) return from_proc_null(o(), status);
  // A negative count is refused by the MPI at once (its MPI_Pack_size may let it through).
  if (!policy_on() || count < 0 || !policy_takes_receive(comm, source, recvtag)) return o();
  // The packed copy is sent, so the receive may land in the buffer at any time.
  PackedCopy copy = packed_send(buf, count, type, dest, comm);
  if (copy.rc != MPI_SUCCESS) return copy.rc;
  Buffer send = buffer(copy.bytes.data(), static_cast<Count>(copy.size), MPI_PACKED);
  TSMPI_POLICY_CALL(sendrecv(send, dest, sendtag, buffer(buf, count, type), source, recvtag, comm, status))
}

template <class O, class Count>
int Isendrecv(O&& o, const void* sendbuf, Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
              void* recvbuf, Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Request* request) {
  TSMPI_OBSERVE_RECEIVE(MPI_Sendrecv, comm, source, recvtag);
  if (!policy_on() || source == MPI_PROC_NULL) return o();
  OriginalCall original(o);
  TSMPI_POLICY_CALL(isendrecv(buffer(sendbuf, sendcount, sendtype), dest, sendtag, buffer(recvbuf, recvcount, recvtype),
                              source, recvtag, comm, request, {}, original))
}
template <class O, class Count>
int Isendrecv_replace(O&& o, void* buf, Count count, MPI_Datatype type, int dest, int sendtag, int source,
                      int recvtag, MPI_Comm comm, MPI_Request* request) {
  TSMPI_OBSERVE_RECEIVE(MPI_Sendrecv_replace, comm, source, recvtag);
  if (!policy_on() || source == MPI_PROC_NULL) return o();
  OriginalCall original(o);
  Buffer in_place = buffer(buf, count, type);
  // helper, and mprobe for a message the thread probed, carry it out themselves; otherwise the MPI does.
  const bool by_tsmpi = g_policy == Policy::kHelper || (g_policy == Policy::kMprobe && mprobe_policy::takes_receive(comm, source, recvtag));
  if (!by_tsmpi) {
    TSMPI_POLICY_CALL(isendrecv(in_place, dest, sendtag, in_place, source, recvtag, comm, request, {}, original))
  }
  // tsmpi carries it out: it sends a packed copy, which it keeps until the send is done.
  PackedCopy copy = packed_send(buf, count, type, dest, comm);
  if (copy.rc != MPI_SUCCESS) return copy.rc;
  Buffer send = buffer(copy.bytes.data(), static_cast<Count>(copy.size), MPI_PACKED);
  return helper_policy::isendrecv(send, dest, sendtag, in_place, source, recvtag, comm, request, std::move(copy.bytes),
                                  original);
}

// ---- persistent requests -------------------------------------------------------------------
// Under mprobe a thread without reservations starts persistent receives as the MPI would.
inline bool starts_as_without_policy() { return !policy_on() || receives_as_without_policy(); }

inline int policy_start(MPI_Request* request, const PersistentRecv& p, const OriginalCall& original) {
  TSMPI_POLICY_CALL(start(request, p, original))
}

template <class O>
int Start(O&& o, MPI_Request* request) {
  if (starts_as_without_policy()) return o();
  std::optional<PersistentRecv> p = persistent_recv_of(*request);
  if (!p) return o();
  return policy_start(request, *p, OriginalCall(o));
}
template <class O>
int Startall(O&& o, int count, MPI_Request* requests) {
  if (starts_as_without_policy()) return o();
  // MPI_Startall is MPI_Start on each request in turn.
  for (int i = 0; i < count; ++i) {
    auto one = [&] { return mpi::start(&requests[i]); };
    std::optional<PersistentRecv> p = persistent_recv_of(requests[i]);
    int rc = p ? policy_start(&requests[i], *p, OriginalCall(one)) : one();
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}
template <class O>
int Request_free(O&& o, MPI_Request* request) {
  if (!policy_on()) return o();
  MPI_Request substitute = detach_substitute(*request);
  if (substitute != MPI_REQUEST_NULL) mpi::request_free(&substitute);  // completes on its own
  return o();
}

// ---- completion: look through to substitutes -----------------------------------------------
// Runs `call` on a copy of the array in which started persistent receives are replaced by their
// substitutes; copies back what the MPI wrote for the other requests, while a persistent
// request keeps its handle (it becomes inactive when its substitute completes). Without any
// substitute in flight (always, without a policy), the original call.
template <class O, class Call>
int through_substitutes(O&& o, int n, MPI_Request* requests, Call&& call) {
  if (!any_substitutes()) return o();
  std::vector<MPI_Request> copy(requests, requests + n);
  std::vector<unsigned char> substituted(n, 0);
  bool any = false;
  for (int i = 0; i < n; ++i) {
    copy[i] = substitute_of(requests[i]);
    substituted[i] = copy[i] != requests[i];
    any = any || substituted[i];
  }
  if (!any) return o();
  int rc = call(copy.data());
  for (int i = 0; i < n; ++i) {
    if (!substituted[i]) requests[i] = copy[i];
    else if (copy[i] == MPI_REQUEST_NULL) substitute_completed(requests[i]);
  }
  return rc;
}
template <class O>
int Cancel(O&& o, MPI_Request* request) {
  return through_substitutes(o, 1, request, [&](MPI_Request* r) { return mpi::cancel(r); });
}
template <class O>
int Wait(O&& o, MPI_Request* request, MPI_Status* status) {
  return through_substitutes(o, 1, request, [&](MPI_Request* r) { return mpi::wait(r, status); });
}
template <class O>
int Test(O&& o, MPI_Request* request, int* flag, MPI_Status* status) {
  return through_substitutes(o, 1, request, [&](MPI_Request* r) { return mpi::test(r, flag, status); });
}
template <class O>
int Request_get_status(O&& o, MPI_Request request, int* flag, MPI_Status* status) {
  return through_substitutes(o, 1, &request, [&](MPI_Request* r) { return mpi::request_get_status(*r, flag, status); });
}
template <class O>
int Waitall(O&& o, int n, MPI_Request* requests, MPI_Status* statuses) {
  return through_substitutes(o, n, requests, [&](MPI_Request* r) { return mpi::waitall(n, r, statuses); });
}
template <class O>
int Testall(O&& o, int n, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  return through_substitutes(o, n, requests, [&](MPI_Request* r) { return mpi::testall(n, r, flag, statuses); });
}
template <class O>
int Waitany(O&& o, int n, MPI_Request* requests, int* index, MPI_Status* status) {
  return through_substitutes(o, n, requests, [&](MPI_Request* r) { return mpi::waitany(n, r, index, status); });
}
template <class O>
int Testany(O&& o, int n, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  return through_substitutes(o, n, requests,
                             [&](MPI_Request* r) { return mpi::testany(n, r, index, flag, status); });
}
template <class O>
int Waitsome(O&& o, int n, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  return through_substitutes(o, n, requests,
                             [&](MPI_Request* r) { return mpi::waitsome(n, r, outcount, indices, statuses); });
}
template <class O>
int Testsome(O&& o, int n, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  return through_substitutes(o, n, requests,
                             [&](MPI_Request* r) { return mpi::testsome(n, r, outcount, indices, statuses); });
}

#if TSMPI_HAVE_MPI_4_1
// MPI 4.1's status queries of several requests: they neither complete nor free, so the
// substitutes are looked up in a copy and nothing is written back.
template <class O, class Call>
int looking_through(O&& o, int n, const MPI_Request* requests, Call&& call) {
  if (!any_substitutes()) return o();
  std::vector<MPI_Request> copy(requests, requests + n);
  bool any = false;
  for (auto& r : copy) {
    const MPI_Request s = substitute_of(r);
    any = any || s != r;
    r = s;
  }
  return any ? call(copy.data()) : o();
}
template <class O>
int Request_get_status_any(O&& o, int n, const MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  return looking_through(o, n, requests,
                         [&](const MPI_Request* r) { return mpi::request_get_status_any(n, r, index, flag, status); });
}
template <class O>
int Request_get_status_all(O&& o, int n, const MPI_Request* requests, int* flag, MPI_Status* statuses) {
  return looking_through(o, n, requests,
                         [&](const MPI_Request* r) { return mpi::request_get_status_all(n, r, flag, statuses); });
}
template <class O>
int Request_get_status_some(O&& o, int n, const MPI_Request* requests, int* outcount, int* indices,
                            MPI_Status* statuses) {
  return looking_through(o, n, requests, [&](const MPI_Request* r) {
    return mpi::request_get_status_some(n, r, outcount, indices, statuses);
  });
}
#endif

#undef TSMPI_POLICY_CALL

}  // namespace tsmpi::matching

// What the probe policies do for each receive-side MPI function. The generator routes every
// function of the families probe, mprobe, recv, sendrecv, start, wait, test and cancel (and
// MPI_Request_free) here, by name without MPI_ and _c, whenever a policy is on
// (codegen/generate.py, MATCHED_FAMILIES). One template serves a function and its large-count
// form; each takes first the call as it would run without a policy.
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

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
int Probe(O&& o, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL) return o();
  TSMPI_POLICY_CALL(probe(source, tag, comm, status))
}
template <class O>
int Iprobe(O&& o, int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL) return o();
  TSMPI_POLICY_CALL(iprobe(source, tag, comm, flag, status))
}
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
  if (source == MPI_PROC_NULL) return from_proc_null(o(), status);
  if (!policy_on() || receives_as_without_policy()) return o();
  OriginalCall original(o);
  TSMPI_POLICY_CALL(recv(buffer(buf, count, type), source, tag, comm, status, original))
}
template <class O, class Count>
int Irecv(O&& o, void* buf, Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
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

// ---- send-receive --------------------------------------------------------------------------
inline bool policy_takes_receive(MPI_Comm comm, int source, int tag) {
  TSMPI_POLICY_CALL(takes_receive(comm, source, tag))
}

template <class O, class Count>
int Sendrecv(O&& o, const void* sendbuf, Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void* recvbuf, Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status) {
  if (source == MPI_PROC_NULL) return from_proc_null(o(), status);
  if (!policy_on() || !policy_takes_receive(comm, source, recvtag)) return o();
  TSMPI_POLICY_CALL(sendrecv(buffer(sendbuf, sendcount, sendtype), dest, sendtag,
                             buffer(recvbuf, recvcount, recvtype), source, recvtag, comm, status))
}

// Sendrecv_replace sends a packed copy, so the receive may land in the buffer at any time.
struct PackedCopy {
  std::unique_ptr<std::vector<char>> bytes;
  Buffer buffer;
  int rc = MPI_SUCCESS;
};
template <class Count>
PackedCopy pack_copy(const void* buf, Count count, MPI_Datatype type, MPI_Comm comm) {
  PackedCopy p;
  p.bytes = std::make_unique<std::vector<char>>();
#if MPI_VERSION >= 4
  if constexpr (!std::is_same_v<Count, int>) {
    MPI_Count size = 0, position = 0;
    p.rc = mpi::locked([&] { return PMPI_Pack_size_c(count, type, comm, &size); });
    if (p.rc != MPI_SUCCESS) return p;
    p.bytes->resize(size > 0 ? size : 1);
    p.rc = mpi::locked([&] { return PMPI_Pack_c(buf, count, type, p.bytes->data(), size, &position, comm); });
    p.buffer = mpi::buffer(p.bytes->data(), position, MPI_PACKED);
    return p;
  }
#endif
  int size = 0, position = 0;
  p.rc = mpi::locked([&] { return PMPI_Pack_size(static_cast<int>(count), type, comm, &size); });
  if (p.rc != MPI_SUCCESS) return p;
  p.bytes->resize(size > 0 ? size : 1);
  p.rc = mpi::locked([&] {
    return PMPI_Pack(buf, static_cast<int>(count), type, p.bytes->data(), size, &position, comm);
  });
  p.buffer = mpi::buffer(p.bytes->data(), position, MPI_PACKED);
  return p;
}

template <class O, class Count>
int Sendrecv_replace(O&& o, void* buf, Count count, MPI_Datatype type, int dest, int sendtag, int source,
                     int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (source == MPI_PROC_NULL) return from_proc_null(o(), status);
  if (!policy_on() || !policy_takes_receive(comm, source, recvtag)) return o();
  PackedCopy copy = dest == MPI_PROC_NULL ? PackedCopy{} : pack_copy(buf, count, type, comm);
  if (copy.rc != MPI_SUCCESS) return copy.rc;
  Buffer recv = buffer(buf, count, type);
  TSMPI_POLICY_CALL(sendrecv(copy.buffer, dest, sendtag, recv, source, recvtag, comm, status))
}

template <class O, class Count>
int Isendrecv(O&& o, const void* sendbuf, Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
              void* recvbuf, Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Request* request) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL) return o();
  OriginalCall original(o);
  TSMPI_POLICY_CALL(isendrecv(buffer(sendbuf, sendcount, sendtype), dest, sendtag, buffer(recvbuf, recvcount, recvtype),
                              source, recvtag, comm, request, nullptr, original))
}
template <class O, class Count>
int Isendrecv_replace(O&& o, void* buf, Count count, MPI_Datatype type, int dest, int sendtag, int source,
                      int recvtag, MPI_Comm comm, MPI_Request* request) {
  if (!policy_on()) return o();
  if (source == MPI_PROC_NULL || g_policy != Policy::kHelper) {
    // Only the receive half's envelope matters to the other policies: no buffers are passed.
    OriginalCall original(o);
    TSMPI_POLICY_CALL(isendrecv(Buffer{}, dest, sendtag, Buffer{}, source, recvtag, comm, request, nullptr, original))
  }
  PackedCopy copy = dest == MPI_PROC_NULL ? PackedCopy{} : pack_copy(buf, count, type, comm);
  if (copy.rc != MPI_SUCCESS) return copy.rc;
  OriginalCall original(o);
  Buffer send = copy.buffer;
  void* owned = copy.bytes.release();  // the helper frees it when the send has completed
  return helper_policy::isendrecv(send, dest, sendtag, buffer(buf, count, type), source, recvtag, comm, request,
                                  owned, original);
}

// ---- persistent requests -------------------------------------------------------------------
template <class O>
int Start(O&& o, MPI_Request* request) {
  if (!policy_on()) return o();
  if (g_policy == Policy::kMprobe && !thread_has_reservations()) return o();
  std::optional<PersistentRecv> p = persistent_recv_of(*request);
  if (!p) return o();
  OriginalCall original(o);
  TSMPI_POLICY_CALL(start(request, *p, original))
}
template <class O>
int Startall(O&& o, int count, MPI_Request* requests) {
  if (!policy_on()) return o();
  if (g_policy == Policy::kMprobe && !thread_has_reservations()) return o();
  // MPI_Startall is MPI_Start on each request in turn.
  for (int i = 0; i < count; ++i) {
    std::optional<PersistentRecv> p = persistent_recv_of(requests[i]);
    int rc;
    if (!p) {
      rc = mpi::start(&requests[i]);
    } else {
      auto one = [&] { return mpi::start(&requests[i]); };
      OriginalCall original(one);
      switch (g_policy) {
        case Policy::kMprobe: rc = mprobe_policy::start(&requests[i], *p, original); break;
        case Policy::kLock2d: rc = lock2d_policy::start(&requests[i], *p, original); break;
        default: rc = helper_policy::start(&requests[i], *p, original); break;
      }
    }
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
template <class O>
int Cancel(O&& o, MPI_Request* request) {
  if (!policy_on()) return o();
  if (!any_substitutes()) return o();
  MPI_Request s = substitute_of(*request);
  if (s == *request) return o();
  return mpi::cancel(&s);
}

// ---- completion: look through to substitutes -----------------------------------------------
template <class O>
int Wait(O&& o, MPI_Request* request, MPI_Status* status) {
  if (!policy_on()) return o();
  if (!any_substitutes()) return o();
  MPI_Request s = substitute_of(*request);
  if (s == *request) return o();
  int rc = mpi::wait(&s, status);
  if (s == MPI_REQUEST_NULL) substitute_completed(*request);
  return rc;
}
template <class O>
int Test(O&& o, MPI_Request* request, int* flag, MPI_Status* status) {
  if (!policy_on()) return o();
  if (!any_substitutes()) return o();
  MPI_Request s = substitute_of(*request);
  if (s == *request) return o();
  int rc = mpi::test(&s, flag, status);
  if (s == MPI_REQUEST_NULL) substitute_completed(*request);
  return rc;
}
template <class O>
int Request_get_status(O&& o, MPI_Request request, int* flag, MPI_Status* status) {
  if (!policy_on()) return o();
  if (!any_substitutes()) return o();
  MPI_Request s = substitute_of(request);
  if (s == request) return o();
  return mpi::request_get_status(s, flag, status);
}

// Runs `call` on a copy of the array in which started persistent receives are replaced by their
// substitutes; copies back what the MPI wrote for the other requests, while a persistent
// request keeps its handle (it becomes inactive when its substitute completes).
template <class O, class Call>
int through_substitutes(O&& o, int n, MPI_Request* requests, Call&& call) {
  if (!policy_on()) return o();
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

#undef TSMPI_POLICY_CALL

}  // namespace tsmpi::matching

// The MPI calls the probe policies make, each correct in both modes: over an MPI at
// MPI_THREAD_MULTIPLE they are the PMPI calls themselves; in serialize mode a nonblocking call
// runs under serialize mode's lock and a blocking one is completed in short locked steps, so a
// policy never holds that lock while it waits (docs/serialize-mode.md). Overloads on the count
// type cover the MPI-4 large-count (_c) forms.
#pragma once
#include <mpi.h>

#include <type_traits>

#include "locking/progress.h"
#include "locking/serialize_lock.h"
#include "runtime/mpi_version.h"

namespace tsmpi::mpi {

// Runs a nonblocking PMPI call, under serialize mode's lock when that mode is on.
using serial::locked;

inline int wait(MPI_Request* r, MPI_Status* s) {
  return serial::enabled() ? serial::wait_request(r, s) : PMPI_Wait(r, s);
}
// Serialize mode: a blocking call as its nonblocking start and tests (serial::start_then_poll).
template <class Start>
int start_then_wait(Start&& start, MPI_Status* s) {
  MPI_Request r = MPI_REQUEST_NULL;
  return serial::start_then_poll(
      &r, start, [&](int* flag) { return PMPI_Test(&r, flag, s); }, [] {});
}
inline int test(MPI_Request* r, int* flag, MPI_Status* s) {
  return locked([&] { return PMPI_Test(r, flag, s); });
}
inline int waitall(int n, MPI_Request* r, MPI_Status* s) {
  if (!serial::enabled()) return PMPI_Waitall(n, r, s);
  return serial::poll_until_done([&](int* flag) { return PMPI_Testall(n, r, flag, s); });
}
inline int testall(int n, MPI_Request* r, int* flag, MPI_Status* s) {
  return locked([&] { return PMPI_Testall(n, r, flag, s); });
}
inline int waitany(int n, MPI_Request* r, int* index, MPI_Status* s) {
  if (!serial::enabled()) return PMPI_Waitany(n, r, index, s);
  return serial::poll_until_done([&](int* flag) { return PMPI_Testany(n, r, index, flag, s); });
}
inline int testany(int n, MPI_Request* r, int* index, int* flag, MPI_Status* s) {
  return locked([&] { return PMPI_Testany(n, r, index, flag, s); });
}
inline int waitsome(int n, MPI_Request* r, int* outcount, int* indices, MPI_Status* s) {
  if (!serial::enabled()) return PMPI_Waitsome(n, r, outcount, indices, s);
  return serial::poll_until_done([&](int* done) {
    int rc = PMPI_Testsome(n, r, outcount, indices, s);
    *done = *outcount != 0;
    return rc;
  });
}
inline int testsome(int n, MPI_Request* r, int* outcount, int* indices, MPI_Status* s) {
  return locked([&] { return PMPI_Testsome(n, r, outcount, indices, s); });
}
inline int request_get_status(MPI_Request r, int* flag, MPI_Status* s) {
  return locked([&] { return PMPI_Request_get_status(r, flag, s); });
}
#if TSMPI_HAVE_MPI_4_1
// MPI 4.1 declares the arrays const, MPICH 4.2's mpi.h does not: the casts serve both.
inline int request_get_status_any(int n, const MPI_Request* r, int* index, int* flag, MPI_Status* s) {
  return locked([&] { return PMPI_Request_get_status_any(n, const_cast<MPI_Request*>(r), index, flag, s); });
}
inline int request_get_status_all(int n, const MPI_Request* r, int* flag, MPI_Status* s) {
  return locked([&] { return PMPI_Request_get_status_all(n, const_cast<MPI_Request*>(r), flag, s); });
}
inline int request_get_status_some(int n, const MPI_Request* r, int* outcount, int* indices, MPI_Status* s) {
  return locked([&] { return PMPI_Request_get_status_some(n, const_cast<MPI_Request*>(r), outcount, indices, s); });
}
#endif
inline int cancel(MPI_Request* r) {
  return locked([&] { return PMPI_Cancel(r); });
}
inline int request_free(MPI_Request* r) {
  return locked([&] { return PMPI_Request_free(r); });
}
inline int start(MPI_Request* r) {
  return locked([&] { return PMPI_Start(r); });
}

inline int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* s) {
  return locked([&] { return PMPI_Iprobe(source, tag, comm, flag, s); });
}
inline int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* m, MPI_Status* s) {
  return locked([&] { return PMPI_Improbe(source, tag, comm, flag, m, s); });
}
inline int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* m, MPI_Status* s) {
  if (!serial::enabled()) return PMPI_Mprobe(source, tag, comm, m, s);
  return serial::poll_until_done([&](int* flag) { return PMPI_Improbe(source, tag, comm, flag, m, s); });
}

inline int irecv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Request* r) {
  return locked([&] { return PMPI_Irecv(buf, count, t, source, tag, comm, r); });
}
inline int isend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
  return locked([&] { return PMPI_Isend(buf, count, t, dest, tag, comm, r); });
}
inline int imrecv(void* buf, int count, MPI_Datatype t, MPI_Message* m, MPI_Request* r) {
  return locked([&] { return PMPI_Imrecv(buf, count, t, m, r); });
}
inline int mrecv(void* buf, int count, MPI_Datatype t, MPI_Message* m, MPI_Status* s) {
  if (!serial::enabled()) return PMPI_Mrecv(buf, count, t, m, s);
  return start_then_wait([&](MPI_Request* r) { return PMPI_Imrecv(buf, count, t, m, r); }, s);
}

#if TSMPI_HAVE_LARGE_COUNT
inline int irecv(void* buf, MPI_Count count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Request* r) {
  return locked([&] { return PMPI_Irecv_c(buf, count, t, source, tag, comm, r); });
}
inline int isend(const void* buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
  return locked([&] { return PMPI_Isend_c(buf, count, t, dest, tag, comm, r); });
}
inline int imrecv(void* buf, MPI_Count count, MPI_Datatype t, MPI_Message* m, MPI_Request* r) {
  return locked([&] { return PMPI_Imrecv_c(buf, count, t, m, r); });
}
inline int mrecv(void* buf, MPI_Count count, MPI_Datatype t, MPI_Message* m, MPI_Status* s) {
  if (!serial::enabled()) return PMPI_Mrecv_c(buf, count, t, m, s);
  return start_then_wait([&](MPI_Request* r) { return PMPI_Imrecv_c(buf, count, t, m, r); }, s);
}
#endif

// A receive or send buffer whatever the count type of the call it came from: large is set for
// the MPI-4 _c forms, whose count may exceed an int.
struct Buffer {
  void* buf = nullptr;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool large = false;
};
template <class Count>
Buffer buffer(const void* buf, Count count, MPI_Datatype type) {
  return {const_cast<void*>(buf), static_cast<MPI_Count>(count), type, !std::is_same_v<Count, int>};
}

inline int irecv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Request* r) {
#if TSMPI_HAVE_LARGE_COUNT
  if (b.large) return irecv(b.buf, b.count, b.type, source, tag, comm, r);
#endif
  return irecv(b.buf, static_cast<int>(b.count), b.type, source, tag, comm, r);
}
inline int recv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Status* s) {
  if (serial::enabled()) {
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = irecv(b, source, tag, comm, &r);
    return rc == MPI_SUCCESS ? wait(&r, s) : rc;
  }
#if TSMPI_HAVE_LARGE_COUNT
  if (b.large) return PMPI_Recv_c(b.buf, b.count, b.type, source, tag, comm, s);
#endif
  return PMPI_Recv(b.buf, static_cast<int>(b.count), b.type, source, tag, comm, s);
}
inline int isend(const Buffer& b, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
#if TSMPI_HAVE_LARGE_COUNT
  if (b.large) return isend(b.buf, b.count, b.type, dest, tag, comm, r);
#endif
  return isend(b.buf, static_cast<int>(b.count), b.type, dest, tag, comm, r);
}
inline int imrecv(const Buffer& b, MPI_Message* m, MPI_Request* r) {
#if TSMPI_HAVE_LARGE_COUNT
  if (b.large) return imrecv(b.buf, b.count, b.type, m, r);
#endif
  return imrecv(b.buf, static_cast<int>(b.count), b.type, m, r);
}
inline int mrecv(const Buffer& b, MPI_Message* m, MPI_Status* s) {
#if TSMPI_HAVE_LARGE_COUNT
  if (b.large) return mrecv(b.buf, b.count, b.type, m, s);
#endif
  return mrecv(b.buf, static_cast<int>(b.count), b.type, m, s);
}

// The send half of a send-receive whose receive `recv` is already posted: starts the send, then
// completes both (the receive first, as MPI_Sendrecv may not depend on the order).
inline int send_and_complete(const Buffer& send, int dest, int tag, MPI_Comm comm, MPI_Request* recv,
                             MPI_Status* recv_status) {
  MPI_Request sreq = MPI_REQUEST_NULL;
  int rc_send = isend(send, dest, tag, comm, &sreq);
  int rc = wait(recv, recv_status);
  if (rc_send == MPI_SUCCESS) rc_send = wait(&sreq, MPI_STATUS_IGNORE);
  return rc != MPI_SUCCESS ? rc : rc_send;
}

}  // namespace tsmpi::mpi

namespace tsmpi::matching {
using mpi::Buffer;
using mpi::buffer;
}  // namespace tsmpi::matching

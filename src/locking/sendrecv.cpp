// MPI_Sendrecv and MPI_Sendrecv_replace (and their large-count forms) in serialize mode: a
// receive and a send started under the lock and completed in short locked steps, never
// holding the lock while the peer is awaited. Open MPI 4.1 has no MPI_Isendrecv, and MPICH
// 4.0.2's reports a stale count in its status.
#include "runtime/mpi_version.h"
#include <type_traits>

#include "locking/packed_copy.h"
#include "locking/serialize.h"

namespace tsmpi::serial {
namespace {

int complete_both(MPI_Request requests[2], MPI_Comm comm, MPI_Status* status) {
  MPI_Status statuses[2];
  bool unraised = false;  // raised on the communicator, as MPI_Sendrecv does (completion_errors.h)
  int rc = poll_until_done([&](int* flag) {
    QuietErrors q;
    int r = PMPI_Testall(2, requests, flag, statuses);
    unraised = r != MPI_SUCCESS && q.unraised();
    return r;
  });
  if (status != MPI_STATUS_IGNORE) {
    const int error = status->MPI_ERROR;  // a single-completion call leaves it alone
    *status = statuses[0];
    status->MPI_ERROR = error;
  }
  if (rc == MPI_ERR_IN_STATUS)
    rc = statuses[0].MPI_ERROR != MPI_SUCCESS ? statuses[0].MPI_ERROR : statuses[1].MPI_ERROR;
  if (unraised) {
    Guard g;
    rc = raise_on(comm, rc);
  }
  return rc;
}

// The receive and the send started under the lock, then both completed in locked steps.
template <class Irecv, class Isend>
int sendrecv(Irecv&& irecv, Isend&& isend, MPI_Comm comm, MPI_Status* status) {
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  {
    Guard g;
    int rc = irecv(&requests[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = isend(&requests[1]);
    if (rc != MPI_SUCCESS) {
      PMPI_Cancel(&requests[0]);
      PMPI_Request_free(&requests[0]);
      return rc;
    }
  }
  return complete_both(requests, comm, status);
}

// The outgoing data is packed into a private buffer first, so the receive may overwrite buf.
template <class Count>
int sendrecv_replace(void* buf, Count count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                     MPI_Comm comm, MPI_Status* status) {
  if (count < 0) {
    // Erroneous, and refused by the MPI at once (its MPI_Pack_size may accept it): the call as
    // is reports the MPI's class through the communicator's handler.
    Guard g;
#if TSMPI_HAVE_LARGE_COUNT
    if constexpr (!std::is_same_v<Count, int>)
      return PMPI_Sendrecv_replace_c(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    else
#endif
      return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  }
  PackedCopy packed;
  if (dest != MPI_PROC_NULL) {
    Guard g;
    packed = pack_copy(buf, count, type, comm);
    if (packed.rc != MPI_SUCCESS) return packed.rc;
  }
#if TSMPI_HAVE_LARGE_COUNT
  if constexpr (!std::is_same_v<Count, int>)
    return sendrecv(
        [&](MPI_Request* r) { return PMPI_Irecv_c(buf, count, type, source, recvtag, comm, r); },
        [&](MPI_Request* r) { return PMPI_Isend_c(packed.bytes.data(), packed.size, MPI_PACKED, dest, sendtag, comm, r); },
        comm, status);
  else
#endif
    return sendrecv(
      [&](MPI_Request* r) { return PMPI_Irecv(buf, count, type, source, recvtag, comm, r); },
      [&](MPI_Request* r) {
        return PMPI_Isend(packed.bytes.data(), static_cast<int>(packed.size), MPI_PACKED, dest, sendtag, comm, r);
      },
      comm, status);
}

}  // namespace

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  return sendrecv(
      [&](MPI_Request* r) { return PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, r); },
      [&](MPI_Request* r) { return PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, r); }, comm, status);
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

#if TSMPI_HAVE_LARGE_COUNT
int MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Status* status) {
  return sendrecv(
      [&](MPI_Request* r) { return PMPI_Irecv_c(recvbuf, recvcount, recvtype, source, recvtag, comm, r); },
      [&](MPI_Request* r) { return PMPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, comm, r); }, comm, status);
}

int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                           int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}
#endif

}  // namespace tsmpi::serial

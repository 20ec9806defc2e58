// MPI_Sendrecv and MPI_Sendrecv_replace (and their large-count forms) in serialize mode: a
// receive and a send started under the lock and completed in short locked steps, never
// holding the lock while the peer is awaited. Open MPI 4.1 has no MPI_Isendrecv, and MPICH
// 4.0.2's reports a stale count in its status.
#include <vector>

#include "locking/serialize.h"

namespace tsmpi::serial {
namespace {

int complete_both(MPI_Request requests[2], MPI_Status* status) {
  MPI_Status statuses[2];
  int rc = poll_until_done([&](int* flag) { return PMPI_Testall(2, requests, flag, statuses); });
  if (status != MPI_STATUS_IGNORE) *status = statuses[0];
  if (rc == MPI_ERR_IN_STATUS)
    rc = statuses[0].MPI_ERROR != MPI_SUCCESS ? statuses[0].MPI_ERROR : statuses[1].MPI_ERROR;
  return rc;
}

// The receive and the send started under the lock, then both completed in locked steps.
template <class Irecv, class Isend>
int sendrecv(Irecv&& irecv, Isend&& isend, MPI_Status* status) {
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
  return complete_both(requests, status);
}

// The outgoing data is packed into a private buffer first, so the receive may overwrite buf.
// pack(std::vector<char>&, Count* bytes) packs the send data; Count is int, or MPI_Count for
// the large-count _c variants of MPI-4.
template <class Count, class Pack, class Irecv, class Isend>
int sendrecv_replace(int dest, Pack&& pack, Irecv&& irecv, Isend&& isend, MPI_Status* status) {
  std::vector<char> packed;
  Count bytes = 0;
  if (dest != MPI_PROC_NULL) {
    Guard g;
    int rc = pack(packed, &bytes);
    if (rc != MPI_SUCCESS) return rc;
  }
  return sendrecv(irecv, [&](MPI_Request* r) { return isend(packed.data(), bytes, r); }, status);
}

}  // namespace

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  return sendrecv(
      [&](MPI_Request* r) { return PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, r); },
      [&](MPI_Request* r) { return PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, r); }, status);
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace<int>(
      dest,
      [&](std::vector<char>& packed, int* bytes) {
        int size = 0;
        int rc = PMPI_Pack_size(count, datatype, comm, &size);
        if (rc != MPI_SUCCESS) return rc;
        packed.resize(static_cast<size_t>(size) + 1);
        *bytes = 0;
        return PMPI_Pack(buf, count, datatype, packed.data(), size, bytes, comm);
      },
      [&](MPI_Request* r) { return PMPI_Irecv(buf, count, datatype, source, recvtag, comm, r); },
      [&](void* data, int bytes, MPI_Request* r) {
        return PMPI_Isend(data, bytes, MPI_PACKED, dest, sendtag, comm, r);
      },
      status);
}

#if MPI_VERSION >= 4
int MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Status* status) {
  return sendrecv(
      [&](MPI_Request* r) { return PMPI_Irecv_c(recvbuf, recvcount, recvtype, source, recvtag, comm, r); },
      [&](MPI_Request* r) { return PMPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, comm, r); }, status);
}

int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                           int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace<MPI_Count>(
      dest,
      [&](std::vector<char>& packed, MPI_Count* bytes) {
        MPI_Count size = 0;
        int rc = PMPI_Pack_size_c(count, datatype, comm, &size);
        if (rc != MPI_SUCCESS) return rc;
        packed.resize(static_cast<size_t>(size) + 1);
        *bytes = 0;
        return PMPI_Pack_c(buf, count, datatype, packed.data(), size, bytes, comm);
      },
      [&](MPI_Request* r) { return PMPI_Irecv_c(buf, count, datatype, source, recvtag, comm, r); },
      [&](void* data, MPI_Count bytes, MPI_Request* r) {
        return PMPI_Isend_c(data, bytes, MPI_PACKED, dest, sendtag, comm, r);
      },
      status);
}
#endif

}  // namespace tsmpi::serial

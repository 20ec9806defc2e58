// MPI_Sendrecv and MPI_Sendrecv_replace in serialize mode on an MPI without MPI_Isendrecv
// (Open MPI 4.1): a receive and a send started under the lock and completed in short locked
// steps, never holding the lock while the peer is awaited.
#include <cstdlib>
#include <vector>

#include "locking/serialize.h"

namespace tsmpi::serial {
namespace {

int complete_both(MPI_Request requests[2], MPI_Status* status) {
  MPI_Status statuses[2];
  int rc = poll_until_done([&](int* flag) { return PMPI_Testall(2, requests, flag, statuses); });
  if (status != MPI_STATUS_IGNORE) *status = statuses[0];
  if (rc == MPI_ERR_IN_STATUS) rc = statuses[0].MPI_ERROR != MPI_SUCCESS ? statuses[0].MPI_ERROR : statuses[1].MPI_ERROR;
  return rc;
}

}  // namespace

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  {
    Guard g;
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[1]);
    if (rc != MPI_SUCCESS) {
      PMPI_Cancel(&requests[0]);
      PMPI_Request_free(&requests[0]);
      return rc;
    }
  }
  return complete_both(requests, status);
}

// The outgoing data is packed into a private buffer first, so the receive may overwrite buf.
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status* status) {
  std::vector<char> packed;
  int position = 0;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  {
    Guard g;
    int bytes = 0;
    int rc = PMPI_Pack_size(count, datatype, comm, &bytes);
    if (rc != MPI_SUCCESS) return rc;
    packed.resize(static_cast<size_t>(bytes) + 1);
    if (dest != MPI_PROC_NULL) {
      rc = PMPI_Pack(buf, count, datatype, packed.data(), bytes, &position, comm);
      if (rc != MPI_SUCCESS) return rc;
    }
    rc = PMPI_Irecv(buf, count, datatype, source, recvtag, comm, &requests[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(packed.data(), position, MPI_PACKED, dest, sendtag, comm, &requests[1]);
    if (rc != MPI_SUCCESS) {
      PMPI_Cancel(&requests[0]);
      PMPI_Request_free(&requests[0]);
      return rc;
    }
  }
  return complete_both(requests, status);
}

}  // namespace tsmpi::serial

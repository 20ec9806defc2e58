#include "matching/matched_receive.h"

#include <vector>

namespace tsmpi::matching {

#ifdef MPICH
namespace {
MPI_Count bytes_of(const MPI_Status& probed) {
  MPI_Count n = 0;
  mpi::locked([&] { return PMPI_Get_count_c(&probed, MPI_BYTE, &n); });
  return n;
}
MPI_Count capacity_of(const Buffer& b) {
  MPI_Count size = 0;
  mpi::locked([&] { return PMPI_Type_size_c(b.type, &size); });
  return size * b.count;
}
}  // namespace

bool truncation_misraised(const Buffer& b, const MPI_Status& probed) {
  return bytes_of(probed) > capacity_of(b);
}

int receive_matched(const Buffer& b, MPI_Message* message, const MPI_Status& probed, MPI_Comm comm,
                    MPI_Status* status) {
  if (!truncation_misraised(b, probed)) return mpi::mrecv(b, message, status);
  std::vector<char> whole(static_cast<std::size_t>(bytes_of(probed)));
  MPI_Status got{};
  int rc = mpi::mrecv(whole.data(), static_cast<MPI_Count>(whole.size()), MPI_BYTE, message, &got);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Count position = 0;
  mpi::locked([&] {
    return PMPI_Unpack_c(whole.data(), static_cast<MPI_Count>(whole.size()), &position, b.buf, b.count, b.type, comm);
  });
  if (status != MPI_STATUS_IGNORE) {
    const int error = status->MPI_ERROR;  // a single-completion call leaves it alone
    *status = got;
    status->MPI_ERROR = error;
    PMPI_Status_set_elements_x(status, MPI_BYTE, position);
  }
  mpi::locked([&] { return PMPI_Comm_call_errhandler(comm, MPI_ERR_TRUNCATE); });
  return MPI_ERR_TRUNCATE;
}
#else
bool truncation_misraised(const Buffer&, const MPI_Status&) { return false; }

int receive_matched(const Buffer& b, MPI_Message* message, const MPI_Status&, MPI_Comm, MPI_Status* status) {
  return mpi::mrecv(b, message, status);
}
#endif

}  // namespace tsmpi::matching

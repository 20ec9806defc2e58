#include "matching/matched_receive.h"

#include <vector>

namespace tsmpi::matching {

#ifdef MPICH
namespace {
// Asked at every matched receive, so read where MPICH keeps them rather than asked through two
// MPI calls (a tenth of the mprobe policy's cost per message): a status's byte count is split
// over count_lo and count_hi_and_cancelled (MPICH's MPIR_STATUS_GET_COUNT), and a builtin
// datatype's handle (kind bits 01) carries its size in bits 8-15 (MPIR_Datatype_get_basic_size).
MPI_Count bytes_of(const MPI_Status& probed) {
  return (static_cast<MPI_Count>(static_cast<unsigned>(probed.count_hi_and_cancelled) >> 1) << 32) +
         static_cast<MPI_Count>(static_cast<unsigned>(probed.count_lo));
}
MPI_Count capacity_of(const Buffer& b) {
  const auto handle = static_cast<unsigned>(b.type);
  if ((handle >> 30) == 1) return static_cast<MPI_Count>((handle >> 8) & 0xff) * b.count;
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

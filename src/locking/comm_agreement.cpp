#include "locking/comm_agreement.h"

#include "runtime/mpi_version.h"

namespace tsmpi::serial {

int CommAgreement::start(MPI_Comm comm, bool mine, bool fault_tolerant) {
  comm_ = comm;
#if TSMPI_HAVE_ULFM
  if (fault_tolerant) {  // the AND over every process of the communicator, both groups of an intercommunicator
    inter_ = false;
    round_ = 1;
    result_ = mine ? 1 : 0;
    return PMPIX_Comm_iagree(comm_, &result_, &request_);
  }
#else
  (void)fault_tolerant;
#endif
  int inter = 0;
  int rc = PMPI_Comm_test_inter(comm, &inter);
  if (rc != MPI_SUCCESS) return rc;
  inter_ = inter != 0;
  round_ = 1;
  send_ = mine ? 1 : 0;
  return PMPI_Iallreduce(&send_, &result_, 1, MPI_INT, MPI_BAND, comm_, &request_);
}

int CommAgreement::test(bool* done, bool* all) {
  int flag = 0;
  *done = false;
  int rc = PMPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS || !flag) return rc;
  if (inter_ && round_ == 1) {  // the other group's AND: fold in this group's
    round_ = 2;
    send_ = send_ & result_;
    return PMPI_Iallreduce(&send_, &result_, 1, MPI_INT, MPI_BAND, comm_, &request_);
  }
  *done = true;
  *all = result_ != 0;
  return MPI_SUCCESS;
}

}  // namespace tsmpi::serial

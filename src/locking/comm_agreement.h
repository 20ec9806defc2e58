// An agreement among a communicator's processes, nonblocking: the AND of one flag, by
// MPI_Iallreduce. On an intercommunicator MPI_Iallreduce gives each process the other group's
// AND, so a second round, which every process enters only after its first completed, folds in
// its own group's: both groups then decide alike, and a process whose agreement completed knows
// that every process of both groups has started it. Used by admission (admission.cpp: presence
// and vote, waited for by the calling thread) and by the nonblocking constructors
// (creation_in_flight.cpp: progressed by whichever thread holds the lock). Under the lock.
#pragma once
#include <mpi.h>

namespace tsmpi::serial {

class CommAgreement {
 public:
  // Starts the agreement on `mine`; the MPI's error if it cannot. `fault_tolerant`: by ULFM's
  // MPIX_Comm_iagree, which also completes on a revoked communicator (for MPIX_Comm_shrink,
  // made on revoked communicators; every process makes the same call, so all choose alike).
  int start(MPI_Comm comm, bool mine, bool fault_tolerant = false);
  // Tests it once: *done once it completed, then *all is the AND over every process.
  int test(bool* done, bool* all);

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool inter_ = false;
  int round_ = 0;
  int send_ = 0, result_ = 0;  // the MPI reads and writes these until the round completes
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace tsmpi::serial

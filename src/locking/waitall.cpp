// MPI_Waitall in serialize mode. On MPICH 4.0 each request is tested on its own with MPI_Test in
// the locked steps of the wait room, not with MPI_Testall: MPICH 4.0.2's MPI_Testall mishandles
// persistent collective requests (MPI_ERR_PENDING, wrong results, requests left active) and
// partitioned ones (MPI_ERR_IN_STATUS without an error) even natively, while its MPI_Wait and
// MPI_Test are right; its MPI_Waitall, which a thread-safe MPI would use here, is right too.
// The tests' errors are then raised as MPICH's MPI_Waitall raises them: MPI_ERR_IN_STATUS on
// MPI_COMM_WORLD (completion_errors.h). MPICH 4.2's MPI_Testall still does (4.2.1 measured), and
// its MPI_Test raises on the request's communicator: there each request is tested as an
// MPI_Testall of one. Open MPI's MPI_Testall is right: it is polled.
#include <vector>

#include "runtime/mpi_version.h"

#include "locking/serialize.h"

namespace tsmpi::serial {

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (count <= 0 || requests == nullptr) {  // nothing to wait for, or an error the MPI reports
    Guard g;
    return PMPI_Waitall(count, requests, statuses);
  }
#ifndef MPICH
  return poll_until_done([&](int* all) { return PMPI_Testall(count, requests, all, statuses); });
#else
  bool unraised = false;
  std::vector<unsigned char> done(static_cast<std::size_t>(count), 0);
  int left = count, failed = -1, error = MPI_SUCCESS;
  int rc = poll_until_done([&](int* all) {
    for (int i = 0; i < count && failed < 0; ++i) {
      if (done[i]) continue;
      int flag = 0;
      MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
      QuietErrors q;
#if TSMPI_TEST_RAISES_ON_WORLD
      int r = PMPI_Test(&requests[i], &flag, st);
#else
      // MPICH 4.2's MPI_Test raises on the request's communicator: one request's MPI_Testall
      // raises on world, where the quiet errors keep it.
      MPI_Status one;
      int r = PMPI_Testall(1, &requests[i], &flag, &one);
      if (r == MPI_ERR_IN_STATUS) r = one.MPI_ERROR;
      if (st != MPI_STATUS_IGNORE && (flag || r != MPI_SUCCESS)) *st = one;
#endif
      unraised = unraised || (r != MPI_SUCCESS && q.unraised());
      if (r != MPI_SUCCESS) {  // that request is over, with an error
        failed = i;
        error = r;
      } else if (flag) {
        done[i] = 1;
        --left;
      }
    }
    *all = failed >= 0 || left == 0;
    return MPI_SUCCESS;
  });
  if (rc != MPI_SUCCESS || failed < 0) return rc;  // statuses' MPI_ERROR untouched on success
  // As MPI_Waitall reports an error: MPI_ERR_IN_STATUS, the failed request's error in its
  // status, MPI_ERR_PENDING for those not completed (they stay active), success for the others.
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < count; ++i)
      statuses[i].MPI_ERROR = i == failed ? error : done[i] ? MPI_SUCCESS : MPI_ERR_PENDING;
  if (!unraised) return MPI_ERR_IN_STATUS;
  Guard g;
  return raise_on(MPI_COMM_WORLD, MPI_ERR_IN_STATUS);
#endif
}

}  // namespace tsmpi::serial

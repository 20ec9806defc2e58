// Completing a blocking operation in short locked steps: the lock is held for one test at a
// time and released while the thread backs off, so a thread blocked in MPI never stops the
// other threads of its process (MPI-3.1 §12.4.1; seed 000 Fig. 2).
#pragma once
#include <mpi.h>

#include "locking/backoff.h"
#include "locking/serialize_lock.h"

namespace tsmpi::serial {

// Calls test(&flag) under the lock until it sets flag or fails.
template <class Test>
int poll_until_done(Test&& test) {
  Backoff backoff;
  while (true) {
    int flag = 0, rc;
    {
      Guard g;
      rc = test(&flag);
    }
    if (rc != MPI_SUCCESS || flag) return rc;
    backoff.pause();
  }
}

inline int wait_request(MPI_Request* request, MPI_Status* status) {
  return poll_until_done([&](int* flag) { return PMPI_Test(request, flag, status); });
}

}  // namespace tsmpi::serial

// Completing a blocking operation in serialize mode without holding the lock while blocked
// (MPI-3.1 §12.4.1; seed 000 Fig. 2): the operation's test is run under the lock by one waiting
// thread for all waiting threads, and released between passes (src/locking/wait_room.h).
#pragma once
#include <mpi.h>

#include <type_traits>

#include "locking/serialize_lock.h"
#include "locking/wait_room.h"

namespace tsmpi::serial {

// Calls test(&flag) under the lock until it sets flag or fails; returns its result.
template <class Test>
int poll_until_done(Test&& test) {
  using T = std::remove_reference_t<Test>;
  Waiter w;
  w.test = [](void* context, int* flag) { return (*static_cast<T*>(context))(flag); };
  w.context = const_cast<void*>(static_cast<const void*>(&test));
  return wait_in_room(w);
}

inline int wait_request(MPI_Request* request, MPI_Status* status) {
  return poll_until_done([&](int* flag) { return PMPI_Test(request, flag, status); });
}

}  // namespace tsmpi::serial

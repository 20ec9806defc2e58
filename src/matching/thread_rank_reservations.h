// The probe policies for MPI processes that several threads act as (address spaces, src/ranks/
// address_space.h): on their communicators the thread-rank engine carries out every call, so a
// probe and the receive that follows it are made atomic per thread here, the way the mprobe
// policy does it in the MPI (docs/probe-policies.md): the probe takes the message out of the
// rank's mailbox and reserves it for the probing thread, whose next receive that accepts it
// takes it. Every policy but `off` does this on thread-rank communicators.
#pragma once
#include <mpi.h>

namespace tsmpi::matching::thread_ranks {

// The calling thread has reservations (one thread-local load).
bool any();
// The earliest reservation of the calling thread on comm that a receive (source, tag) accepts,
// or nullptr; *status is its status.
void* find(const void* comm, int source, int tag, MPI_Status* status);
// The same, removed from the thread's list.
void* take(const void* comm, int source, int tag, MPI_Status* status);
// The calling thread has probed `message` (source and tag in status) on comm.
void reserve(const void* comm, void* message, const MPI_Status& status);

}  // namespace tsmpi::matching::thread_ranks

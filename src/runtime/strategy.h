// What serialize mode does for a function, derived by the generator from its table row and
// the shape of its nonblocking counterpart (docs/serialize-mode.md).
#pragma once
#include <cstdint>

namespace tsmpi {

enum class Strategy : std::uint8_t {
  kRuntime,         // init/finalize/thread-level handlers
  kUnlocked,        // category None (and MPI_Abort): called without tsmpi's lock
  kLocked,          // nonblocking: called under the lock
  kStartWait,       // blocking: its I-form started under the lock, then completed in short locked tests
  kPoll,            // blocking: its polling form (Test, Iprobe, Win_test) called in short locked steps
  kPollSome,        // MPI_Waitsome: MPI_Testsome in short locked steps until something completes
  kHandler,         // blocking with no counterpart in this MPI, carried out by src/locking code
  kAdmitted,        // blocking collective with no counterpart: admission protocol, then under the lock
  kBlockingLocked,  // blocking, not collective, no counterpart (Win_lock, Buffer_detach): under the lock
  // Communicator creation: the MPI's own context-id agreement couples all creations of a
  // process, so each holds the process's right to enter from start to completion.
  kAdmittedStartWait,  // Comm_dup: admission, then Comm_idup completed in locked steps
  kCreationInFlight,   // Comm_idup: returns at once; the MPI gets it once every member called it
                       // and its parent's earlier collectives went first (collective_sequence.h)
  kOwnedLocked,          // Comm_join, *_from_group(s): the right to enter taken locally, then under the lock
  kAdmittedGroup,        // Comm_create_group: admission agreed among the group's members only
  kAdmittedBridge,       // Intercomm_create: admission agreed by both groups, through their leaders
  // A nonblocking collective on a communicator: under the lock at once, or, while a nonblocking
  // constructor holds the communicator, after it in call order (collective_sequence.h).
  kSequenced,
};

const char* strategy_name(Strategy s);

}  // namespace tsmpi

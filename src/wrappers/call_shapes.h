// How a generated wrapper hands serialize mode the nonblocking form of a blocking call.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>

namespace tsmpi {

struct NoExtra {};

// MPI_Recv(..., status) = MPI_Irecv(..., &request) then completion of request into status.
template <class Start>
struct StartWait {
  Start start;  // int(MPI_Request*)
  MPI_Status* status;
};
template <class Start> StartWait(Start, MPI_Status*) -> StartWait<Start>;

// MPI_Wait(request, status) = MPI_Test(request, &flag, status) until flag.
template <class Test>
struct Poll {
  Test test;  // int(int* flag)
};
template <class Test> Poll(Test) -> Poll<Test>;

// MPI_Waitsome = MPI_Testsome until *outcount != 0 (MPI_UNDEFINED included).
template <class Test>
struct PollSome {
  Test test;  // int()
  int* outcount;
};
template <class Test> PollSome(Test, int*) -> PollSome<Test>;

// A call serialize mode may give the MPI after it returned (locking/collective_sequence.h): its
// start with the arguments captured by value, where its request goes, and which of its handle
// arguments (indices into CallArgs::handles: datatypes, info objects) a later start reads from
// copies, as the application may free them once the call returned.
template <class Start>
struct Sequenced {
  Start start;  // int(const serial::Held&, MPI_Request*)
  MPI_Request* request;
  std::array<std::int8_t, 4> held;
  int held_count;
};
template <class Start> Sequenced(Start, MPI_Request*, std::array<std::int8_t, 4>, int) -> Sequenced<Start>;

// The same for a nonblocking communicator constructor, which also writes newcomm.
template <class Start>
struct SequencedCreation {
  Start start;  // int(const serial::Held&, MPI_Comm* newcomm, MPI_Request*)
  MPI_Comm* newcomm;
  MPI_Request* request;
  std::array<std::int8_t, 4> held;
  int held_count;
};
template <class Start>
SequencedCreation(Start, MPI_Comm*, MPI_Request*, std::array<std::int8_t, 4>, int) -> SequencedCreation<Start>;

// MPI_Comm_create_group's group and tag: admission is agreed among the group's members.
struct GroupArgs {
  MPI_Group group;
  int tag;
};

// MPI_Intercomm_create's leaders: admission is agreed by both groups through them.
struct BridgeArgs {
  int local_leader;
  MPI_Comm peer_comm;
  int remote_leader;
  int tag;
};

// Carried out by hand-written code in src/locking/ when the MPI has no counterpart.
template <class Fn>
struct Handler {
  Fn fn;  // int()
};
template <class Fn> Handler(Fn) -> Handler<Fn>;

}  // namespace tsmpi

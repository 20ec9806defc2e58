// Where serialize mode must not use the MPI's nonblocking form of a blocking call, because the
// MPI gets that form wrong although the blocking one is right (found by tests/coverage); which
// calls its admission must agree on by ULFM's fault-tolerant agreement; which stream a blocking
// call's nonblocking form must progress.
#include <array>
#include <initializer_list>
#include <string_view>
#include <unordered_map>

#include "locking/serialize.h"
#include "runtime/function_table.h"
#include "runtime/mpi_version.h"

namespace tsmpi::serial {

bool raises_on_comm(fn::Id id) {
#if TSMPI_TEST_RAISES_ON_WORLD
  static const std::array<bool, fn::kCount> receives = [] {
    std::array<bool, fn::kCount> a{};
    for (int i = 0; i < fn::kCount; ++i)
      a[i] = kFunctions[i].family == Family::kRecv && kFunctions[i].blocking &&
             std::string_view(kFunctions[i].handles).ends_with("Comm");
    return a;
  }();
  return receives[id];
#else
  (void)id;
  return false;
#endif
}

namespace {
std::array<bool, fn::kCount> named(std::initializer_list<std::string_view> names) {
  std::array<bool, fn::kCount> a{};
  for (int i = 0; i < fn::kCount; ++i)
    for (std::string_view n : names) a[i] = a[i] || n == kFunctions[i].name;
  return a;
}
}  // namespace

bool raises_on_world(fn::Id id) {
#if TSMPI_MRECV_RAISES_ON_WORLD
  static const std::array<bool, fn::kCount> mrecv = named({"MPI_Mrecv", "MPI_Mrecv_c"});
  return mrecv[id];
#else
  (void)id;
  return false;
#endif
}

bool needs_blocking_form(fn::Id id, const CallArgs& args, MPI_Comm comm) {
  // MPICH 4.0.2's MPI_Ialltoallw with MPI_IN_PLACE and receive types that differ per peer
  // truncates or hangs; its MPI_Alltoallw does not.
  static const std::array<bool, fn::kCount> alltoallw = named({"MPI_Alltoallw", "MPI_Alltoallw_c"});
  if (alltoallw[id]) {
    for (int i = 0; i < args.handle_count; ++i)
      if (args.handles[i].ignored & Ignored::kInPlace) return args.handles[i].in_place == MPI_IN_PLACE;
    return false;
  }
#ifdef OPEN_MPI
  // Open MPI 4.1's MPI_Ibarrier on an intercommunicator lets a process that is not rank 0 of its
  // group go on before the other group's such processes have called it (its MPI_Barrier waits
  // for them, as the standard requires): tests/mpi/intercomm_barrier.c.
  static const std::array<bool, fn::kCount> barrier = named({"MPI_Barrier"});
  if (barrier[id]) {
    int inter = 0;
    Guard g;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter;
  }
#else
  (void)comm;
#endif
  return false;
}

bool neighborhood(fn::Id id) {
  static const std::array<bool, fn::kCount> neighbor = [] {
    std::array<bool, fn::kCount> a{};
    for (int i = 0; i < fn::kCount; ++i) a[i] = std::string_view(kFunctions[i].name).starts_with("MPI_Neighbor_");
    return a;
  }();
  return neighbor[id];
}

bool has_topology(MPI_Comm comm) {
  int kind = MPI_UNDEFINED;
  if (comm == MPI_COMM_NULL) return false;
  Guard g;
  return PMPI_Topo_test(comm, &kind) == MPI_SUCCESS && kind != MPI_UNDEFINED;
}

// Open MPI 4.1 numbers the nonblocking collectives of a communicator in each process (libnbc's
// tag), but its MPI_Ibcast and MPI_Ireduce return before that numbering when the count is 0.
// On an intercommunicator the processes of the root's group other than the root pass
// MPI_PROC_NULL, and their count is not significant: a program may pass 0 while the others pass
// more. The blocking forms tolerate this; started as MPI_Ibcast/MPI_Ireduce, that process
// skips a number and its next nonblocking collective on the communicator never matches. Such a
// process exchanges nothing, so it is started as an MPI_Ibcast of one element to nobody, which
// takes its number as the other processes' calls do. MPICH 4.2 does the same (4.2.1 measured:
// tests/coverage/coll_intercomm_procnull.c hangs in serialize mode without it; 4.0 did not).
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
#define TSMPI_PROCNULL_LOSES_STEP 1
#else
#define TSMPI_PROCNULL_LOSES_STEP 0
#endif
bool procnull_needs_step(const CallArgs& args) {
#if defined(OPEN_MPI) || TSMPI_PROCNULL_LOSES_STEP
  // On an intracommunicator MPI_PROC_NULL is an invalid root: the application's call reports it.
  int inter = 0;
  if (args.root_comm == MPI_COMM_NULL) return false;
  Guard g;
  return PMPI_Comm_test_inter(args.root_comm, &inter) == MPI_SUCCESS && inter;
#else
  (void)args;
  return false;
#endif
}

int ProcNullStep::operator()(MPI_Request* request) const {
  static int nothing = 0;
  return PMPI_Ibcast(&nothing, 1, MPI_INT, MPI_PROC_NULL, comm, request);
}

bool fault_tolerant(fn::Id id) {
#if TSMPI_HAVE_ULFM
  // MPIX_Comm_shrink is made on revoked communicators (after a failure), where an MPI_Iallreduce
  // fails with MPIX_ERR_REVOKED: its admission agrees with MPIX_Comm_iagree.
  static const std::array<bool, fn::kCount> shrink = named({"MPIX_Comm_shrink"});
  return shrink[id];
#else
  (void)id;
  return false;
#endif
}

bool revoked(const HandleRef& in) {
#if TSMPI_HAVE_ULFM
  if (in.kind != Kind::Comm) return false;
  const MPI_Comm comm = handle_from_bits<MPI_Comm>(in.bits);
  int flag = 0;
  Guard g;
  return comm != MPI_COMM_NULL && PMPIX_Comm_is_revoked(comm, &flag) == MPI_SUCCESS && flag;
#else
  (void)in;
  return false;
#endif
}

#if TSMPI_HAVE_STREAMS
namespace {
// stream communicator -> the stream its collectives use (index 0: a multiplex communicator's
// first local stream). Under the lock.
std::unordered_map<std::uintptr_t, MPIX_Stream>& g_stream_comms = *new std::unordered_map<std::uintptr_t, MPIX_Stream>;
}  // namespace
#endif

void note_stream_comm(fn::Id id, const CallArgs& args, const Objects& objects, int rc) {
#if TSMPI_HAVE_STREAMS
  static const std::array<bool, fn::kCount> makers =
      named({"MPIX_Stream_comm_create", "MPIX_Stream_comm_create_multiplex"});
  if (!makers[id] || rc != MPI_SUCCESS) return;
  const std::uintptr_t comm = objects.out.value();
  if (handle_from_bits<MPI_Comm>(comm) == MPI_COMM_NULL) return;
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind != Kind::Stream || h.count < 1) continue;
    const std::uintptr_t stream = read_handle(Kind::Stream, h.where, 0);
    if (stream != null_handle(Kind::Stream)) g_stream_comms[comm] = handle_from_bits<MPIX_Stream>(stream);
    return;
  }
#else
  (void)id, (void)args, (void)objects, (void)rc;
#endif
}

void forget_stream_comm(std::uintptr_t comm) {
#if TSMPI_HAVE_STREAMS
  if (!g_stream_comms.empty()) g_stream_comms.erase(comm);
#else
  (void)comm;
#endif
}

StreamProgress stream_progress_for(const HandleRef& in) {
#if TSMPI_HAVE_STREAMS
  if (in.kind != Kind::Comm || g_stream_comms.empty()) return {};
  auto it = g_stream_comms.find(in.bits);
  return it == g_stream_comms.end() ? StreamProgress{} : StreamProgress{true, it->second};
#else
  (void)in;
  return {};
#endif
}

void StreamProgress::operator()() const {
#if TSMPI_HAVE_STREAMS
  if (on) {
    MPIX_Stream s = stream;  // MPIX_Stream_progress takes it by value
    PMPIX_Stream_progress(s);
  }
#endif
}

}  // namespace tsmpi::serial

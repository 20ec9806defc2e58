// Communicators of thread-ranks. A family is what one MPIX_Threadcomm_init made: the processes
// of the parent communicator, how many threads each gives, and the private duplicates of the
// parent through which messages between processes travel. A Comm is one communicator of the
// family (the threadcomm itself, or one made from it with dup or split) as this process sees
// it: shared by its local members, each of which is a thread holding a Member.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ranks/errors.h"
#include "ranks/mailbox.h"
#include "ranks/team.h"
#include "ranks/topology.h"
#include "runtime/config.h"
#include "runtime/handles.h"

namespace tsmpi::ranks {

struct Family;
struct Member;

// Message channels of a communicator: the program's point-to-point traffic, and the messages of
// the engine's collective algorithms (which must never match the program's receives).
enum class Channel : std::uint8_t { kP2P = 0, kColl = 1 };

struct Comm {
  Family* family = nullptr;
  std::uint64_t ctx = 0;           // the same in every process
  std::uintptr_t handle = 0;       // the MPI_Comm the program holds (an engine handle)
  std::vector<int> members;        // comm rank -> family rank
  std::vector<int> local_index;    // comm rank -> index of its local member here, -1 elsewhere
  std::vector<int> local_ranks;    // comm ranks of this process, ascending
  std::vector<std::unique_ptr<Mailbox>> boxes;  // 2 per local member: kP2P, kColl
  // What each local rank is in this communicator (by local index), shared by the threads that
  // act as that rank: one per thread-rank of a threadcomm, one or more per MPI process of an
  // address space (address_space.h).
  std::vector<std::unique_ptr<Member>> local_members;
  std::vector<int> local_of_family;  // local family index -> local index here, -1 if not a member
  bool single_process = false;     // every member lives in this process
  bool blocked = false;            // each process's ranks contiguous
  MPI_Comm coll_comm = MPI_COMM_NULL;  // one rank per process, for hierarchical collectives
  // The comm's processes in the order of their ranks (a blocked comm's coll_comm has them in
  // this order): family process -> that index (-1: none of its ranks here); how many; ours.
  std::vector<int> coll_rank_of_proc;
  int coll_size = 0, my_coll_rank = -1;
  // A Cartesian grid (topology.h): set under mu by the first local member that makes or
  // duplicates it, before any of them returns the handle; read-only after.
  std::shared_ptr<const CartTopology> cart;
  std::shared_ptr<const GraphTopology> graph;  // likewise MPI_Graph_create's graph
  // A distributed graph: each local member's adjacency (by local index), set under mu by that
  // member before it returns the handle.
  std::vector<std::shared_ptr<const DistGraphAdjacency>> dist_graph;
  Team team;                       // the local members' shared-memory combine
  std::atomic<int> local_alive{0};  // local members that have not freed it
  bool root = false;               // the threadcomm itself (or an address space's MPI_COMM_WORLD)
  const char* default_name = "";   // MPI_Comm_get_name before a name is set

  std::mutex mu;  // name and error handler
  std::string name;
  ErrhandlerSlot errhandler;  // the default, for members that have set none and for other threads

  int size() const { return static_cast<int>(members.size()); }
  int proc_of(int rank) const;
  int coll_rank(int rank) const { return coll_rank_of_proc[static_cast<std::size_t>(proc_of(rank))]; }
  bool is_local(int rank) const { return local_index[rank] >= 0; }
  Mailbox& box(int rank, Channel ch) { return *boxes[2 * local_index[rank] + static_cast<int>(ch)]; }
  MPI_Comm handle_value() const { return handle_from_bits<MPI_Comm>(handle); }
};

struct Family {
  MPI_Comm parent = MPI_COMM_NULL;  // the program's communicator (for MPI_Abort)
  MPI_Comm net = MPI_COMM_NULL;     // private duplicate: messages between processes
  MPI_Comm coll = MPI_COMM_NULL;    // private duplicate: the processes' collectives
  int nprocs = 0, my_proc = 0;
  std::vector<int> offset;          // first family rank of each process
  std::vector<int> nthreads;        // threads of each process
  std::vector<int> proc_of;         // family rank -> process
  std::vector<int> world_rank_of_proc;  // process -> its MPI_COMM_WORLD rank (-1 if not in it)
  std::vector<int> node_of_proc;        // process -> its node (the lowest process of its node)
  int nlocal = 0;
  Comm* root = nullptr;

  // MPIX_Threadcomm_start/finish: arrival index and the barrier among the local threads.
  std::atomic<int> arrivals{0};
  std::atomic<int> in_region{0};
  ThreadBarrier region_barrier;

  // Next context id each local rank hands out when it is the first member of a new
  // communicator (atomic: threads of one MPI process may make communicators at once).
  std::unique_ptr<std::atomic<std::uint32_t>[]> next_ctx;

  std::mutex mu;  // comms and orphans
  std::unordered_map<std::uint64_t, Comm*> comms;
  // Messages from other processes for a communicator not yet made here.
  std::unordered_map<std::uint64_t, std::vector<struct Arrival>> orphans;

  bool shared_ranks = false;  // several threads may act as one rank at once (address spaces)

  bool multi_process() const { return nprocs > 1; }
  int family_rank_of_local(int i) const { return offset[my_proc] + i; }
};

// A message from another process, as received (header fields and packed data).
struct Arrival {
  int channel = 0, src = 0, dst = 0, tag = 0;
  Packet* packet = nullptr;
};

// What a local rank is in a communicator of thread-ranks.
struct alignas(64) Member {  // one line per local rank: members count collectives at once
  Comm* comm = nullptr;
  int rank = 0;
  bool joined = false;                  // the rank has the communicator (made, or started)
  MPI_Comm attributes = MPI_COMM_NULL;  // a private communicator holding this rank's attributes
  ErrhandlerSlot errhandler;            // this rank's own, once set or inherited
  CollectiveCount collectives;          // collectives started on comm by this rank
};

// Which rank the calling thread is in each family it acts in: a thread-rank of a threadcomm
// region, or a thread attached to an MPI process of an address space.
// (Both, and every end of a membership or communicator, forget_callers().)
void push_identity(Family* f, int family_rank);
void pop_identity(Family* f);
// The caller's Member in c, or nullptr when it is not a member (or has not joined).
Member* membership(Comm* c);
// Every thread's cached answer of caller() (caller.h) is stale: a membership ended, a
// communicator's handle was released, or a thread's identity changed.
void forget_callers();
// How many threadcomm regions the calling thread is in (constinit: one TLS load).
extern constinit TSMPI_TLS int tl_regions;

// The communicator behind an MPI_Comm, or nullptr when it is not a thread-rank communicator.
Comm* comm_of(MPI_Comm c);
// The same for a call that needs no membership (size, group, name, handlers), nullptr also when
// the caller is an MPI process of an address space that is no member of it: every caller there
// is an MPI process, and one that freed the communicator (which lives on while other local
// processes have it) must get MPI_ERR_COMM. MPI_COMM_WORLD is every process's.
Comm* comm_for_process(MPI_Comm c);
// The family rank of the calling thread in c's family (-1 if it is not a member of the root).
int family_rank_of_caller(Family* f);

// The processes of a member list (family ranks) in the order of their first ranks: family
// process -> its place (-1: no member there), how many, and whether each one's ranks are
// contiguous (a communicator's coll_rank_of_proc, coll_size and blocked).
struct ProcessOrder {
  std::vector<int> place;
  int count = 0;
  bool contiguous = true;
};
ProcessOrder process_order(const Family* f, const std::vector<int>& members);

// Makes the process's Comm for a new context (members given as family ranks), or finds the one
// another local member made.
Comm* find_or_make_comm(Family* f, std::uint64_t ctx, const std::vector<int>& members);
// The same, and rank my_rank (local) joins it.
Comm* join_comm(Family* f, std::uint64_t ctx, const std::vector<int>& members, int my_rank);
// Local rank `rank` of c has it (sets Member::joined).
Member* join_member(Comm* c, int rank);
// m's rank no longer has its communicator: its attributes and handler go, its count restarts.
void release_member(Member* m);
// The caller's rank leaves c; the last local member frees it.
void leave_comm(Comm* c);
// A Family over the processes of `parent` with num_threads local ranks here (collective over
// parent): offsets, nodes, private duplicates. The root Comm (every family rank) is made with
// context `root_ctx`, no rank joined.
// shared_ranks: several threads may act as one rank at once (an address space's processes).
Family* make_family(MPI_Comm parent, int num_threads, std::uint64_t root_ctx, bool shared_ranks = false);

}  // namespace tsmpi::ranks

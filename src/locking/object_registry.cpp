#include "locking/object_registry.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "locking/completion_errors.h"
#include "locking/serialize.h"  // forget_stream_comm
#include "locking/serialize_lock.h"
#include "runtime/function_table.h"

namespace tsmpi::serial {
namespace {

// How a creating or freeing call updates the registry.
enum class Rule : std::uint8_t {
  kNone,
  kFromParent,     // id = mix(parent id, n-th creation on the parent): every rank of the parent
                   // calls the same creations in the same order (MPI's collective ordering)
  kAgreeOnNew,     // only a group of the parent takes part: agree on the new communicator
  kExchangeInter,  // intercommunicator from two groups: combine both groups' candidates
  kLocalOnly,      // dynamic processes and sessions: no peer to agree with (docs/serialize-mode.md)
  kShadowOfParent, // window or file: private duplicate of its communicator for admission
  kFreeComm, kFreeWin, kFreeFile,
  kErrhandler,     // a communicator's error handler set: completion_errors.h keeps track
};

struct CommState {
  std::uint64_t id = 0;
  std::uint64_t creations = 0;        // creations all its ranks take part in, so far
  std::uint64_t group_creations = 0;  // creations only a group of its ranks takes part in
};
struct ShadowState {
  MPI_Comm shadow = MPI_COMM_NULL;
  std::uint64_t id = 0;
  WindowSync sync;  // windows only
};

std::unordered_map<std::uintptr_t, CommState> g_comms;
std::unordered_map<std::uintptr_t, ShadowState> g_wins, g_files;
std::vector<Rule> g_rules;
std::uint64_t g_local_counter = 0;
std::unordered_map<std::uint64_t, std::uint64_t> g_group_calls;  // calls so far per (parent, tag, members)

constexpr std::uint64_t kWorldId = 1, kSelfId = 2;

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {  // splitmix64 of the pair
  std::uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z < 16 ? z + 16 : z;  // keep small ids for the predefined communicators
}

Rule rule_for(const FunctionInfo& f) {
  std::string_view objects = f.objects, name = f.name;
  if (name == "MPI_Comm_set_errhandler" || name == "MPI_Errhandler_set") return Rule::kErrhandler;
  if (objects.find("free:Comm") != std::string_view::npos) return Rule::kFreeComm;
  if (objects.find("free:Win") != std::string_view::npos) return Rule::kFreeWin;
  if (objects.find("free:File") != std::string_view::npos) return Rule::kFreeFile;
  if (objects.find("new:Win") != std::string_view::npos || objects.find("new:File") != std::string_view::npos)
    return Rule::kShadowOfParent;
  if (objects.find("new:Comm") == std::string_view::npos) return Rule::kNone;
  if (name == "MPI_Comm_create_group") return Rule::kAgreeOnNew;
  if (name == "MPI_Intercomm_create") return Rule::kExchangeInter;
  if (name == "MPI_Intercomm_create_from_groups" || name == "MPI_Comm_create_from_group" ||
      name == "MPI_Comm_spawn" || name == "MPI_Comm_spawn_multiple" || name == "MPI_Comm_accept" ||
      name == "MPI_Comm_connect" || name == "MPI_Comm_join")
    return Rule::kLocalOnly;
  return Rule::kFromParent;
}

CommState& state_of(std::uintptr_t bits) {
  auto [it, inserted] = g_comms.try_emplace(bits);
  // A communicator tsmpi did not see being created: a process-local id keeps admission safe
  // (ownership is what excludes), only its priority may differ between ranks.
  if (inserted) it->second.id = mix(0xC0FFEE, ++g_local_counter);
  return it->second;
}

// (seed, tag, ranks) and how many calls with the same triple this process made before: the
// same on every rank taking part, since they make such calls in the same order.
std::uint64_t numbered_call_key(std::uint64_t seed, int tag, const std::vector<int>& ranks) {
  std::uint64_t key = mix(seed, static_cast<std::uint64_t>(tag));
  for (int r : ranks) key = mix(key, static_cast<std::uint64_t>(r));
  return mix(key, ++g_group_calls[key]);
}

// A window's lock words: one 64-bit word per process on a private window over the shadow
// communicator, zero (unlocked) before any process can reach them, in a passive epoch to every
// process until the window is freed. Collective: every rank is in the window's creation. The
// word is tsmpi's memory given to MPI_Win_create on both MPIs: Open MPI 4.1.4's osc/rdma
// segfaults in MPI_Compare_and_swap on a window from MPI_Win_allocate, and MPICH 4.0.2's
// (ch4:ucx) atomics on a window from MPI_Win_allocate are not atomic between origins (two
// processes' MPI_Fetch_and_op(MPI_SUM) on one word lose updates), which broke the lock.
void open_lock_words(MPI_Comm shadow, WindowSync* sync) {
  int size = 0;
  PMPI_Comm_size(shadow, &size);
  sync->shadow = shadow;
  PMPI_Comm_rank(shadow, &sync->me);
  sync->held.assign(static_cast<std::size_t>(size), 0);
  constexpr MPI_Aint kBytes = sizeof(std::int64_t);
  sync->word = new std::int64_t(0);
  int rc = PMPI_Win_create(sync->word, kBytes, kBytes, MPI_INFO_NULL, shadow, &sync->locks);
  if (rc != MPI_SUCCESS) {
    sync->locks = MPI_WIN_NULL;
    return;
  }
  PMPI_Win_lock_all(MPI_MODE_NOCHECK, sync->locks);
  PMPI_Barrier(shadow);
}

void close_lock_words(WindowSync* sync) {
  if (sync->locks != MPI_WIN_NULL) {
    PMPI_Win_unlock_all(sync->locks);
    PMPI_Win_free(&sync->locks);
  }
  delete sync->word;
  sync->word = nullptr;
}

std::uint64_t agree_max(MPI_Comm comm, std::uint64_t candidate) {
  std::uint64_t result = candidate;
  PMPI_Allreduce(&candidate, &result, 1, MPI_UINT64_T, MPI_MAX, comm);
  return result;
}

}  // namespace

void registry_init() {
  g_rules.assign(fn::kCount, Rule::kNone);
  for (int i = 0; i < fn::kCount; ++i) g_rules[i] = rule_for(kFunctions[i]);
  g_comms[handle_bits(MPI_COMM_WORLD)].id = kWorldId;
  g_comms[handle_bits(MPI_COMM_SELF)].id = kSelfId;
}

bool tracks_objects(fn::Id id) { return !g_rules.empty() && g_rules[id] != Rule::kNone; }

bool admission_target(const HandleRef& in, MPI_Comm* comm, std::uint64_t* id) {
  switch (in.kind) {
    case Kind::Comm:
      if (handle_from_bits<MPI_Comm>(in.bits) == MPI_COMM_NULL) return false;
      *comm = handle_from_bits<MPI_Comm>(in.bits);
      *id = state_of(in.bits).id;
      return true;
    case Kind::Win:
    case Kind::File: {
      auto& map = in.kind == Kind::Win ? g_wins : g_files;
      auto it = map.find(in.bits);
      if (it == map.end()) return false;
      *comm = it->second.shadow;
      *id = it->second.id;
      return true;
    }
    default: break;  // no other kind is admitted on
  }
  return false;
}

void after_call(fn::Id id, const Objects& objects, int rc) {
  if (rc != MPI_SUCCESS) return;
  const std::uintptr_t created = objects.out.value();
  const bool made = objects.out.kind != Kind::kNone;
  const bool new_comm = made && handle_from_bits<MPI_Comm>(created) != MPI_COMM_NULL;
  switch (g_rules[id]) {
    case Rule::kNone: return;
    case Rule::kFromParent: {
      CommState& parent = state_of(objects.in.bits);
      std::uint64_t new_id = mix(parent.id, ++parent.creations);
      if (new_comm) g_comms[created] = {new_id, 0, 0};
      return;
    }
    case Rule::kAgreeOnNew: {
      if (!new_comm) return;
      // Only the group's ranks take part, so the parent's creation count must not move.
      CommState& parent = state_of(objects.in.bits);
      std::uint64_t candidate = mix(parent.id ^ 0x67726F7570ull, ++parent.group_creations);
      g_comms[created] = {agree_max(handle_from_bits<MPI_Comm>(created), candidate), 0, 0};
      return;
    }
    case Rule::kExchangeInter: {
      if (!new_comm) return;
      CommState& local = state_of(objects.in.bits);
      std::uint64_t mine = mix(local.id ^ 0x696E746572ull, ++local.creations);
      // On an intercommunicator the result is the other group's value; both groups then
      // combine the same two numbers.
      std::uint64_t theirs = agree_max(handle_from_bits<MPI_Comm>(created), mine);
      g_comms[created] = {mix(std::min(mine, theirs), std::max(mine, theirs)), 0, 0};
      return;
    }
    case Rule::kLocalOnly:
      if (new_comm) g_comms[created] = {mix(0x6C6F63616Cull, ++g_local_counter), 0, 0};
      return;
    case Rule::kShadowOfParent: {
      if (!made || objects.in.kind != Kind::Comm) return;
      CommState& parent = state_of(objects.in.bits);
      ShadowState s;
      s.id = mix(parent.id, ++parent.creations);
      PMPI_Comm_dup(handle_from_bits<MPI_Comm>(objects.in.bits), &s.shadow);
      if (objects.out.kind == Kind::Win) open_lock_words(s.shadow, &s.sync);
      (objects.out.kind == Kind::Win ? g_wins : g_files)[created] = s;
      g_comms[handle_bits(s.shadow)] = {s.id, 0, 0};
      return;
    }
    case Rule::kFreeComm:
      g_comms.erase(objects.in.bits);
      forget_stream_comm(objects.in.bits);
      return;
    case Rule::kErrhandler:
      note_errhandler_set(handle_from_bits<MPI_Comm>(objects.in.bits));
      return;
    case Rule::kFreeWin:
    case Rule::kFreeFile: {
      auto& map = g_rules[id] == Rule::kFreeWin ? g_wins : g_files;
      auto it = map.find(objects.in.bits);
      if (it == map.end()) return;
      g_comms.erase(handle_bits(it->second.shadow));
      if (g_rules[id] == Rule::kFreeWin) close_lock_words(&it->second.sync);
      PMPI_Comm_free(&it->second.shadow);
      map.erase(it);
      return;
    }
  }
}

WindowSync* window_sync(MPI_Win win) {
  auto it = g_wins.find(handle_bits(win));
  return it == g_wins.end() ? nullptr : &it->second.sync;
}

std::uint64_t group_call_key(const HandleRef& parent, int tag, const std::vector<int>& members) {
  Guard g;
  return numbered_call_key(state_of(parent.bits).id, tag, members);
}

std::uint64_t bridge_call_key(const std::vector<int>& leaders, int tag) {
  Guard g;
  return numbered_call_key(0x627269646765ull, tag, leaders);
}

}  // namespace tsmpi::serial

#include "checks/buffer_conflicts.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "checks/checks.h"
#include "checks/mark.h"
#include "locking/object_lifetime.h"
#include "locking/serialize_lock.h"
#include "runtime/config.h"
#include "runtime/function_table.h"

namespace tsmpi::checks {
namespace {

struct BufferInUse {
  std::uintptr_t end;
  bool receive;
  std::uint64_t token;
  Mark mark;
};

// Buffers in use, by start address, one node per buffer (a call's entry is found again by its
// start and token), in shards by the 4 KiB block where the buffer begins, each with its own
// lock: threads whose buffers lie apart never share one (issue 17: one process-wide mutex
// before). A buffer overlapping [begin, end) begins before `end` and at most the longest buffer
// in use before `begin`; so a search looks at the shards of those blocks only.
using InUse = std::multimap<std::uintptr_t, BufferInUse>;
struct alignas(64) Shard {
  std::mutex mutex;
  InUse in_use;
};
constexpr int kBlockBits = 12;
constexpr std::size_t kShards = 64;
Shard g_shards[kShards];
std::atomic<std::uintptr_t> g_longest{0};  // the longest buffer ever in use (only grows)
std::atomic<std::uint64_t> g_next_token{1};

Shard& shard_of_block(std::uintptr_t block) { return g_shards[(block * 0x9E3779B97F4A7C15ull) >> 58]; }
Shard& shard_of(std::uintptr_t begin) { return shard_of_block(begin >> kBlockBits); }

// Calls f(shard, from) once for each shard that may hold a buffer overlapping [begin, end);
// such a buffer begins in [from, end).
template <class F>
void for_each_shard_near(std::uintptr_t begin, std::uintptr_t end, F&& f) {
  const std::uintptr_t longest = g_longest.load(std::memory_order_seq_cst);
  const std::uintptr_t from = begin > longest ? begin - longest : 0;
  const std::uintptr_t first = from >> kBlockBits, last = (end - 1) >> kBlockBits;
  if (last - first + 1 >= kShards) {
    for (Shard& sh : g_shards) f(sh, from);
    return;
  }
  bool seen[kShards] = {};
  for (std::uintptr_t b = first; b <= last; ++b) {
    Shard& sh = shard_of_block(b);
    const std::size_t i = static_cast<std::size_t>(&sh - g_shards);
    if (seen[i]) continue;
    seen[i] = true;
    f(sh, from);
  }
}

// The nonblocking operations' entries, by request, in shards of their own.
struct Handed {
  std::uintptr_t begin;
  std::uint64_t token;
};
struct alignas(64) RequestShard {
  std::mutex mutex;
  std::unordered_multimap<std::uintptr_t, Handed> by_request;
};
RequestShard g_requests[kShards];
RequestShard& requests_of(std::uintptr_t request) { return g_requests[(request * 0x9E3779B97F4A7C15ull) >> 58]; }

void erase(std::uintptr_t begin, std::uint64_t token) {
  Shard& sh = shard_of(begin);
  std::lock_guard<std::mutex> g(sh.mutex);
  auto range = sh.in_use.equal_range(begin);
  for (auto it = range.first; it != range.second; ++it)
    if (it->second.token == token) {
      sh.in_use.erase(it);
      return;
    }
}

// What span_of needs of a datatype. Predefined types are never freed, so each thread keeps
// theirs (a message buffer's type is nearly always one): three type queries per buffer were a
// good part of a checked message's cost.
struct TypeSpan {
  std::uintptr_t bits;
  MPI_Count size, true_lb;
  bool valid, without_holes;
};
constexpr unsigned kTypeSpans = 8;
TSMPI_TLS TypeSpan tl_type_spans[kTypeSpans];

bool type_span(MPI_Datatype type, TypeSpan* out) {
  const std::uintptr_t bits = handle_bits(type);
  const bool predefined = lifetime::builtin_handle(Kind::Datatype, bits);
  TypeSpan& cached = tl_type_spans[(bits >> 4 ^ bits) % kTypeSpans];
  if (predefined && cached.valid && cached.bits == bits) {
    *out = cached;
    return true;
  }
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int rc = serial::locked([&] {
    PMPI_Type_get_extent_x(type, &lb, &extent);
    PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
    return PMPI_Type_size_x(type, &size);
  });
  if (rc != MPI_SUCCESS) return false;
  *out = TypeSpan{bits, size, true_lb, true, size > 0 && extent == size && true_extent == size};
  if (predefined) cached = *out;
  return true;
}

// The bytes [begin, end) a buffer covers, or false when it cannot be told cheaply (a type with
// holes) or covers nothing.
bool span_of(const BufferArg& b, std::uintptr_t* begin, std::uintptr_t* end) {
  if (!b.buf || b.count <= 0 || b.type == MPI_DATATYPE_NULL) return false;
  TypeSpan t;
  if (!type_span(b.type, &t) || !t.without_holes) return false;
  *begin = reinterpret_cast<std::uintptr_t>(b.buf) + static_cast<std::uintptr_t>(t.true_lb);
  *end = *begin + static_cast<std::uintptr_t>(t.size) * static_cast<std::uintptr_t>(b.count);
  return true;
}

std::string range_text(std::uintptr_t begin, std::uintptr_t end) {
  return "[" + diag::hex(begin) + ", " + diag::hex(end) + ")";
}

}  // namespace

BufferUse::BufferUse(const CallArgs& args, fn::Id id) : args_(args), id_(id) {
  if (args.buffer_count == 0) return;
  // A nonblocking operation's buffers stay in use after the call returns: its mark needs its
  // stack now. A blocking call's entry lives only while its thread is inside the call.
  const bool outlives_call = g_rules[id].creates_request && kFunctions[id].family != Family::kBsend;
  for (int i = 0; i < args.buffer_count && i < 2; ++i) {
    const BufferArg& b = args.buffers[i];
    std::uintptr_t begin, end;
    if (b.peer == MPI_PROC_NULL || !span_of(b, &begin, &end)) continue;  // MPI_PROC_NULL moves no data
    Mark me = outlives_call ? mark_here(id, 2) : mark_call(id);
    // In use first, then the search: of two overlapping calls made at once, each in a shard of
    // its own, at least the later one's search finds the other (both may: each is reported).
    std::uintptr_t longest = g_longest.load(std::memory_order_relaxed);
    while (end - begin > longest && !g_longest.compare_exchange_weak(longest, end - begin, std::memory_order_seq_cst)) {
    }
    const std::uint64_t token = g_next_token.fetch_add(1, std::memory_order_relaxed);
    {
      Shard& sh = shard_of(begin);
      std::lock_guard<std::mutex> g(sh.mutex);
      sh.in_use.emplace(begin, BufferInUse{end, b.receive, token, me});
    }
    begins_[entries_] = begin;
    tokens_[entries_++] = token;
    std::vector<InUse::value_type> conflicts;
    for_each_shard_near(begin, end, [&](Shard& sh, std::uintptr_t from) {
      std::lock_guard<std::mutex> g(sh.mutex);
      for (auto it = sh.in_use.lower_bound(from); it != sh.in_use.end() && it->first < end; ++it) {
        const BufferInUse& e = it->second;
        if (e.token != token && e.end > begin && (b.receive || e.receive)) conflicts.push_back(*it);
      }
    });
    for (const auto& [other_begin, e] : conflicts) {
      const char* what = b.receive && e.receive ? "a receive into a buffer a pending receive still writes"
                         : b.receive            ? "a receive into a buffer a send in flight still reads"
                                                : "a send of a buffer a receive in flight is writing";
      diag::report_error(std::string(what) + ": " + fn_name(id) + " on " + range_text(begin, end) + " overlaps " +
                             fn_name(e.mark.fn) + " on " + range_text(other_begin, e.end),
                         {involved(e.mark, "began first, in"), involved(me, "in")});
    }
  }
}

void BufferUse::done(int rc) {
  if (entries_ == 0 || rc != MPI_SUCCESS) return;
  // A nonblocking operation keeps its buffers until its request completes (a buffered send
  // copied its data before returning).
  if (kFunctions[id_].family == Family::kBsend) return;
  for (int i = 0; i < args_.handle_count; ++i) {
    const HandleArg& h = args_.handles[i];
    if (h.kind != Kind::Request || h.use != Use::Out) continue;
    std::uintptr_t request = read_handle(Kind::Request, h.where, 0);
    if (request == null_handle(Kind::Request)) return;
    RequestShard& rs = requests_of(request);
    std::lock_guard<std::mutex> g(rs.mutex);
    for (int k = 0; k < entries_; ++k) rs.by_request.emplace(request, Handed{begins_[k], tokens_[k]});
    handed_over_ = true;
  }
}

BufferUse::~BufferUse() {
  if (entries_ == 0 || handed_over_) return;
  for (int k = 0; k < entries_; ++k) erase(begins_[k], tokens_[k]);
}

void end_buffer_use(std::uintptr_t request) {
  // Every entry under this handle value, not only one call's two: the MPI may have given the
  // value to another operation already (MPICH reuses request handles at once), whose entries
  // would otherwise stay behind when the value's entries are dropped here. Request shard, then
  // buffer shard: no path takes them the other way round.
  RequestShard& rs = requests_of(request);
  std::lock_guard<std::mutex> g(rs.mutex);
  auto range = rs.by_request.equal_range(request);
  for (auto it = range.first; it != range.second; ++it) erase(it->second.begin, it->second.token);
  rs.by_request.erase(range.first, range.second);
}

}  // namespace tsmpi::checks

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

struct Entry {
  std::uintptr_t end;
  bool receive;
  std::uint64_t token;
  Mark mark;
};

// Buffers in use, by start address: one node per buffer (a call's entry is found again by its
// start and token). A global lock: this is checking mode only.
using InUse = std::multimap<std::uintptr_t, Entry>;
std::mutex g_mutex;
InUse g_in_use;
struct Handed {
  std::uintptr_t begin;
  std::uint64_t token;
};
std::unordered_multimap<std::uintptr_t, Handed> g_by_request;  // nonblocking operations' entries
std::uintptr_t g_longest = 0;
std::uint64_t g_next_token = 1;

void erase_locked(std::uintptr_t begin, std::uint64_t token) {
  auto range = g_in_use.equal_range(begin);
  for (auto it = range.first; it != range.second; ++it)
    if (it->second.token == token) {
      g_in_use.erase(it);
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
    std::vector<InUse::value_type> conflicts;
    {
      std::lock_guard<std::mutex> g(g_mutex);
      auto first = g_in_use.lower_bound(begin > g_longest ? begin - g_longest : 0);
      for (auto it = first; it != g_in_use.end() && it->first < end; ++it) {
        const Entry& e = it->second;
        if (e.end > begin && (b.receive || e.receive)) conflicts.push_back(*it);
      }
      std::uint64_t token = g_next_token++;
      g_in_use.emplace(begin, Entry{end, b.receive, token, me});
      g_longest = std::max(g_longest, end - begin);
      begins_[entries_] = begin;
      tokens_[entries_++] = token;
    }
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
    std::lock_guard<std::mutex> g(g_mutex);
    for (int k = 0; k < entries_; ++k) g_by_request.emplace(request, Handed{begins_[k], tokens_[k]});
    handed_over_ = true;
  }
}

BufferUse::~BufferUse() {
  if (entries_ == 0 || handed_over_) return;
  std::lock_guard<std::mutex> g(g_mutex);
  for (int k = 0; k < entries_; ++k) erase_locked(begins_[k], tokens_[k]);
}

void end_buffer_use(std::uintptr_t request) {
  std::lock_guard<std::mutex> g(g_mutex);
  auto range = g_by_request.equal_range(request);
  for (auto it = range.first; it != range.second; ++it) erase_locked(it->second.begin, it->second.token);
  g_by_request.erase(range.first, range.second);
}

}  // namespace tsmpi::checks

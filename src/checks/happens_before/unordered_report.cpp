#include "checks/happens_before/unordered_report.h"

#include <link.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>

#include <mutex>
#include <set>
#include <tuple>

#include "diagnostics/report.h"
#include "runtime/config.h"

namespace tsmpi::hb {
namespace {

// libtsmpi's own addresses: a call site is the first frame outside them.
struct Range {
  std::uintptr_t lo = ~std::uintptr_t{0}, hi = 0;
};
int own_segments(dl_phdr_info* info, std::size_t, void* data) {
  const auto self = reinterpret_cast<std::uintptr_t>(&own_segments);
  Range r;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    r.lo = std::min<std::uintptr_t>(r.lo, info->dlpi_addr + ph.p_vaddr);
    r.hi = std::max<std::uintptr_t>(r.hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (self < r.lo || self >= r.hi) return 0;
  *static_cast<Range*>(data) = r;
  return 1;
}
const Range& own_range() {
  static const Range r = [] {
    Range out;
    dl_iterate_phdr(own_segments, &out);
    return out;
  }();
  return r;
}

const void* call_site(const checks::Mark& m) {
  if (!m.stack) return nullptr;
  const Range& own = own_range();
  for (int i = 0; i < m.stack->frames; ++i) {
    const auto pc = reinterpret_cast<std::uintptr_t>(m.stack->pc[i]);
    if (pc < own.lo || pc >= own.hi) return m.stack->pc[i];
  }
  return nullptr;
}

std::mutex& g_reported_lock = *new std::mutex;  // never destroyed
std::set<std::pair<const void*, const void*>>& g_reported = *new std::set<std::pair<const void*, const void*>>;

// False when this pair of call sites has been reported already (by any rule: a barrier and a
// free of its communicator are one error, not a collective one and a free one).
bool first_time(std::string_view, const Event& a, const Event& b) {
  const void* sa = a.site;
  const void* sb = b.site;
  if (sb < sa) std::swap(sa, sb);
  std::lock_guard<std::mutex> g(g_reported_lock);
  return g_reported.emplace(sa, sb).second;
}

}  // namespace

namespace {
// Each thread's latest event per function (by fn modulo the size), reused while the thread's
// epoch stays: its events between two of its releases are one event to the other threads, and
// a backtrace per call was most of checking mode's cost per message (a probe, a receive and a
// send alternate on one communicator). Flagged when destroyed at the thread's end, as later
// thread-exit destructors may still call MPI.
struct EventCache {
  static constexpr int kSize = 16;
  std::array<Event, kSize> latest;
  ~EventCache();
};
TSMPI_TLS bool tl_cache_gone = false;
TSMPI_TLS EventCache tl_cache;
EventCache::~EventCache() { tl_cache_gone = true; }

[[gnu::noinline]] Event new_event(int fn, Epoch at) {
  Event e{at, checks::mark_here(fn, 4), nullptr};
  e.site = call_site(e.mark);
  return e;
}
}  // namespace

Event event_here(int fn) {
  const Epoch at = now();
  if (TSMPI_UNLIKELY(tl_cache_gone)) return new_event(fn, at);
  Event& e = tl_cache.latest[static_cast<unsigned>(fn) % EventCache::kSize];
  if (e.mark.fn != fn || e.at.slot != at.slot || e.at.value != at.value || !e.mark.stack) e = new_event(fn, at);
  return e;
}

void report_pair(const std::string& what, const Event& earlier, const std::string& earlier_line, const Event& later,
                 const std::string& later_line, Severity severity) {
  if (!first_time(std::string_view(what).substr(0, what.find(" on ")), earlier, later)) return;
  std::vector<diag::Involved> threads{checks::involved(earlier.mark, earlier_line), checks::involved(later.mark, later_line)};
  if (severity == Severity::kError)
    diag::report_error(what, threads);
  else
    diag::print_report("WARNING: non-portable: " + what, threads);
}

void report_unordered(const std::string& object, const std::string& why, const Event& earlier, const Event& later,
                      const std::string& earlier_call, const std::string& later_call, Severity severity) {
  if (!first_time(why, earlier, later)) return;
  const std::string a = earlier_call.empty() ? checks::fn_name(earlier.mark.fn) : earlier_call;
  const std::string b = later_call.empty() ? checks::fn_name(later.mark.fn) : later_call;
  const std::string what = "no ordering between thread " + std::to_string(earlier.mark.thread_index) + "'s " + a +
                           " and thread " + std::to_string(later.mark.thread_index) + "'s " + b + " on " + object +
                           ": " + why;
  std::vector<diag::Involved> threads{checks::involved(earlier.mark, "earlier, in"), checks::involved(later.mark, "later, in")};
  if (severity == Severity::kError)
    diag::report_error(what, threads);
  else
    diag::print_report("WARNING: non-portable: " + what, threads);
}

}  // namespace tsmpi::hb

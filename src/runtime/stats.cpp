#include "runtime/stats.h"

#include <tbb/enumerable_thread_specific.h>

#include <string>

#include "fn_ids.h"
#include "runtime/function_table.h"
#include "runtime/options.h"

namespace tsmpi {

bool g_count_functions = false;

namespace {
// Blocks outlive their threads, so counts of threads that exited before finalize still add up.
tbb::enumerable_thread_specific<ThreadCounters>& all_counters() {
  static auto* ets = new tbb::enumerable_thread_specific<ThreadCounters>();  // never destroyed:
  return *ets;  // wrappers may still run during static destruction at exit
}
}  // namespace

ThreadCounters& make_thread_counters() {
  ThreadCounters& c = all_counters().local();
  if (g_count_functions && !c.per_function) c.per_function = new std::atomic<std::uint64_t>[fn::kCount]();  // lives as the block does
  return c;
}

StatsTotals stats_totals() {
  StatsTotals t;
  for (const ThreadCounters& c : all_counters()) {
    for (int i = 0; i < kCategoryCount; ++i) t.calls[i] += c.calls[i].load(std::memory_order_relaxed);
    t.lock_wait_ns += c.lock_wait_ns.load(std::memory_order_relaxed);
    t.lock_waits += c.lock_waits.load(std::memory_order_relaxed);
    if (c.per_function) {
      t.per_function.resize(fn::kCount);
      for (int i = 0; i < fn::kCount; ++i) t.per_function[i] += c.per_function[i].load(std::memory_order_relaxed);
    }
    ++t.threads;
  }
  return t;
}

void print_stats(std::FILE* out, const char* rank_label, const char* extra) {
  StatsTotals t = stats_totals();
  std::uint64_t total = 0;
  for (auto c : t.calls) total += c;
  std::string text;
  char line[256];
  std::snprintf(line, sizeof line,
                "tsmpi stats rank %s: %llu calls from %d threads, lock waits %llu (%.6f s)\n",
                rank_label, static_cast<unsigned long long>(total), t.threads,
                static_cast<unsigned long long>(t.lock_waits), t.lock_wait_ns * 1e-9);
  text += line;
  text += "  calls:";
  for (int i = 0; i < kCategoryCount; ++i) {
    std::snprintf(line, sizeof line, " %s=%llu", category_name(static_cast<Category>(i)),
                  static_cast<unsigned long long>(t.calls[i]));
    text += line;
  }
  text += "\n  options:";
  if (const Options* o = loaded_options())
    for (const auto& s : option_specs()) text += std::string(" ") + s.name + "=" + option_value(*o, s.name);
  text += "\n";
  if (!t.per_function.empty()) {
    // Every function called through tsmpi, in the table's order: what the program uses.
    text += "  functions:";
    for (int i = 0; i < fn::kCount; ++i)
      if (t.per_function[i]) text += std::string(" ") + kFunctions[i].name + "=" + std::to_string(t.per_function[i]);
    text += "\n";
  }
  text += extra;
  // One write so blocks of different ranks sharing a terminal do not interleave.
  std::fputs(text.c_str(), out);
  std::fflush(out);
}

}  // namespace tsmpi

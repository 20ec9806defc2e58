#include "runtime/stats.h"

#include <mutex>
#include <set>
#include <string>

#include "fn_ids.h"
#include "runtime/function_table.h"
#include "runtime/options.h"

namespace tsmpi {

bool g_count_functions = false;

namespace {

// The blocks of live threads, and the sums of the threads that ended: a block is folded into
// the sums when its thread ends, so a program that starts threads all its life keeps one block
// per live thread.
struct Registry {
  std::mutex mutex;
  std::set<ThreadCounters*> live;
  StatsTotals ended;
  int threads = 0;  // threads that ever counted
};
Registry& registry() {
  static auto* r = new Registry;  // never destroyed: wrappers may still run during exit
  return *r;
}

void add(StatsTotals& t, const ThreadCounters& c) {
  for (int i = 0; i < kCategoryCount; ++i) t.calls[i] += c.calls[i].load(std::memory_order_relaxed);
  t.lock_wait_ns += c.lock_wait_ns.load(std::memory_order_relaxed);
  t.lock_waits += c.lock_waits.load(std::memory_order_relaxed);
  if (c.per_function) {
    t.per_function.resize(fn::kCount);
    for (int i = 0; i < fn::kCount; ++i) t.per_function[i] += c.per_function[i].load(std::memory_order_relaxed);
  }
}

constinit TSMPI_TLS bool tl_ended = false;  // this thread's block was folded in (thread exit)

struct Owner {
  ThreadCounters counters;
  Owner() {
    if (g_count_functions) counters.per_function = new std::atomic<std::uint64_t>[fn::kCount]();
    std::lock_guard<std::mutex> g(registry().mutex);
    registry().live.insert(&counters);
    ++registry().threads;
  }
  ~Owner() {
    tl_ended = true;
    tl_thread.counters = nullptr;
    std::lock_guard<std::mutex> g(registry().mutex);
    add(registry().ended, counters);
    registry().live.erase(&counters);
    delete[] counters.per_function;
  }
};

}  // namespace

ThreadCounters& make_thread_counters() {
  if (tl_ended) {  // a call made while the thread's thread-locals are being destroyed: not counted
    static ThreadCounters discarded;
    return discarded;
  }
  static thread_local Owner owner;
  return owner.counters;
}

StatsTotals stats_totals() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  StatsTotals t = r.ended;
  for (const ThreadCounters* c : r.live) add(t, *c);
  t.threads = r.threads;
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

#include "diagnostics/report.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>

#include "runtime/options.h"
#include "runtime/thread_state.h"

namespace tsmpi::diag {
namespace {
std::mutex g_print;
std::string g_rank = "?";
}  // namespace

void set_rank_label(const std::string& label) { g_rank = label; }
const std::string& rank_label_text() { return g_rank; }

void print_report(const std::string& what, const std::vector<Involved>& threads) {
  std::lock_guard<std::mutex> g(g_print);
  const std::string head = "tsmpi: rank " + g_rank + ": ";
  std::string text = head + what + "\n";
  for (const Involved& t : threads) {
    text += head + "  thread " + std::to_string(t.thread_index) + " (tid " + std::to_string(t.tid) + ") " +
            t.call + "\n";
  }
  // One write per report keeps reports of several ranks from interleaving line by line.
  std::fputs(text.c_str(), stderr);
  for (const Involved& t : threads) {
    if (!t.stack) continue;
    std::fprintf(stderr, "%s  backtrace of thread %d:\n", head.c_str(), t.thread_index);
    print_backtrace(stderr, *t.stack, (head + "    ").c_str());
  }
  std::fflush(stderr);
}

void report_error(const std::string& what, const std::vector<Involved>& threads) {
  print_report("ERROR: " + what, threads);
  const Options* o = loaded_options();
  if (o && o->check == CheckMode::Abort) {
    std::fprintf(stderr, "tsmpi: rank %s: TSMPI_CHECK=abort: ending the job with MPI_Abort\n", g_rank.c_str());
    std::fflush(stderr);
    // The launcher forwards output through a pipe; give it a moment before the job is killed.
    usleep(300 * 1000);
    ++tl_thread.depth;  // MPI_Abort from here must not come back through tsmpi
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
}

}  // namespace tsmpi::diag

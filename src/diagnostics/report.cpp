#include "diagnostics/report.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "runtime/options.h"
#include "runtime/thread_state.h"

namespace tsmpi::diag {
namespace {
std::mutex g_print;
std::string g_rank = "?";
}  // namespace

std::string hex(std::uintptr_t bits) {
  char text[32];
  std::snprintf(text, sizeof text, "%#lx", static_cast<unsigned long>(bits));
  return text;
}

void set_rank_label(const std::string& label) { g_rank = label; }
const std::string& rank_label_text() { return g_rank; }

void print_report(const std::string& what, const std::vector<Involved>& threads, const std::vector<std::string>& notes) {
  std::lock_guard<std::mutex> g(g_print);
  const std::string head = "tsmpi: rank " + g_rank + ": ";
  // The whole report goes out in one write: the launcher forwards each rank's output in
  // chunks, and reports of several ranks must not interleave inside a line.
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  if (!out) return;
  std::fprintf(out, "%s%s\n", head.c_str(), what.c_str());
  for (const Involved& t : threads)
    std::fprintf(out, "%s  thread %d (tid %d) %s\n", head.c_str(), t.thread_index, static_cast<int>(t.tid), t.call.c_str());
  for (const std::string& note : notes) std::fprintf(out, "%s  %s\n", head.c_str(), note.c_str());
  for (const Involved& t : threads) {
    if (!t.stack) continue;
    std::fprintf(out, "%s  backtrace of thread %d:\n", head.c_str(), t.thread_index);
    print_backtrace(out, *t.stack, (head + "    ").c_str());
  }
  std::fclose(out);
  std::fflush(stderr);
  for (std::size_t done = 0; done < size;) {
    ssize_t n = write(STDERR_FILENO, text + done, size - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  std::free(text);
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

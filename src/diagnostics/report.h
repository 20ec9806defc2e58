// Reports of erroneous programs (TSMPI_CHECK=warn|abort) and of hangs: whole reports on stderr,
// every line starting "tsmpi: rank R:", one report at a time per process.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "diagnostics/backtrace.h"

namespace tsmpi::diag {

// One thread a report names: which thread, in which MPI call, doing what, and its stack.
struct Involved {
  int thread_index = 0;
  pid_t tid = 0;
  std::string call;     // "MPI_Bcast(comm 0x...)", or what the thread did ("freed it in MPI_Info_free")
  const Backtrace* stack = nullptr;
};

// A handle value or address as reports write it ("0x55f6b8fc24c0").
std::string hex(std::uintptr_t bits);

// "0/4" once MPI_COMM_WORLD is known, else the launcher's rank variable; set at MPI_Init.
void set_rank_label(const std::string& label);
const std::string& rank_label_text();

// Prints `what` and each involved thread with its backtrace. With TSMPI_CHECK=abort the job
// then ends through MPI_Abort with status 1; with warn the call returns.
void report_error(const std::string& what, const std::vector<Involved>& threads);

// The same layout without the abort: for the hang watchdog.
// `notes`: further lines after the threads' (what serialize mode has pending, ...).
void print_report(const std::string& what, const std::vector<Involved>& threads,
                  const std::vector<std::string>& notes = {});

}  // namespace tsmpi::diag

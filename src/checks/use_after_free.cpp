#include "checks/use_after_free.h"

#include <cstdio>

#include "diagnostics/report.h"

namespace tsmpi::checks {
void note_free(FreedBy& by, int fn) { by = mark_here(fn, 2); }

void report_use_after_free(int fn, const char* kind, std::uintptr_t bits, const FreedBy& by) {
  Mark here = mark_here(fn, 2);
  char handle[32];
  std::snprintf(handle, sizeof handle, "%#lx", static_cast<unsigned long>(bits));
  std::vector<diag::Involved> threads{involved(here, "uses it in")};
  if (by.fn >= 0) threads.push_back(involved(by, "freed it in"));
  diag::report_error(std::string("use after free: ") + fn_name(fn) + " on " + kind + " " + handle +
                         (by.fn >= 0 ? std::string(", freed before by ") + fn_name(by.fn) : std::string()),
                     threads);
}

}  // namespace tsmpi::checks

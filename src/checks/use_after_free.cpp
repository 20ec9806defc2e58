#include "checks/use_after_free.h"

#include "diagnostics/report.h"

namespace tsmpi::checks {
void note_free(FreedBy& by, int fn, bool with_stack) { by = with_stack ? mark_here(fn, 2) : mark_thread(fn); }

void report_use_after_free(int fn, const char* kind, std::uintptr_t bits, const FreedBy& by) {
  Mark here = mark_call(fn);
  std::vector<diag::Involved> threads{involved(here, "uses it in")};
  if (by.fn >= 0) threads.push_back(involved(by, "freed it in"));
  diag::report_error(std::string("use after free: ") + fn_name(fn) + " on " + kind + " " + diag::hex(bits) +
                         (by.fn >= 0 ? std::string(", freed before by ") + fn_name(by.fn) : std::string()),
                     threads);
}

}  // namespace tsmpi::checks

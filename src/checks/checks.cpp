#include "checks/checks.h"

#include <dlfcn.h>

#include <cstdio>
#include <string_view>

#include "checks/happens_before/clock.h"
#include "checks/mark.h"
#include "fortran/request_variables.h"
#include "runtime/function_table.h"

namespace tsmpi::checks {

bool g_on = false;
Rule g_rules[fn::kCount];

void init(bool ordering) {
  for (int i = 0; i < fn::kCount; ++i) g_rules[i] = rule_for(kFunctions[i]);
  if (g_on) start_marks();
  if (g_on) tsan::init();
  hb::g_on = g_on && ordering && hb::observed();
  // The observer takes the MPI's libraries loaded by now (its components, transports) as not
  // the program's (src/checks/sync_observer/observer.h).
  if (hb::g_on)
    if (auto loaded = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "tsmpi_sync_libraries_loaded"))) loaded();
  unordered::g_probes = hb::g_on;
  fortran::g_follow_request_variables = hb::g_on;
  if (g_on && ordering && !hb::observed())
    std::fprintf(stderr,
                 "tsmpi: TSMPI_CHECK without libtsmpi_sync.so preloaded (tsmpirun preloads it; it stays off in "
                 "a program with clang's built-in ThreadSanitizer): calls are checked only for overlapping in "
                 "time, as with TSMPI_CHECK_ORDER=overlap (docs/checking.md)\n");
}

bool needs(int fn_index) {
  return selects(g_rules[fn_index]) || tsan::needs(fn_index);
}

}  // namespace tsmpi::checks

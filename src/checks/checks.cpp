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

namespace {

Rule rule_for(const FunctionInfo& f) {
  Rule r;
  std::string_view handles = f.handles;
  const bool on_object = handles.find("Comm") != std::string_view::npos || handles.find("Win") != std::string_view::npos ||
                         handles.find("File") != std::string_view::npos;
  r.collective = (f.category == Category::Collective && on_object) || builds_communicator(f);
  r.completes = f.family == Family::kWait || f.family == Family::kTest;
  r.frees_request = std::string_view(f.name) == "MPI_Request_free";
  r.creates_request = std::string_view(f.objects).find("new:Request") != std::string_view::npos;
  const std::string_view objects = f.objects;
  r.frees_object = objects.find("free:Comm") != std::string_view::npos ||
                   objects.find("free:Win") != std::string_view::npos || objects.find("free:File") != std::string_view::npos;
  r.moves_data = f.family == Family::kSend || f.family == Family::kBsend || f.family == Family::kRecv ||
                 f.family == Family::kSendrecv || f.family == Family::kMrecv;
  return r;
}

}  // namespace

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
  const Rule& r = g_rules[fn_index];
  return r.collective || r.completes || r.frees_request || r.moves_data || r.creates_request ||
         tsan::needs(fn_index);
}

}  // namespace tsmpi::checks

#include "checks/checks.h"

#include <string_view>

#include "checks/mark.h"
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

void init() {
  for (int i = 0; i < fn::kCount; ++i) g_rules[i] = rule_for(kFunctions[i]);
  if (g_on) start_marks();
}

bool needs(int fn_index) {
  const Rule& r = g_rules[fn_index];
  return r.collective || r.completes || r.frees_request || r.moves_data || r.creates_request;
}

}  // namespace tsmpi::checks

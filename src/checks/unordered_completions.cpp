#include "checks/happens_before/history.h"
#include "checks/happens_before/unordered_report.h"
#include "checks/request_slots.h"
#include "checks/unordered.h"
#include "diagnostics/report.h"
#include "fortran/request_variables.h"
#include "runtime/concurrent_maps.h"

namespace tsmpi::checks::unordered {
namespace {

// Request variable (the address of the application's MPI_Request, or of its Fortran INTEGER
// request: fortran/request_variables.h) -> each thread's latest wait, test or free of it. The
// variable, not only the value: a second thread that waits on a shared request after the first
// completed it finds MPI_REQUEST_NULL there, and the program is just as wrong as when the two
// waits overlap.
ConcurrentHashMap<std::uintptr_t, hb::History>& g_completers = *new ConcurrentHashMap<std::uintptr_t, hb::History>;  // never destroyed

}  // namespace

void completion(fn::Id id, const CallArgs& args) {
  for_each_request(args, [&](const HandleArg& h, int j) {
    if (h.use == Use::In || !h.where) return;  // a copy (MPI_Request_get_status): no variable
    const MPI_Request value = static_cast<MPI_Request*>(h.where)[j];
    const std::uintptr_t variable = fortran::request_variable(id, h, j);
    std::remove_reference_t<decltype(g_completers)>::accessor a;
    if (value == MPI_REQUEST_NULL && !g_completers.find(a, variable)) return;
    if (a.empty()) g_completers.insert(a, variable);
    const hb::Event me = a->second.record(id);
    std::vector<hb::Event> others;
    a->second.unordered([&](const hb::Event& e) { others.push_back(e); });
    a.release();
    for (const hb::Event& e : others)
      hb::report_unordered(value == MPI_REQUEST_NULL
                               ? "request variable " + diag::hex(variable) + " (completed before: MPI_REQUEST_NULL now)"
                               : "request " + diag::hex(handle_bits(value)) + " (variable " + diag::hex(variable) + ")",
                           "a request is completed, tested or freed by one thread at a time, in an order the "
                           "program sets (MPI-4.0 §11.6.2)",
                           e, me);
  });
}

void requests_issued(fn::Id id, const CallArgs& args) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind != Kind::Request || !h.where || (h.use != Use::Out && h.use != Use::ArrayOut)) continue;
    for (int k = 0; k < (h.use == Use::Out ? 1 : h.count); ++k) g_completers.erase(fortran::request_variable(id, h, k));
  }
}

}  // namespace tsmpi::checks::unordered

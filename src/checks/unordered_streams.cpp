// The stream rule (MPICH's MPIX_Stream, a serial execution context): every operation on one
// stream — a call naming it (MPIX_Stream_progress, the progress thread), or communication on a
// stream communicator made with it (MPIX_Stream_comm_create) — must be ordered by the program;
// two threads' unordered operations on one stream are erroneous whether or not they overlapped
// in this run (MPICH takes no lock for a stream's VCI: overlapping ones corrupt its state).
#include "checks/happens_before/history.h"
#include "checks/happens_before/unordered_report.h"
#include "checks/unordered.h"
#include "diagnostics/report.h"
#include "runtime/concurrent_maps.h"

namespace tsmpi::checks::unordered {
namespace {

// stream communicator -> the stream it was made with; stream -> each thread's latest operation.
ConcurrentHashMap<std::uintptr_t, std::uintptr_t>& g_stream_of = *new ConcurrentHashMap<std::uintptr_t, std::uintptr_t>;  // never destroyed
ConcurrentHashMap<std::uintptr_t, hb::History>& g_operations = *new ConcurrentHashMap<std::uintptr_t, hb::History>;  // never destroyed

// The first handle of `kind` a call reads (not the ones it writes).
bool first_read(const CallArgs& args, Kind kind, std::uintptr_t& bits) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind == kind && (h.use == Use::In || h.use == Use::InOut)) {
      bits = read_handle(kind, h.where, 0);
      return bits != null_handle(kind);
    }
  }
  return false;
}

}  // namespace

void stream_comm_created(const CallArgs& args) {
  std::uintptr_t stream = 0;
  if (!first_read(args, Kind::Stream, stream)) return;  // MPIX_STREAM_NULL: an ordinary communicator
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind != Kind::Comm || h.use != Use::Out) continue;
    const std::uintptr_t comm = read_handle(Kind::Comm, h.where, 0);
    if (comm == null_handle(Kind::Comm)) return;
    std::remove_reference_t<decltype(g_stream_of)>::accessor a;
    g_stream_of.insert(a, comm);
    a->second = stream;
  }
}

void stream_comm_freed(const HandleRef& comm) {
  if (comm.kind == Kind::Comm && !g_stream_of.empty()) g_stream_of.erase(comm.bits);
}

void stream_operation(fn::Id id, const CallArgs& args, bool on_communicator) {
  std::uintptr_t stream = 0;
  if (!first_read(args, Kind::Stream, stream)) {
    std::uintptr_t comm = 0;
    if (!on_communicator || g_stream_of.empty() || !first_read(args, Kind::Comm, comm)) return;
    std::remove_reference_t<decltype(g_stream_of)>::const_accessor c;
    if (!g_stream_of.find(c, comm)) return;
    stream = c->second;
  }
  std::remove_reference_t<decltype(g_operations)>::accessor a;
  g_operations.insert(a, stream);
  const hb::Event me = a->second.record(id);
  std::vector<hb::Event> others;
  a->second.unordered([&](const hb::Event& e) { others.push_back(e); });
  a.release();
  for (const hb::Event& e : others)
    hb::report_unordered("stream " + diag::hex(stream),
                         "operations on one MPIX_Stream (a serial execution context: the stream itself, or a "
                         "communicator made with MPIX_Stream_comm_create on it) must be ordered by the program",
                         e, me);
}

}  // namespace tsmpi::checks::unordered

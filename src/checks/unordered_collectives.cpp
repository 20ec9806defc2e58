#include "checks/happens_before/history.h"
#include "checks/happens_before/unordered_report.h"
#include "checks/unordered.h"
#include "diagnostics/report.h"
#include "runtime/concurrent_maps.h"

namespace tsmpi::checks::unordered {
namespace {

// (kind, handle) -> each thread's latest collective call on it.
ConcurrentHashMap<std::uint64_t, hb::History>& g_collectives = *new ConcurrentHashMap<std::uint64_t, hb::History>;  // never destroyed

std::uint64_t key_of(const HandleRef& h) { return (static_cast<std::uint64_t>(h.bits) << 4) | static_cast<std::uint64_t>(h.kind); }

}  // namespace

void collective(fn::Id id, const HandleRef& object, bool frees) {
  if (object.kind != Kind::Comm && object.kind != Kind::Win && object.kind != Kind::File) return;
  if (object.bits == null_handle(object.kind)) return;
  std::remove_reference_t<decltype(g_collectives)>::accessor a;
  g_collectives.insert(a, key_of(object));
  const hb::Event& mine = a->second.record(id);
  const hb::Event me = mine;
  std::vector<hb::Event> others;
  a->second.unordered([&](const hb::Event& e) { others.push_back(e); });
  a.release();
  if (others.empty()) return;
  const std::string object_name = std::string(kind_name(object.kind)) + " " + diag::hex(object.bits);
  for (const hb::Event& e : others)
    hb::report_unordered(object_name,
                         std::string(frees ? "a free and a collective call" : "collective calls") +
                             " on one " + kind_name(object.kind) +
                             " must be ordered by the program (MPI-4.0 §11.6.1: the threads of a process "
                             "make the collective calls of a communicator in one order)",
                         e, me);
}

void collective_freed(const HandleRef& object) {
  if (object.kind == Kind::Comm || object.kind == Kind::Win || object.kind == Kind::File) g_collectives.erase(key_of(object));
}

}  // namespace tsmpi::checks::unordered

#include "checks/concurrent_collectives.h"

#include "runtime/concurrent_maps.h"

#include <string>

#include "checks/mark.h"

namespace tsmpi::checks {
namespace {

// (kind, handle) -> the thread in a collective on it.
using Occupancy = ConcurrentHashMap<std::uint64_t, Mark>;
Occupancy g_occupied;

std::uint64_t key_of(const HandleRef& h) { return (static_cast<std::uint64_t>(h.bits) << 4) | static_cast<std::uint64_t>(h.kind); }

std::string describe(const HandleRef& h) { return std::string(kind_name(h.kind)) + " " + diag::hex(h.bits); }

}  // namespace

CollectiveEntry::CollectiveEntry(const HandleRef& object, fn::Id id, bool frees_object) : object_(object) {
  if (object.kind != Kind::Comm && object.kind != Kind::Win && object.kind != Kind::File) return;
  if (object.bits == null_handle(object.kind)) return;
  Mark me = mark_call(id);
  Mark other;
  {
    Occupancy::accessor a;
    if (frees_object) {
      if (!g_occupied.find(a, key_of(object))) return;
    } else if (g_occupied.insert(a, key_of(object))) {
      a->second = me;
      occupied_ = true;
      return;
    }
    other = a->second;
  }
  if (other.thread_index == me.thread_index) return;
  diag::report_error("two threads in collective calls on the same " + describe(object) + " at once: " +
                         fn_name(other.fn) + " and " + fn_name(id),
                     {involved(other, "began first, in"), involved(me, "in")});
}

CollectiveEntry::~CollectiveEntry() {
  if (!occupied_) return;
  Occupancy::accessor a;
  if (g_occupied.find(a, key_of(object_))) g_occupied.erase(a);
}

}  // namespace tsmpi::checks

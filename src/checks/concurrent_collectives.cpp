#include "checks/concurrent_collectives.h"

#include <tbb/concurrent_hash_map.h>

#include <cstdio>
#include <memory>

#include "diagnostics/report.h"
#include "diagnostics/threads.h"
#include "runtime/function_table.h"

namespace tsmpi::checks {
namespace {

struct Occupant {
  int fn = -1;
  int thread_index = 0;
  pid_t tid = 0;
  std::shared_ptr<diag::Backtrace> stack;
};
// (kind, handle) -> the thread in a collective on it.
using Occupancy = tbb::concurrent_hash_map<std::uint64_t, Occupant>;
Occupancy g_occupied;

std::uint64_t key_of(const HandleRef& h) { return (static_cast<std::uint64_t>(h.bits) << 4) | static_cast<std::uint64_t>(h.kind); }

std::string describe(const HandleRef& h) {
  char text[64];
  std::snprintf(text, sizeof text, "%s %#lx", kind_name(h.kind), static_cast<unsigned long>(h.bits));
  return text;
}

}  // namespace

CollectiveEntry::CollectiveEntry(const HandleRef& object, fn::Id id) : object_(object) {
  if (object.kind != Kind::Comm && object.kind != Kind::Win && object.kind != Kind::File) return;
  if (object.bits == null_handle(object.kind)) return;
  diag::ThreadInfo& me = diag::this_thread();
  auto stack = std::make_shared<diag::Backtrace>();
  diag::capture_backtrace(*stack, 3);
  Occupant other;
  {
    Occupancy::accessor a;
    if (g_occupied.insert(a, key_of(object))) {
      a->second = Occupant{id, me.index, me.tid, std::move(stack)};
      occupied_ = true;
      return;
    }
    other = a->second;
  }
  if (other.thread_index == me.index) return;
  diag::report_error("two threads in collective calls on the same " + describe(object) + " at once: " +
                         kFunctions[other.fn].name + " and " + kFunctions[id].name,
                     {{other.thread_index, other.tid, std::string("in ") + kFunctions[other.fn].name + " (began first)",
                       other.stack.get()},
                      {me.index, me.tid, std::string("in ") + kFunctions[id].name, stack.get()}});
}

CollectiveEntry::~CollectiveEntry() {
  if (!occupied_) return;
  Occupancy::accessor a;
  if (g_occupied.find(a, key_of(object_))) g_occupied.erase(a);
}

}  // namespace tsmpi::checks

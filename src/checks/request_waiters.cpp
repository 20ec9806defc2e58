#include "checks/request_waiters.h"

#include <tbb/concurrent_hash_map.h>

#include <cstdio>
#include <memory>

#include "checks/buffer_conflicts.h"
#include "diagnostics/report.h"
#include "diagnostics/threads.h"
#include "runtime/function_table.h"

namespace tsmpi::checks {
namespace {

struct Waiter {
  int fn = -1;
  int thread_index = 0;
  pid_t tid = 0;
  std::shared_ptr<diag::Backtrace> stack;
};
using Waiters = tbb::concurrent_hash_map<std::uintptr_t, Waiter>;
Waiters g_waiters;

// Calls f(slot value) for each request slot of the call's request arguments.
template <class F>
void for_each_request(const CallArgs& args, F&& f) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind != Kind::Request || h.use == Use::Out || h.use == Use::ArrayOut || h.count < 0) continue;
    for (int j = 0; j < h.count; ++j) f(h, j);
  }
}

}  // namespace

RequestWaiters::RequestWaiters(const CallArgs& args, fn::Id id) : args_(args) {
  if (args.handle_count == 0) return;
  diag::ThreadInfo& me = diag::this_thread();
  std::shared_ptr<diag::Backtrace> stack;
  for_each_request(args, [&](const HandleArg& h, int j) {
    std::uintptr_t r = read_handle(Kind::Request, h.where, j);
    before_.push_back(r);
    if (r == null_handle(Kind::Request)) return;
    if (!stack) {
      stack = std::make_shared<diag::Backtrace>();
      diag::capture_backtrace(*stack, 3);
    }
    Waiter other;
    {
      Waiters::accessor a;
      if (g_waiters.insert(a, r)) {
        a->second = Waiter{id, me.index, me.tid, stack};
        occupied_.push_back(r);
        return;
      }
      other = a->second;
    }
    if (other.thread_index == me.index) return;
    char text[160];
    std::snprintf(text, sizeof text, "request %#lx completed by two threads at once: %s and %s",
                  static_cast<unsigned long>(r), kFunctions[other.fn].name, kFunctions[id].name);
    diag::report_error(text, {{other.thread_index, other.tid, std::string("in ") + kFunctions[other.fn].name + " (began first)",
                               other.stack.get()},
                              {me.index, me.tid, std::string("in ") + kFunctions[id].name, stack.get()}});
  });
}

void RequestWaiters::done(int rc, bool freed) {
  if (before_.empty()) return;
  std::size_t k = 0;
  for_each_request(args_, [&](const HandleArg& h, int j) {
    std::uintptr_t was = before_[k++];
    if (was == null_handle(Kind::Request)) return;
    // A completed nonpersistent request is set to MPI_REQUEST_NULL; a freed one is gone.
    bool ended = (freed && rc == MPI_SUCCESS) || read_handle(Kind::Request, h.where, j) == null_handle(Kind::Request);
    if (ended) end_buffer_use(was);
  });
}

RequestWaiters::~RequestWaiters() {
  for (std::uintptr_t r : occupied_) {
    Waiters::accessor a;
    if (g_waiters.find(a, r)) g_waiters.erase(a);
  }
}

}  // namespace tsmpi::checks

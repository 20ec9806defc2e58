#include "checks/request_waiters.h"

#include "checks/happens_before/clock.h"
#include "checks/request_slots.h"

#include "runtime/concurrent_maps.h"

#include <memory>

#include "checks/buffer_conflicts.h"
#include "checks/mark.h"

namespace tsmpi::checks {
namespace {

struct Waiter {
  std::uint64_t issue = 0;  // which request with this value (g_issued), 0 if never seen made
  Mark mark;
};
using Waiters = ConcurrentHashMap<std::uintptr_t, Waiter>;
Waiters g_waiters;
std::vector<std::uintptr_t> g_shared;  // written at MPI_Init only
// How many times the MPI returned each request value: tells a reused value from the request
// another thread still waits on (the MPI frees a request inside the call that completes it).
using Issued = ConcurrentHashMap<std::uintptr_t, std::uint64_t>;
Issued g_issued;

std::uint64_t issue_of(std::uintptr_t r) {
  Issued::const_accessor a;
  return g_issued.find(a, r) ? a->second : 0;
}

bool shared_request(std::uintptr_t r) {
  if (mpich_builtin(r)) return true;  // a predefined request object
  for (std::uintptr_t s : g_shared)
    if (s == r) return true;
  return false;
}


}  // namespace

RequestWaiters::RequestWaiters(const CallArgs& args, fn::Id id) : args_(args) {
  if (args.handle_count == 0) return;
  Mark me;
  for_each_request(args, [&](const HandleArg& h, int j) {
    std::uintptr_t r = read_handle(Kind::Request, h.where, j);
    before_.push_back(r);
    if (r == null_handle(Kind::Request) || shared_request(r)) return;
    if (!me.thread) me = mark_call(id);
    Waiter other;
    const std::uint64_t issue = issue_of(r);
    {
      Waiters::accessor a;
      if (g_waiters.insert(a, r)) {
        a->second = Waiter{issue, me};
        occupied_.push_back(r);
        return;
      }
      other = a->second;
    }
    if (other.mark.thread_index == me.thread_index || other.issue != issue) return;
    if (hb::g_on) return;  // unordered_completions reports it, with the program's ordering
    diag::report_error("request " + diag::hex(r) + " completed by two threads at once: " + fn_name(other.mark.fn) +
                           " and " + fn_name(id),
                       {involved(other.mark, "began first, in"), involved(me, "in")});
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

void note_issued(const CallArgs& args) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind != Kind::Request || h.use != Use::Out) continue;
    std::uintptr_t r = read_handle(Kind::Request, h.where, 0);
    if (r == null_handle(Kind::Request)) continue;
    Issued::accessor a;
    g_issued.insert(a, r);
    ++a->second;
  }
}

void learn_shared_requests() {
  int value = 0;
  MPI_Request r[4];
  PMPI_Isend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r[0]);
  PMPI_Irecv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r[1]);
  PMPI_Issend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r[2]);
  PMPI_Ibsend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r[3]);
  for (MPI_Request q : r) g_shared.push_back(handle_bits(q));
  PMPI_Waitall(4, r, MPI_STATUSES_IGNORE);
}

RequestWaiters::~RequestWaiters() {
  for (std::uintptr_t r : occupied_) {
    Waiters::accessor a;
    if (g_waiters.find(a, r)) g_waiters.erase(a);
  }
}

}  // namespace tsmpi::checks

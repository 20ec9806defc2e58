#include "matching/thread_rank_reservations.h"

#include <atomic>
#include <vector>

namespace tsmpi::matching::thread_ranks {
namespace {
struct Reserved {
  const void* comm;
  void* message;
  MPI_Status status;
};
// Probe order, earliest first: a receive takes the earliest reservation it accepts.
thread_local std::vector<Reserved> tl_reserved;
constinit thread_local int tl_count = 0;
std::atomic<long long> g_reserved{0};

bool accepts(int source, int tag, const MPI_Status& s) {
  return (source == MPI_ANY_SOURCE || source == s.MPI_SOURCE) && (tag == MPI_ANY_TAG || tag == s.MPI_TAG);
}

std::vector<Reserved>::iterator find_entry(const void* comm, int source, int tag) {
  for (auto it = tl_reserved.begin(); it != tl_reserved.end(); ++it)
    if (it->comm == comm && accepts(source, tag, it->status)) return it;
  return tl_reserved.end();
}
}  // namespace

bool any() { return tl_count > 0; }

void* find(const void* comm, int source, int tag, MPI_Status* status) {
  auto it = find_entry(comm, source, tag);
  if (it == tl_reserved.end()) return nullptr;
  if (status != MPI_STATUS_IGNORE) *status = it->status;
  return it->message;
}

void* take(const void* comm, int source, int tag, MPI_Status* status) {
  auto it = find_entry(comm, source, tag);
  if (it == tl_reserved.end()) return nullptr;
  if (status != MPI_STATUS_IGNORE) *status = it->status;
  void* m = it->message;
  tl_reserved.erase(it);
  --tl_count;
  return m;
}

void reserve(const void* comm, void* message, const MPI_Status& status) {
  tl_reserved.push_back({comm, message, status});
  ++tl_count;
  g_reserved.fetch_add(1, std::memory_order_relaxed);
}

long long reserved_total() { return g_reserved.load(std::memory_order_relaxed); }

}  // namespace tsmpi::matching::thread_ranks

#include "matching/thread_rank_reservations.h"

#include <vector>

#include "matching/reservations.h"

namespace tsmpi::matching::thread_ranks {
namespace {
struct Reserved {
  const void* comm;
  void* message;
  MPI_Status status;
};
// Probe order, earliest first: a receive takes the earliest reservation it accepts.
thread_local std::vector<Reserved> tl_reserved;
constinit TSMPI_TLS int tl_count = 0;  // tl_reserved.size(), read without the vector's TLS guard

std::vector<Reserved>::iterator find_entry(const void* comm, int source, int tag) {
  for (auto it = tl_reserved.begin(); it != tl_reserved.end(); ++it)
    if (it->comm == comm && envelope_matches(it->status, source, tag)) return it;
  return tl_reserved.end();
}
}  // namespace

bool any() { return tl_count > 0; }

void* find(const void* comm, int source, int tag, MPI_Status* status) {
  auto it = find_entry(comm, source, tag);
  if (it == tl_reserved.end()) return nullptr;
  copy_status(status, it->status);
  return it->message;
}

void* take(const void* comm, int source, int tag, MPI_Status* status) {
  auto it = find_entry(comm, source, tag);
  if (it == tl_reserved.end()) return nullptr;
  copy_status(status, it->status);
  void* m = it->message;
  tl_reserved.erase(it);
  --tl_count;
  return m;
}

void reserve(const void* comm, void* message, const MPI_Status& status) {
  tl_reserved.push_back({comm, message, status});
  ++tl_count;
}

}  // namespace tsmpi::matching::thread_ranks

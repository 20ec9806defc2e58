#include "matching/reservations.h"

#include <mutex>
#include <set>
#include <vector>

#include "matching/match_stats.h"
#include "matching/mpi_calls.h"

namespace tsmpi::matching {
namespace {

struct ThreadReservations;

// Every thread's list, and the reservations of threads that have ended.
struct Registry {
  std::mutex mutex;
  std::set<ThreadReservations*> live;
  std::vector<Reserved> orphans;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may end after static destruction
  return *r;
}

struct ThreadReservations {
  std::mutex mutex;  // uncontended: taken by the owner, and by MPI_Finalize's report
  std::vector<Reserved> list;
  ThreadReservations() {
    std::lock_guard<std::mutex> g(registry().mutex);
    registry().live.insert(this);
  }
  ~ThreadReservations() {
    std::lock_guard<std::mutex> g(registry().mutex);
    registry().live.erase(this);
    for (auto& r : list) registry().orphans.push_back(r);
  }
};

ThreadReservations& mine() {
  static thread_local ThreadReservations r;
  return r;
}

// Earliest first: among several reservations the one probed first is received first.
std::vector<Reserved>::iterator find_in(std::vector<Reserved>& list, MPI_Comm comm, int source, int tag) {
  for (auto it = list.begin(); it != list.end(); ++it)
    if (it->comm == comm && envelope_matches(it->status, source, tag)) return it;
  return list.end();
}

}  // namespace

std::optional<Reserved> find_reserved(MPI_Comm comm, int source, int tag) {
  if (!thread_has_reservations()) return std::nullopt;
  ThreadReservations& t = mine();
  std::lock_guard<std::mutex> g(t.mutex);
  auto it = find_in(t.list, comm, source, tag);
  if (it == t.list.end()) return std::nullopt;
  return *it;
}

std::optional<Reserved> take_reserved(MPI_Comm comm, int source, int tag) {
  if (!thread_has_reservations()) return std::nullopt;
  ThreadReservations& t = mine();
  std::lock_guard<std::mutex> g(t.mutex);
  auto it = find_in(t.list, comm, source, tag);
  if (it == t.list.end()) return std::nullopt;
  Reserved r = *it;
  t.list.erase(it);
  --tl_thread.reserved;
  return r;
}

void reserve(const Reserved& r) {
  ThreadReservations& t = mine();
  std::lock_guard<std::mutex> g(t.mutex);
  t.list.push_back(r);
  ++tl_thread.reserved;
}

std::size_t finish_unreceived(std::FILE* out, const char* rank_label, bool report) {
  std::vector<Reserved> left;
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    for (ThreadReservations* t : reg.live) {
      std::lock_guard<std::mutex> tg(t->mutex);
      left.insert(left.end(), t->list.begin(), t->list.end());
      t->list.clear();
    }
    left.insert(left.end(), reg.orphans.begin(), reg.orphans.end());
    reg.orphans.clear();
  }
  tl_thread.reserved = 0;
  for (Reserved& r : left) {
    int bytes = 0;
    PMPI_Get_count(&r.status, MPI_BYTE, &bytes);
    if (report) {
      char name[MPI_MAX_OBJECT_NAME] = "";
      int len = 0;
      PMPI_Comm_get_name(r.comm, name, &len);
      std::fprintf(out,
                   "tsmpi: rank %s: probed message never received: communicator %s, source %d, tag %d, "
                   "%d bytes\n",
                   rank_label, len ? name : "(unnamed)", r.status.MPI_SOURCE, r.status.MPI_TAG, bytes);
    }
    // Received into scratch so the sender (a rendezvous send waits for it) and the MPI can finish.
    std::vector<char> scratch(bytes > 0 ? bytes : 1);
    mpi::mrecv(scratch.data(), bytes, MPI_BYTE, &r.message, MPI_STATUS_IGNORE);
  }
  count(g_match_stats.unreceived, left.size());
  return left.size();
}

}  // namespace tsmpi::matching

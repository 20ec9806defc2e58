#include "matching/reservations.h"

#include <mutex>
#include <vector>

#include "matching/match_stats.h"
#include "matching/mpi_calls.h"
#include "matching/per_thread_lists.h"
#include "runtime/one_write.h"

namespace tsmpi::matching {
namespace {

using Lists = PerThreadLists<Reserved>;

// Earliest first: among several reservations the one probed first is received first.
std::vector<Reserved>::iterator find_in(std::vector<Reserved>& list, MPI_Comm comm, int source, int tag) {
  for (auto it = list.begin(); it != list.end(); ++it)
    if (it->comm == comm && envelope_matches(it->status, source, tag)) return it;
  return list.end();
}

}  // namespace

std::optional<Reserved> find_reserved_slow(MPI_Comm comm, int source, int tag) {
  Lists::List& t = Lists::mine();
  auto it = find_in(t.items, comm, source, tag);
  if (it == t.items.end()) return std::nullopt;
  return *it;
}

std::optional<Reserved> take_reserved_slow(MPI_Comm comm, int source, int tag) {
  Lists::List& t = Lists::mine();
  auto it = find_in(t.items, comm, source, tag);
  if (it == t.items.end()) return std::nullopt;
  Reserved r = *it;
  t.items.erase(it);
  --tl_thread.reserved;
  return r;
}

void reserve(const Reserved& r) {
  Lists::List& t = Lists::mine();
  t.items.push_back(r);
  ++tl_thread.reserved;
}

bool probe_reserved_slow(MPI_Comm comm, int source, int tag, MPI_Status* status) {
  auto r = find_reserved_slow(comm, source, tag);
  if (!r) return false;
  count(g_match_stats.reprobes);
  copy_status(status, r->status);
  return true;
}

bool hand_over_reserved_slow(MPI_Comm comm, int source, int tag, MPI_Message* message, MPI_Status* status) {
  auto r = take_reserved_slow(comm, source, tag);
  if (!r) return false;
  count(g_match_stats.taken);
  *message = r->message;
  copy_status(status, r->status);
  return true;
}

void reserve_probed(const Reserved& r, MPI_Status* status) {
  reserve(r);
  count(g_match_stats.reserved);
  copy_status(status, r.status);
}

void report_unreceived(std::FILE* out, const char* rank_label, MPI_Comm comm, const MPI_Status& status,
                       const char* what) {
  int bytes = 0, len = 0;
  char name[MPI_MAX_OBJECT_NAME] = "";
  PMPI_Get_count(&status, MPI_BYTE, &bytes);
  PMPI_Comm_get_name(comm, name, &len);
  std::fflush(out);
  write_formatted(fileno(out), "tsmpi: rank %s: %s: communicator %s, source %d, tag %d, %d bytes\n", rank_label, what,
                  len ? name : "(unnamed)", status.MPI_SOURCE, status.MPI_TAG, bytes);
}

std::size_t finish_unreceived(std::FILE* out, const char* rank_label, bool report) {
  std::vector<Reserved> left = Lists::take_all();
  tl_thread.reserved = 0;
  for (Reserved& r : left) {
    int bytes = 0;
    PMPI_Get_count(&r.status, MPI_BYTE, &bytes);
    if (report) report_unreceived(out, rank_label, r.comm, r.status);
    // Received into scratch so the sender (a rendezvous send waits for it) and the MPI can finish.
    std::vector<char> scratch(bytes > 0 ? bytes : 1);
    mpi::mrecv(scratch.data(), bytes, MPI_BYTE, &r.message, MPI_STATUS_IGNORE);
  }
  count(g_match_stats.unreceived, left.size());
  return left.size();
}

}  // namespace tsmpi::matching

#include "ranks/operations.h"

#include <cstdlib>

#include "ranks/pools.h"
#include "ranks/wake.h"
#include "runtime/config.h"

namespace tsmpi::ranks {

std::atomic<std::int64_t> g_spin_ns{2'000};  // wake.h
std::atomic<int> g_yields{64};               // wake.h
constinit TSMPI_TLS std::int64_t tl_spin_ns = 0;

char* Packet::reserve(std::size_t n) {
  if (n <= kInlineBytes) return data = small;
  heap = static_cast<char*>(std::malloc(n));
  return data = heap;
}

namespace {
// Idents: a thread's number in the high 24 bits, a count of its packets in the low 40.
std::atomic<std::uint64_t> g_ident_threads{0};
constinit TSMPI_TLS std::uint64_t tl_next_ident = 0;
}  // namespace

std::uint64_t new_ident() {
  if ((tl_next_ident & ((std::uint64_t{1} << 40) - 1)) == 0)
    tl_next_ident = (g_ident_threads.fetch_add(1, std::memory_order_relaxed) + 1) << 40 | 1;
  return tl_next_ident++;
}

Packet* new_packet() { return new_packet(new_ident()); }

Packet* new_packet(std::uint64_t ident) {
  Packet* p = Pool<Packet>::make();
  p->ident = ident;
  return p;
}

void free_packet(Packet* p) {
  std::free(p->heap);
  Pool<Packet>::destroy(p);
}

}  // namespace tsmpi::ranks

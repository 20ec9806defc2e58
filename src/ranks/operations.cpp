#include "ranks/operations.h"

#include <cstdlib>

#include "ranks/pools.h"
#include "ranks/wake.h"
#include "runtime/config.h"

namespace tsmpi::ranks {

std::atomic<std::int64_t> g_spin_ns{2'000};  // wake.h
constinit TSMPI_TLS std::int64_t tl_spin_ns = 0;

char* Packet::reserve(std::size_t n) {
  if (n <= kInlineBytes) return data = small;
  heap = static_cast<char*>(std::malloc(n));
  return data = heap;
}

Packet* new_packet() { return Pool<Packet>::make(); }

void free_packet(Packet* p) {
  std::free(p->heap);
  Pool<Packet>::destroy(p);
}

}  // namespace tsmpi::ranks

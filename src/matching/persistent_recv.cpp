#include "matching/persistent_recv.h"

#include "runtime/concurrent_maps.h"

#include "runtime/activation.h"
#include "runtime/handles.h"

namespace tsmpi::matching {
namespace {

struct Entry {
  PersistentRecv recv;
  MPI_Request substitute = MPI_REQUEST_NULL;
};
using Map = ConcurrentHashMap<std::uintptr_t, Entry>;
Map& table() {
  static Map* m = new Map;
  return *m;
}

}  // namespace

std::atomic<int> g_substitutes{0};

void remember_persistent_recv(MPI_Request request, const PersistentRecv& p) {
  // From now on MPI_Request_free must forget it, and waits may meet substitutes.
  activate_request_completion();
  Map::accessor a;
  table().insert(a, handle_bits(request));
  a->second = Entry{p, MPI_REQUEST_NULL};
}

void forget_persistent(MPI_Request request) {
  Map::accessor a;
  if (!table().find(a, handle_bits(request))) return;
  if (a->second.substitute != MPI_REQUEST_NULL) g_substitutes.fetch_sub(1);
  table().erase(a);
}

std::optional<PersistentRecv> persistent_recv_of(MPI_Request request) {
  Map::const_accessor a;
  if (!table().find(a, handle_bits(request))) return std::nullopt;
  return a->second.recv;
}

void set_substitute(MPI_Request request, MPI_Request substitute) {
  Map::accessor a;
  if (!table().find(a, handle_bits(request))) return;
  if (a->second.substitute == MPI_REQUEST_NULL) g_substitutes.fetch_add(1);
  a->second.substitute = substitute;
}

MPI_Request substitute_of(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return request;
  Map::const_accessor a;
  if (!table().find(a, handle_bits(request)) || a->second.substitute == MPI_REQUEST_NULL) return request;
  return a->second.substitute;
}

void substitute_completed(MPI_Request request) {
  Map::accessor a;
  if (!table().find(a, handle_bits(request)) || a->second.substitute == MPI_REQUEST_NULL) return;
  a->second.substitute = MPI_REQUEST_NULL;
  g_substitutes.fetch_sub(1);
}

MPI_Request detach_substitute(MPI_Request request) {
  Map::accessor a;
  if (!table().find(a, handle_bits(request))) return MPI_REQUEST_NULL;
  MPI_Request s = a->second.substitute;
  if (s != MPI_REQUEST_NULL) g_substitutes.fetch_sub(1);
  table().erase(a);
  return s;
}

}  // namespace tsmpi::matching

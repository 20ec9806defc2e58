#include "ranks/operations.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "locking/serialize_lock.h"
#include "ranks/comm.h"
#include "ranks/transport.h"

namespace tsmpi::ranks {

namespace {
// Packet pool (seed 002): a per-thread cache in front of a shared stack, so a steady stream of
// messages allocates nothing. Senders take packets and receivers free them, so caches overflow
// into the shared stack and refill from it.
constexpr std::size_t kCacheMax = 64;
struct SharedPool {
  std::mutex mu;
  std::vector<Packet*> free;
};
SharedPool& shared_pool() {
  static SharedPool* p = new SharedPool;  // never destroyed: threads may end after exit begins
  return *p;
}
struct Cache {
  std::vector<Packet*> free;
  ~Cache() {
    SharedPool& s = shared_pool();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), free.begin(), free.end());
  }
};
thread_local Cache tl_cache;
}  // namespace

char* Packet::reserve(std::size_t n) {
  if (n <= kInlineBytes) return data = small;
  heap = static_cast<char*>(std::malloc(n));
  return data = heap;
}

Packet* new_packet() {
  auto& c = tl_cache.free;
  if (c.empty()) {
    SharedPool& s = shared_pool();
    std::lock_guard g(s.mu);
    std::size_t take = std::min(s.free.size(), kCacheMax / 2);
    c.insert(c.end(), s.free.end() - static_cast<long>(take), s.free.end());
    s.free.resize(s.free.size() - take);
  }
  if (c.empty()) return new Packet;
  Packet* p = c.back();
  c.pop_back();
  return p;
}

void free_packet(Packet* p) {
  std::free(p->heap);
  p->heap = nullptr;
  p->data = nullptr;
  p->sender = nullptr;
  p->ack_proc = -1;
  p->comm = nullptr;
  p->next = nullptr;
  auto& c = tl_cache.free;
  c.push_back(p);
  if (c.size() > kCacheMax) {
    SharedPool& s = shared_pool();
    std::lock_guard g(s.mu);
    s.free.insert(s.free.end(), c.begin() + kCacheMax / 2, c.end());
    c.resize(kCacheMax / 2);
  }
}

void set_status(MPI_Status* status, int src, int tag, int err, std::size_t bytes, bool cancelled) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = src;
  status->MPI_TAG = tag;
  status->MPI_ERROR = err;
  serial::locked([&] { return PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(bytes)); });
  serial::locked([&] { return PMPI_Status_set_cancelled(status, cancelled ? 1 : 0); });
}

void RecvOp::fill(MPI_Status* status) const { set_status(status, r_src, r_tag, r_err, r_bytes, cancelled); }

namespace {
void result(RecvOp* r, int src, int tag, std::size_t bytes) {
  r->r_src = src;
  r->r_tag = tag;
  r->r_bytes = std::min(bytes, r->capacity);
  r->r_err = bytes > r->capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}
}  // namespace

void deliver(Packet* p, RecvOp* r) {
  result(r, p->src, p->tag, p->bytes);
  if (p->data) unpack(p->data, r->r_bytes, r->buf);
  else copy(p->sender->buf, r->buf, r->r_bytes);
  if (p->sender) p->sender->complete();
  if (p->ack_proc >= 0) remote_ack(p->comm->family, p->ack_proc, p->ack_id);
}

void deliver_direct(const SendOp& s, int src, int tag, RecvOp* r) {
  result(r, src, tag, s.bytes);
  copy(s.buf, r->buf, r->r_bytes);
}

}  // namespace tsmpi::ranks

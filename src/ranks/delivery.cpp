// Moving a message into a receive, and statuses (operations.h): the part of a message's life
// that calls the MPI (datatype copies, status fields, the acknowledgement of a synchronous send).
#include <algorithm>
#include <cstring>

#include "locking/backoff.h"
#include "locking/serialize_lock.h"
#include "ranks/comm.h"
#include "ranks/operations.h"
#include "ranks/transport.h"
#include "runtime/status_fields.h"

namespace tsmpi::ranks {

void set_status(MPI_Status* status, int src, int tag, int err, std::size_t bytes, bool cancelled, bool inside_mpi) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = src;
  status->MPI_TAG = tag;
  status->MPI_ERROR = err;
  if (kStatusFieldsDirect || inside_mpi) set_status_fields(status, static_cast<MPI_Count>(bytes), cancelled);
  else serial::locked([&] {
    set_status_fields(status, static_cast<MPI_Count>(bytes), cancelled);
    return MPI_SUCCESS;
  });
}

void RecvOp::fill(MPI_Status* status, bool inside_mpi) const {
  set_status(status, r_src, r_tag, r_err, r_bytes, cancelled, inside_mpi);
}

namespace {
void result(RecvOp* r, int src, int tag, std::size_t bytes) {
  r->r_src = src;
  r->r_tag = tag;
  r->r_bytes = std::min(bytes, r->capacity);
  r->r_err = bytes > r->capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}
}  // namespace

namespace {
// Below this a copy is not shared: the sender would notice it too late to take a part.
constexpr std::size_t kShareFrom = 128 * 1024;
constexpr std::size_t kChunk = 32 * 1024;

// The receiver's side of a shared copy: publishes it, takes chunks, waits for the sender's.
void shared_copy(SendOp* s, const void* from, void* to, std::size_t bytes) {
  SharedCopy& c = s->share;
  c.from = static_cast<const char*>(from);
  c.to = static_cast<char*>(to);
  c.bytes = bytes;
  const auto n = static_cast<std::uint32_t>((bytes + kChunk - 1) / kChunk);
  c.next.store(0, std::memory_order_relaxed);
  c.finished.store(0, std::memory_order_relaxed);
  c.chunks.store(n, std::memory_order_release);
  help_copy(c);
  // The sender finishes the chunks it took (it may have been preempted inside one).
  for (Backoff b; c.finished.load(std::memory_order_acquire) != n;) b.pause();
  c.chunks.store(0, std::memory_order_relaxed);  // a later look by the sender finds nothing to take
}
}  // namespace

void help_copy(SharedCopy& s) {
  const std::uint32_t n = s.chunks.load(std::memory_order_acquire);
  if (n == 0) return;
  for (std::uint32_t i; (i = s.next.fetch_add(1, std::memory_order_relaxed)) < n;) {
    const std::size_t off = std::size_t{i} * kChunk;
    std::memcpy(s.to + off, s.from + off, std::min(kChunk, s.bytes - off));
    s.finished.fetch_add(1, std::memory_order_release);
  }
}

void deliver(Packet* p, RecvOp* r) {
  result(r, p->src, p->tag, p->bytes);
  if (p->data) unpack(p->data, r->r_bytes, r->buf);
  else if (r->r_bytes >= kShareFrom && contiguous(p->sender->buf) && contiguous(r->buf))
    shared_copy(p->sender, p->sender->buf.buf, const_cast<void*>(r->buf.buf), r->r_bytes);
  else copy(p->sender->buf, r->buf, r->r_bytes);
  if (p->sender) p->sender->complete();
  if (p->ack_proc >= 0) remote_ack(p->comm->family, p->ack_proc, p->ack_id);
}

void deliver_taken(Packet* head) {
  for (Packet* p = head; p;) {
    Packet* next = p->next;
    RecvOp* r = p->taker;
    deliver(p, r);
    free_packet(p);
    r->complete();
    p = next;
  }
}

bool deliver_in_place(const char* data, std::size_t bytes, int src, int tag, RecvOp* r) {
  if (!contiguous_without_mpi(r->buf)) return false;
  result(r, src, tag, bytes);
  if (r->r_bytes) std::memcpy(const_cast<void*>(r->buf.buf), data, r->r_bytes);
  return true;
}

void deliver_direct(const SendOp& s, int src, int tag, RecvOp* r) {
  result(r, src, tag, s.bytes);
  copy(s.buf, r->buf, r->r_bytes);
}

}  // namespace tsmpi::ranks

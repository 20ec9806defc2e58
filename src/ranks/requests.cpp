#include "ranks/requests.h"

#include <mutex>
#include <unordered_map>

#include "matching/mpi_calls.h"
#include "ranks/errors.h"
#include "ranks/p2p.h"
#include "ranks/pools.h"
#include "ranks/request_space.h"

namespace tsmpi::ranks {

namespace {
void unref(Request* r) {
  // The last reference needs no read-modify-write: nobody else can drop one (a request whose
  // operation completed is held by the program alone).
  if (r->refs.load(std::memory_order_acquire) == 1 || r->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    Pool<Request>::destroy(r);
}

void part_of(void* owner) { part_done(static_cast<Request*>(owner)); }

// The generalized requests that stand for promoted requests (MPI_Request_c2f), so that MPI_Cancel
// on one reaches the operation. Used only once a request has been promoted.
struct Promotions {
  std::mutex mu;
  std::unordered_map<std::uintptr_t, Request*> by_greq;
  std::atomic<bool> any{false};
};
Promotions& promotions() {
  static Promotions* p = new Promotions;
  return *p;
}

int status_of(const Request* r, MPI_Status* status, bool inside_mpi) {
  if (r->has_recv) {
    int err = r->recv.r_err != MPI_SUCCESS ? r->recv.r_err : r->err;
    set_status(status, r->recv.r_src, r->recv.r_tag, err, r->recv.r_bytes, r->recv.cancelled, inside_mpi);
    return err;
  }
  set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, r->err, 0, r->send.cancelled, inside_mpi);
  return r->err;
}

void complete_promoted(Request* r) {
  MPI_Request g = r->promoted.load();
  if (g == MPI_REQUEST_NULL || r->promoted_completed.exchange(true)) return;
  mpi::locked([&] { return PMPI_Grequest_complete(g); });
}
}  // namespace

namespace {
// Gives a made request its handle and the program that handle; false (r deleted) when the
// request space is full.
bool publish(Request* r, MPI_Request* out) {
  r->handle = make_request_handle(r);
  if (!r->handle) {
    Pool<Request>::destroy(r);
    return false;
  }
  *out = handle_from_bits<MPI_Request>(r->handle);
  return true;
}
}  // namespace

Request* new_request(Comm* c, int me, int parts, MPI_Request* out) {
  Request* r = Pool<Request>::make();
  r->comm = c;
  r->me = me;
  r->parts.store(parts, std::memory_order_relaxed);
  return publish(r, out) ? r : nullptr;
}

void count_send(Request* r) {
  r->send.then = part_of;
  r->send.owner = r;
}

void count_recv(Request* r) {
  r->has_recv = true;
  r->recv.then = part_of;
  r->recv.owner = r;
}

void part_done(Request* r) {
  // The last part needs no read-modify-write: nobody else holds a part (most requests have one).
  if (r->parts.load(std::memory_order_acquire) != 1 && r->parts.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (r->send.err != MPI_SUCCESS && r->err == MPI_SUCCESS) r->err = r->send.err;
  if (r->on_complete) r->on_complete();
  r->done.set();
  // Dekker with release(): done is set (seq_cst), then free_park read.
  if (r->free_park.load(std::memory_order_seq_cst) == 1 && r->free_park.exchange(2) == 1) matched_in(r)->unpark();
  // A promotion after this point sees done; one before it is seen here. Done::set and this
  // read are seq_cst, so a program that never promotes pays no fence here.
  if (promotions().any.load(std::memory_order_seq_cst)) {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // orders done before r->promoted's read
    complete_promoted(r);
  }
  unref(r);  // the operation's reference; the program's keeps the request until it is finished
}

void complete_unseen(Request* r) {
  if (r->has_recv) {
    r->recv.done.set_unseen();
  } else {
    r->send.done.set_unseen();
    if (r->send.err != MPI_SUCCESS && r->err == MPI_SUCCESS) r->err = r->send.err;
  }
  r->done.set_unseen();
  r->refs.store(1, std::memory_order_relaxed);  // the operation's reference is dropped
}

int finish(Request* r, MPI_Request* h, MPI_Status* status) {
  int err = status_of(r, status, false);
  if (r->persistent) {
    r->active = false;
    return err;
  }
  release_request_handle(r->handle);
  *h = MPI_REQUEST_NULL;
  unref(r);
  return err;
}

int peek(Request* r, MPI_Status* status) { return status_of(r, status, false); }

void release(Request* r, MPI_Request* h) {
  if (r->has_recv && !r->done.is() && (!r->persistent || r->active) && r->free_park.load() == 0) {
    Mailbox* b = matched_in(r);
    b->park(/*sweep=*/true);
    r->free_park.store(1, std::memory_order_seq_cst);
    if (r->done.is() && r->free_park.exchange(2) == 1) b->unpark();
  }
  release_request_handle(r->handle);
  *h = MPI_REQUEST_NULL;
  unref(r);
}

void cancel(Request* r) {
  if (r->has_recv) {
    if (!r->done.is()) cancel_recv(r->comm, r->me, Channel::kP2P, &r->recv);
    return;
  }
  // A send: also once complete (an eager message may still wait for its receive).
  cancel_send(&r->send);
}

void wait_for(Request* r) {
  wait_done(r->done, r->comm ? r->comm->family : nullptr, matched_in(r), r->has_recv ? nullptr : &r->send);
}

int persistent_init(Comm* c, int me, bool is_recv, const TypedBuffer& b, int peer, int tag, SendMode mode,
                    MPI_Request* out) {
  Request* r = Pool<Request>::make();
  r->comm = c;
  r->me = me;
  r->persistent = true;
  r->refs.store(1, std::memory_order_relaxed);  // the program's; each start adds the operation's
  r->buf = b;
  r->peer = peer;
  r->tag = tag;
  r->mode = mode;
  if (is_recv) count_recv(r);
  else count_send(r);
  return publish(r, out) ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int persistent_collective_init(Comm* c, int me, std::function<int(Request*)> start, MPI_Request* out) {
  Request* r = Pool<Request>::make();
  r->comm = c;
  r->me = me;
  r->persistent = true;
  r->refs.store(1, std::memory_order_relaxed);  // the program's; each start adds the operation's
  r->start_collective = std::move(start);
  return publish(r, out) ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int persistent_start(Request* r) {
  if (r->active) return MPI_ERR_REQUEST;  // MPI_Start on an active request is erroneous
  r->active = true;
  r->err = MPI_SUCCESS;
  r->parts.store(1, std::memory_order_relaxed);
  r->done.reset();
  if (r->start_collective) {
    r->refs.fetch_add(1, std::memory_order_relaxed);
    const int rc = r->start_collective(r);
    if (rc != MPI_SUCCESS) {  // not started (the collective raised it): complete with the error
      r->err = rc;
      part_done(r);
    }
    return rc;
  }
  r->send.done.reset();
  r->send.err = MPI_SUCCESS;
  r->recv.done.reset();
  r->refs.fetch_add(1, std::memory_order_relaxed);
  if (r->has_recv) {
    // A probe of this thread reserved a message the receive matches: it takes that one, as
    // MPI_Recv and MPI_Irecv do (address spaces under a probe policy).
    if (Packet* p = reserved_for(r->comm, r->peer, r->tag)) {
      recv_taken(p, r->buf, &r->recv);
      return MPI_SUCCESS;
    }
    return start_recv(r->comm, r->me, r->peer, r->tag, r->buf, Channel::kP2P, &r->recv);
  }
  int rc = start_send(r->comm, r->me, r->buf, r->peer, r->tag, r->mode, Channel::kP2P, &r->send);
  if (rc != MPI_SUCCESS) {
    r->send.err = rc;
    r->send.complete();
  }
  return MPI_SUCCESS;
}

// ---- promotion (MPI_Request_c2f) -----------------------------------------------------------

namespace {
int query_fn(void* extra, MPI_Status* status) { return status_of(static_cast<Request*>(extra), status, true); }

int free_fn(void* extra) {
  auto* r = static_cast<Request*>(extra);
  {
    Promotions& p = promotions();
    std::lock_guard g(p.mu);
    p.by_greq.erase(handle_bits(r->promoted.load()));
  }
  release_request_handle(r->handle);
  unref(r);  // the program's reference, which the generalized request took over
  return MPI_SUCCESS;
}

int cancel_fn(void* extra, int /*complete*/) {
  // Also when complete: an eager send completes at once, and its message may still be withdrawn.
  cancel(static_cast<Request*>(extra));
  return MPI_SUCCESS;
}
}  // namespace

MPI_Request promote(Request* r) {
  if (MPI_Request g = r->promoted.load(); g != MPI_REQUEST_NULL) return g;
  Promotions& p = promotions();
  p.any.store(true, std::memory_order_seq_cst);
  // The MPI's tests of the generalized request do not poll mailboxes: senders match from now on,
  // and what arrived for r before is matched here.
  g_senders_match.store(true, std::memory_order_seq_cst);
  if (Mailbox* b = matched_in(r)) b->poll();
  MPI_Request g = MPI_REQUEST_NULL;
  mpi::locked([&] { return PMPI_Grequest_start(query_fn, free_fn, cancel_fn, r, &g); });
  {
    std::lock_guard lk(p.mu);
    p.by_greq[handle_bits(g)] = r;
  }
  r->promoted.store(g);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (r->done.is()) complete_promoted(r);
  return g;
}

Request* promoted_request(MPI_Request g) {
  Promotions& p = promotions();
  if (!p.any.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard lk(p.mu);
  auto it = p.by_greq.find(handle_bits(g));
  return it == p.by_greq.end() ? nullptr : it->second;
}

}  // namespace tsmpi::ranks

#include "ranks/requests.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "matching/mpi_calls.h"
#include "ranks/errors.h"
#include "ranks/p2p.h"

namespace tsmpi::ranks {

namespace {
void unref(Request* r) {
  if (r->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete r;
}

int query_fn(void* extra, MPI_Status* status) {
  auto* r = static_cast<Request*>(extra);
  if (r->has_recv) {
    r->recv.fill(status, true);
    return r->recv.r_err != MPI_SUCCESS ? r->recv.r_err : r->err;
  }
  set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, r->err, 0, false, true);
  return r->err;
}

int free_fn(void* extra) {
  unref(static_cast<Request*>(extra));
  return MPI_SUCCESS;
}

thread_local Request* tl_cancelled = nullptr;  // cancelled inside MPI_Cancel, completed after it
thread_local bool tl_in_cancel = false;

int cancel_fn(void* extra, int complete) {
  auto* r = static_cast<Request*>(extra);
  if (complete || !r->has_recv) return MPI_SUCCESS;
  Mailbox& mb = r->comm->box(r->me, r->ch);
  {
    std::lock_guard g(mb.mu);
    if (!mb.unpost(&r->recv)) return MPI_SUCCESS;
  }
  r->recv.cancelled = true;
  r->recv.r_src = MPI_ANY_SOURCE;
  r->recv.r_tag = MPI_ANY_TAG;
  r->recv.r_bytes = 0;
  if (tl_in_cancel) tl_cancelled = r;
  else r->recv.complete();
  return MPI_SUCCESS;
}

void recv_done(void* owner) { part_done(static_cast<Request*>(owner)); }
}  // namespace

Request* new_request(Comm* c, int me, int parts, MPI_Request* out) {
  auto* r = new Request;
  r->comm = c;
  r->me = me;
  r->parts.store(parts, std::memory_order_relaxed);
  mpi::locked([&] { return PMPI_Grequest_start(query_fn, free_fn, cancel_fn, r, &r->greq); });
  *out = r->greq;
  return r;
}

void count_send(Request* r) {
  r->send.then = recv_done;
  r->send.owner = r;
}

void count_recv(Request* r) {
  r->has_recv = true;
  r->recv.then = recv_done;
  r->recv.owner = r;
}

void part_done(Request* r) {
  if (r->parts.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (r->send.err != MPI_SUCCESS && r->err == MPI_SUCCESS) r->err = r->send.err;
  if (r->on_complete) r->on_complete();
  MPI_Request g = r->greq;
  unref(r);  // the MPI's reference keeps it alive until its free_fn
  mpi::locked([&] { return PMPI_Grequest_complete(g); });
}

int cancel(MPI_Request* request) {
  tl_in_cancel = true;
  tl_cancelled = nullptr;
  int rc = mpi::locked([&] { return PMPI_Cancel(request); });
  tl_in_cancel = false;
  if (Request* r = tl_cancelled) {
    tl_cancelled = nullptr;
    r->recv.complete();
  }
  return rc;
}

// ---- persistent operations -----------------------------------------------------------------

namespace {
struct PersistentTable {
  std::mutex mu;
  std::unordered_map<std::uintptr_t, Persistent*> by_request;
  std::vector<int> free_tags;
  int next_tag = 1;
  std::atomic<int> live{0};
  MPI_Comm self = MPI_COMM_NULL;
};
PersistentTable& table() {
  static PersistentTable* t = new PersistentTable;
  return *t;
}

void signal(void* owner) {
  auto* p = static_cast<Persistent*>(owner);
  PersistentTable& t = table();
  p->active.store(false, std::memory_order_release);
  mpi::locked([&] { return PMPI_Send(nullptr, 0, MPI_BYTE, 0, p->signal_tag, t.self); });
}
}  // namespace

int persistent_init(Comm* c, int me, bool is_recv, const TypedBuffer& b, int peer, int tag, SendMode mode,
                    MPI_Request* out) {
  PersistentTable& t = table();
  auto* p = new Persistent;
  p->comm = c;
  p->me = me;
  p->is_recv = is_recv;
  p->buf = b;
  p->peer = peer;
  p->tag = tag;
  p->mode = mode;
  {
    std::lock_guard g(t.mu);
    if (t.self == MPI_COMM_NULL) mpi::locked([&] { return PMPI_Comm_dup(MPI_COMM_SELF, &t.self); });
    if (!t.free_tags.empty()) {
      p->signal_tag = t.free_tags.back();
      t.free_tags.pop_back();
    } else {
      p->signal_tag = t.next_tag++;
    }
  }
  int rc = mpi::locked([&] { return PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, p->signal_tag, t.self, &p->real); });
  if (rc != MPI_SUCCESS) {
    delete p;
    return rc;
  }
  p->send.then = signal;
  p->send.owner = p;
  p->recv.then = signal;
  p->recv.owner = p;
  {
    std::lock_guard g(t.mu);
    t.by_request[handle_bits(p->real)] = p;
  }
  t.live.fetch_add(1, std::memory_order_release);
  *out = p->real;
  return MPI_SUCCESS;
}

bool any_persistent() { return table().live.load(std::memory_order_acquire) != 0; }

Persistent* find_persistent(MPI_Request r) {
  if (!any_persistent() || r == MPI_REQUEST_NULL) return nullptr;
  PersistentTable& t = table();
  std::lock_guard g(t.mu);
  auto it = t.by_request.find(handle_bits(r));
  return it == t.by_request.end() ? nullptr : it->second;
}

int persistent_start(Persistent* p) {
  int rc = mpi::locked([&] { return PMPI_Start(&p->real); });
  if (rc != MPI_SUCCESS) return rc;
  p->active.store(true, std::memory_order_release);
  p->send.done.reset();
  p->recv.done.reset();
  if (p->is_recv) return start_recv(p->comm, p->me, p->peer, p->tag, p->buf, Channel::kP2P, &p->recv);
  return start_send(p->comm, p->me, p->buf, p->peer, p->tag, p->mode, Channel::kP2P, &p->send);
}

int persistent_free(MPI_Request* r) {
  PersistentTable& t = table();
  Persistent* p = nullptr;
  {
    std::lock_guard g(t.mu);
    auto it = t.by_request.find(handle_bits(*r));
    // Freeing an active one would leave the engine completing freed memory: refused.
    if (it != t.by_request.end() && it->second->active.load(std::memory_order_acquire))
      return raise(it->second->comm, MPI_ERR_REQUEST,
                   "MPI_Request_free (an active persistent request of a thread-rank communicator: complete it first)");
    if (it != t.by_request.end()) {
      p = it->second;
      t.by_request.erase(it);
      t.free_tags.push_back(p->signal_tag);
    }
  }
  int rc = mpi::locked([&] { return PMPI_Request_free(r); });
  if (p) {
    t.live.fetch_sub(1, std::memory_order_release);
    delete p;
  }
  return rc;
}

void persistent_status(Persistent* p, MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  if (p->is_recv) p->recv.fill(status);
  else set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, p->send.err, 0, false);
}

}  // namespace tsmpi::ranks

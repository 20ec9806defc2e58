#include "ranks/p2p.h"

#include "locking/backoff.h"
#include "ranks/buffered_sends.h"
#include "ranks/ranks_stats.h"

namespace tsmpi::ranks {

int start_send(Comm* c, int me, const TypedBuffer& b, int dest, int tag, SendMode mode, Channel ch, SendOp* op) {
  long long bytes = packed_bytes(b);
  if (bytes < 0) return MPI_ERR_TYPE;
  op->buf = b;
  op->bytes = static_cast<std::size_t>(bytes);
  op->err = MPI_SUCCESS;
  op->waits_in = nullptr;
  op->cancelled = false;
  if (dest == MPI_PROC_NULL) {
    op->complete();
    return MPI_SUCCESS;
  }
  bsend::Held held;
  if (mode == SendMode::kBuffered) {
    if (int rc = bsend::reserve(op->bytes, !c->is_local(dest), &held)) return rc;
  }
  if (!c->is_local(dest)) {
    count(g_counters.remote_messages);
    count(g_counters.remote_bytes, op->bytes);
    return remote_send(c, me, b, dest, tag, mode, ch, op, held);
  }
  count(g_counters.local_messages);
  count(g_counters.local_bytes, op->bytes);
  // A receive already posted takes the message straight from the sender's buffer when the
  // receiver sleeps and the mailbox's lock is free; otherwise the message goes to the mailbox's
  // fast box from this sender (mailbox.h: in its slot up to FastBox::kInlineBytes, else in a
  // packet), matched by the receiver.
  Mailbox& mb = c->box(dest, ch);
  Mailbox::Guard g(mb, std::try_to_lock, mb.parked() || dest == me);
  if (g.owns()) {
    if (RecvOp* r = mb.take_posted(me, tag)) {
      g.release();
      deliver_direct(*op, me, tag, r);
      r->complete();
      op->complete();
      return MPI_SUCCESS;
    }
  }
  const bool eager = mode == SendMode::kBuffered || op->bytes <= kEagerLimit;
  const bool waits = !eager || mode == SendMode::kSynchronous;
  op->waits_in = &mb;
  op->src = me;
  op->tag = tag;
  g.release();
  // From here on a waiting op may complete at any time.
  if (!waits && op->bytes <= FastBox::kInlineBytes) {
    op->ident = new_ident();
    mb.arrive_small_from(c->local_index[me], me, tag, op->ident, static_cast<std::uint32_t>(op->bytes),
                         [&](char* data) { pack(b, data); });
  } else {
    Packet* p = new_packet();
    p->src = me;
    p->tag = tag;
    p->bytes = op->bytes;
    p->comm = c;
    p->dst = dest;
    if (eager) pack(b, p->reserve(op->bytes));
    if (waits) p->sender = op;
    op->ident = p->ident;
    mb.arrive_from(c->local_index[me], p);
  }
  if (!waits) op->complete_or_mark();
  return MPI_SUCCESS;
}

int send(Comm* c, int me, const TypedBuffer& b, int dest, int tag, SendMode mode, Channel ch) {
  SendOp op;
  op.unseen = true;
  int rc = start_send(c, me, b, dest, tag, mode, ch, &op);
  if (rc != MPI_SUCCESS || op.completed_at_start) return rc;
  wait_done(op.done, c->family, op.waits_in, &op);
  return op.err;
}

namespace {
// What a receive accepts and where it goes; false for an invalid datatype.
bool describe_recv(int src, int tag, const TypedBuffer& b, RecvOp* r) {
  long long capacity = packed_bytes(b);
  if (capacity < 0) return false;
  r->src = src;
  r->tag = tag;
  r->buf = b;
  r->capacity = static_cast<std::size_t>(capacity);
  r->cancelled = false;
  return true;
}
}  // namespace

int start_recv(Comm* c, int me, int src, int tag, const TypedBuffer& b, Channel ch, RecvOp* r) {
  if (!describe_recv(src, tag, b, r)) return MPI_ERR_TYPE;
  if (src == MPI_PROC_NULL) {
    r->r_src = MPI_PROC_NULL;
    r->r_tag = MPI_ANY_TAG;
    r->r_err = MPI_SUCCESS;
    r->r_bytes = 0;
    r->complete_or_mark();
    return MPI_SUCCESS;
  }
  Mailbox& mb = c->box(me, ch);
  if (Packet* p = mb.receive(r, src != MPI_ANY_SOURCE && c->is_local(src) ? c->local_index[src] : -1)) {
    deliver(p, r);
    free_packet(p);
    r->complete_or_mark();
  }
  return MPI_SUCCESS;
}

namespace {
// A blocking receive from a thread-rank of this process first waits on that sender's fast box
// unposted (Mailbox::take_for): no posting, no match of the arrival against posted receives and
// no completion flag (Open MPI 4.1, ping-pong at 8 B: 4% less time per message). It posts (and
// waits as any receive does) once its spin is over, or when receives posted earlier must come
// first. Not where several threads act as one rank (another could post meanwhile) or where the
// wait must also poll the network.
bool waits_on_box(Comm* c, int me, int src, Channel ch) {
  return src >= 0 && c->is_local(src) && !c->family->shared_ranks && !c->family->multi_process() &&
         c->box(me, ch).has_fast_boxes();
}

// True when r completed from the sender's box; false when r must be posted.
bool recv_from_box(Mailbox& mb, int sender, RecvOp* r) {
  Packet* p = nullptr;
  Mailbox::Take t = Mailbox::Take::kNone;
  unsigned polls = 0;
  const bool got = spin_then_yield([&] {
    // The box is the hint; every 64th poll also looks at the FIFOs (another thread holding the
    // lock may have moved the message there).
    if (!mb.box_holds(sender) && (++polls & 63) != 0) return true;
    t = mb.take_for(r, sender, &p);
    return t == Mailbox::Take::kNone;
  });
  if (!got || (t != Mailbox::Take::kTaken && t != Mailbox::Take::kFilled)) return false;
  if (p) {
    deliver(p, r);
    free_packet(p);
  }
  return true;
}
}  // namespace

int recv(Comm* c, int me, int src, int tag, const TypedBuffer& b, Channel ch, MPI_Status* status) {
  RecvOp r;
  if (waits_on_box(c, me, src, ch)) {
    if (!describe_recv(src, tag, b, &r)) return MPI_ERR_TYPE;
    if (recv_from_box(c->box(me, ch), c->local_index[src], &r)) {
      r.fill(status);
      return r.r_err;
    }
  }
  int rc = start_recv(c, me, src, tag, b, ch, &r);
  if (rc != MPI_SUCCESS) return rc;
  wait_done(r.done, c->family, &c->box(me, ch));
  r.fill(status);
  return r.r_err;
}

bool cancel_recv(Comm* c, int me, Channel ch, RecvOp* r) {
  Mailbox& mb = c->box(me, ch);
  {
    Mailbox::Guard g(mb);
    if (!mb.unpost(r)) return false;
  }
  r->cancelled = true;
  r->r_src = MPI_ANY_SOURCE;
  r->r_tag = MPI_ANY_TAG;
  r->r_bytes = 0;
  r->r_err = MPI_SUCCESS;
  r->complete();
  return true;
}

bool cancel_send(SendOp* op) {
  Mailbox* mb = op->waits_in;
  if (!mb) return false;
  Packet* p;
  {
    Mailbox::Guard g(*mb);
    p = mb->withdraw(op->src, op->tag, op->ident);
  }
  if (!p) return false;
  const bool waits = p->sender == op;
  free_packet(p);
  op->waits_in = nullptr;
  op->cancelled = true;
  // An eager send completed when it was made; one waiting for its receive completes now.
  if (waits) op->complete();
  return true;
}

namespace {
void proc_null_status(MPI_Status* status) { set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, false); }
}  // namespace

int iprobe(Comm* c, int me, int src, int tag, int* flag, MPI_Status* status) {
  if (src == MPI_PROC_NULL) {
    *flag = 1;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  if (c->family->multi_process()) progress();
  Mailbox& mb = c->box(me, Channel::kP2P);
  int s = 0, t = 0;
  std::size_t bytes = 0;
  {
    Mailbox::Guard g(mb);
    Packet* p = mb.find_unexpected(src, tag);
    *flag = p != nullptr;
    if (p) s = p->src, t = p->tag, bytes = p->bytes;
  }
  if (*flag) set_status(status, s, t, MPI_SUCCESS, bytes, false);
  return MPI_SUCCESS;
}

int probe(Comm* c, int me, int src, int tag, MPI_Status* status) {
  // A message already there needs no watch (a watch parks the mailbox: a system call).
  int found = 0;
  iprobe(c, me, src, tag, &found, status);
  if (found) return MPI_SUCCESS;
  Mailbox::Watch watch(c->box(me, Channel::kP2P));
  Backoff backoff;
  for (;;) {
    std::uint32_t seen = watch.now();
    int flag = 0;
    iprobe(c, me, src, tag, &flag, status);
    if (flag) return MPI_SUCCESS;
    if (c->family->multi_process()) backoff.pause();
    else watch.wait_past(seen);
  }
}

Packet* improbe(Comm* c, int me, int src, int tag, MPI_Status* status) {
  if (c->family->multi_process()) progress();
  Mailbox& mb = c->box(me, Channel::kP2P);
  Packet* p;
  {
    Mailbox::Guard g(mb);
    p = mb.take_unexpected(src, tag);
  }
  if (p) set_status(status, p->src, p->tag, MPI_SUCCESS, p->bytes, false);
  return p;
}

Packet* mprobe(Comm* c, int me, int src, int tag, MPI_Status* status) {
  if (Packet* p = improbe(c, me, src, tag, status)) return p;  // as probe(): no watch needed
  Mailbox::Watch watch(c->box(me, Channel::kP2P));
  Backoff backoff;
  for (;;) {
    std::uint32_t seen = watch.now();
    if (Packet* p = improbe(c, me, src, tag, status)) return p;
    if (c->family->multi_process()) backoff.pause();
    else watch.wait_past(seen);
  }
}

void recv_taken(Packet* p, const TypedBuffer& b, RecvOp* r) {
  const long long capacity = packed_bytes(b);
  r->src = p->src;
  r->tag = p->tag;
  r->buf = b;
  r->capacity = capacity < 0 ? 0 : static_cast<std::size_t>(capacity);
  r->cancelled = false;
  deliver(p, r);
  free_packet(p);
  r->complete();
}

int mrecv(Packet* p, const TypedBuffer& b, MPI_Status* status) {
  RecvOp r;
  long long capacity = packed_bytes(b);
  if (capacity < 0) return MPI_ERR_TYPE;
  r.buf = b;
  r.capacity = static_cast<std::size_t>(capacity);
  deliver(p, &r);
  free_packet(p);
  r.fill(status);
  return r.r_err;
}

}  // namespace tsmpi::ranks

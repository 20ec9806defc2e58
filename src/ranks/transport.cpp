#include "ranks/transport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "locking/backoff.h"
#include "matching/mpi_calls.h"

namespace tsmpi::ranks {

namespace {
enum Kind : std::uint32_t { kData = 1, kSyncData = 2, kAck = 3 };
struct Header {
  std::uint64_t ctx;
  std::uint64_t ack_id;
  std::int32_t channel, src, dst, tag;
  std::uint32_t kind, pad;
};
constexpr int kTag = 0;

struct InFlight {
  MPI_Request request;
  char* buffer;
  SendOp* op;  // completed with the MPI send (nullptr: acknowledgement, synchronous or buffered send)
  bsend::Held held;  // a buffered send's room in its attached buffer
};

struct Network {
  std::mutex poll_mu;  // one poller at a time keeps arrival order
  std::mutex mu;       // the fields below
  std::vector<Family*> families;
  std::vector<InFlight> in_flight;
  std::unordered_map<std::uint64_t, SendOp*> awaiting_ack;
  std::uint64_t next_ack = 1;
  std::atomic<int> polled{0};
  // wait_done's poller: at most one waiting thread of the process polls; the others sleep on
  // their own flags (listed here) until it leaves.
  std::atomic<bool> poller{false};
  std::mutex sleepers_mu;
  std::vector<Done*> sleepers;
};
Network& net() {
  static Network* n = new Network;
  return *n;
}

void dispatch(Family* f, char* buffer, Packet* p) {
  Header h;
  std::memcpy(&h, buffer, sizeof h);
  if (h.kind == kAck) {
    SendOp* op = nullptr;
    {
      std::lock_guard g(net().mu);
      auto it = net().awaiting_ack.find(h.ack_id);
      if (it != net().awaiting_ack.end()) {
        op = it->second;
        net().awaiting_ack.erase(it);
      }
    }
    free_packet(p);
    if (op) op->complete();
    return;
  }
  p->data = buffer + sizeof h;
  p->src = h.src;
  p->tag = h.tag;
  p->ack_id = h.ack_id;
  Comm* c = nullptr;
  {
    std::lock_guard g(f->mu);
    auto it = f->comms.find(h.ctx);
    if (it != f->comms.end()) c = it->second;
    if (!c) {
      f->orphans[h.ctx].push_back(Arrival{h.channel, h.src, h.dst, h.tag, p});
      return;
    }
  }
  arrive_local(c, static_cast<Channel>(h.channel), h.dst, p);
}

// Takes what has arrived for f out of the MPI (poll_mu held).
void poll_family(Family* f) {
  for (int n = 0; n < 64; ++n) {
    int flag = 0;
    MPI_Status st;
    mpi::locked([&] { return PMPI_Iprobe(MPI_ANY_SOURCE, kTag, f->net, &flag, &st); });
    if (!flag) return;
    int bytes = 0;
    PMPI_Get_count(&st, MPI_BYTE, &bytes);
    Packet* p = new_packet();
    char* buffer = p->reserve(static_cast<std::size_t>(bytes));
    MPI_Request r;
    mpi::locked([&] { return PMPI_Irecv(buffer, bytes, MPI_BYTE, st.MPI_SOURCE, kTag, f->net, &r); });
    mpi::wait(&r, MPI_STATUS_IGNORE);
    p->bytes = static_cast<std::size_t>(bytes) - sizeof(Header);
    Header h;
    std::memcpy(&h, buffer, sizeof h);
    if (h.kind == kSyncData) p->ack_proc = st.MPI_SOURCE;  // net's ranks are the family's processes
    dispatch(f, buffer, p);
  }
}

void test_in_flight() {
  Network& n = net();
  std::vector<InFlight> done;
  {
    std::lock_guard g(n.mu);
    for (std::size_t i = 0; i < n.in_flight.size();) {
      int flag = 0;
      mpi::test(&n.in_flight[i].request, &flag, MPI_STATUS_IGNORE);
      if (flag) {
        done.push_back(n.in_flight[i]);
        n.in_flight[i] = n.in_flight.back();
        n.in_flight.pop_back();
      } else {
        ++i;
      }
    }
  }
  for (auto& d : done) {
    std::free(d.buffer);
    bsend::release(d.held);
    if (d.op) d.op->complete();
  }
}

void send_buffer(Family* f, int proc, char* buffer, std::size_t total, SendOp* op, const bsend::Held& held = {}) {
  MPI_Request r;
  int rc = mpi::locked([&] {
    return PMPI_Isend(buffer, static_cast<int>(total), MPI_BYTE, proc, kTag, f->net, &r);
  });
  int flag = 0;
  if (rc == MPI_SUCCESS) mpi::test(&r, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS || flag) {
    std::free(buffer);
    bsend::release(held);
    if (op) {
      op->err = rc;
      op->complete();
    }
    return;
  }
  std::lock_guard g(net().mu);
  net().in_flight.push_back({r, buffer, op, held});
}
}  // namespace

int remote_send(Comm* c, int me, const TypedBuffer& b, int dest, int tag, SendMode mode, Channel ch, SendOp* op,
                const bsend::Held& held) {
  Family* f = c->family;
  std::size_t bytes = op->bytes;
  char* buffer = static_cast<char*>(std::malloc(sizeof(Header) + bytes + 1));
  Header h{};
  h.ctx = c->ctx;
  h.channel = static_cast<std::int32_t>(ch);
  h.src = me;
  h.dst = dest;
  h.tag = tag;
  h.kind = kData;
  if (mode == SendMode::kSynchronous) {
    h.kind = kSyncData;
    std::lock_guard g(net().mu);
    h.ack_id = net().next_ack++;
    net().awaiting_ack[h.ack_id] = op;
  }
  std::memcpy(buffer, &h, sizeof h);
  pack(b, buffer + sizeof h);
  // A synchronous send completes with its acknowledgement; a buffered one now (it is packed into
  // `buffer`: MPI_Bsend is local); the others when the MPI has sent the buffer.
  const bool with_mpi_send = mode != SendMode::kSynchronous && mode != SendMode::kBuffered;
  send_buffer(f, c->proc_of(dest), buffer, sizeof h + bytes, with_mpi_send ? op : nullptr, held);
  if (mode == SendMode::kBuffered) op->complete();
  return MPI_SUCCESS;
}

void remote_ack(Family* f, int proc, std::uint64_t id) {
  char* buffer = static_cast<char*>(std::malloc(sizeof(Header)));
  Header h{};
  h.kind = kAck;
  h.ack_id = id;
  std::memcpy(buffer, &h, sizeof h);
  send_buffer(f, proc, buffer, sizeof h, nullptr);
}

void progress() {
  Network& n = net();
  if (n.polled.load(std::memory_order_relaxed) == 0) return;
  if (!n.poll_mu.try_lock()) return;
  std::vector<Family*> families;
  {
    std::lock_guard g(n.mu);
    families = n.families;
  }
  for (Family* f : families) poll_family(f);
  test_in_flight();
  n.poll_mu.unlock();
}

void adopt_orphans(Comm* c) {
  Family* f = c->family;
  std::vector<Arrival> waiting;
  {
    std::lock_guard g(f->mu);
    auto it = f->orphans.find(c->ctx);
    if (it == f->orphans.end()) return;
    waiting = std::move(it->second);
    f->orphans.erase(it);
  }
  for (auto& a : waiting) {
    arrive_local(c, static_cast<Channel>(a.channel), a.dst, a.packet);
  }
}

void add_polled_family(Family* f) {
  std::lock_guard g(net().mu);
  net().families.push_back(f);
  net().polled.fetch_add(1, std::memory_order_relaxed);
}

void remove_polled_family(Family* f) {
  std::lock_guard pg(net().poll_mu);  // not while a poller walks it
  std::lock_guard g(net().mu);
  auto& v = net().families;
  auto it = std::find(v.begin(), v.end(), f);
  if (it != v.end()) {
    v.erase(it);
    net().polled.fetch_sub(1, std::memory_order_relaxed);
  }
}

// One waiting thread per process polls, with a backoff; the others sleep in the kernel until
// their own flag is set or the poller leaves, when one of them takes over. With every waiter
// polling and backing off, each woke thousands of times a second, and Linux 6.x's scheduler
// then left other processes runnable but unscheduled for tens of seconds (locking/backoff.h).
void wait_done(Done& d, const Family* f) {
  if (!f || !f->multi_process()) {
    d.wait();
    return;
  }
  Network& n = net();
  while (!d.is()) {
    if (!n.poller.exchange(true, std::memory_order_acq_rel)) {
      Backoff b;
      while (!d.is()) {
        progress();
        if (d.is()) break;
        b.pause();
      }
      n.poller.store(false, std::memory_order_seq_cst);
      std::lock_guard g(n.sleepers_mu);
      for (Done* s : n.sleepers) s->kick();
      return;
    }
    // Someone polls: a message for this thread comes within microseconds or not soon.
    if (spin_then_yield([&] { return !d.is() && n.poller.load(std::memory_order_relaxed); })) continue;
    {
      std::lock_guard g(n.sleepers_mu);
      n.sleepers.push_back(&d);
    }
    d.sleep_while([&] { return n.poller.load(std::memory_order_seq_cst); });
    std::lock_guard g(n.sleepers_mu);
    n.sleepers.erase(std::find(n.sleepers.begin(), n.sleepers.end(), &d));
  }
}

namespace {
constexpr long kBriefSleepNs = 200'000;
}  // namespace

void wait_done(Done& d, const Family* f, Mailbox* box, SendOp* helping) {
  if (d.is()) return;
  if (!box) return wait_done(d, f);
  if (f && f->multi_process()) {
    Mailbox::Parked parked(*box);  // the network's poller waits as before; senders match
    return wait_done(d, f);
  }
  if (spin_then_yield([&] {
        box->poll();
        if (helping) help_copy(helping->share);
        return !d.is();
      }))
    return;
  // Senders match from here on, and set d. A sender that read whether anyone sleeps just before
  // this changed it left its message in its fast box: a brief sleep first, then (for a long
  // wait) the heavy barrier and a look at every box, which costs a system call that interrupts
  // every core running the process (tens of microseconds in a virtual machine).
  Mailbox::Parked parked(*box, /*sweep=*/false);
  if (d.park_for(kBriefSleepNs)) return;
  box->sweep_boxes();
  d.park();
}

void arrive_local(Comm* c, Channel ch, int dst, Packet* p) {
  p->comm = c;
  p->dst = dst;
  c->box(dst, ch).arrive(p);
}

}  // namespace tsmpi::ranks

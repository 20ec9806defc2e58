// MPI's point-to-point calls on thread-rank communicators (api.h).
#include <cstdlib>

#include "matching/mpi_calls.h"
#include "matching/policies.h"
#include "matching/reservations.h"
#include "matching/thread_rank_reservations.h"
#include "ranks/address_space.h"
#include "ranks/api.h"
#include "ranks/caller.h"
#include "ranks/handle_space.h"
#include "ranks/p2p.h"
#include "ranks/requests.h"

namespace tsmpi::ranks {

namespace {
// The calling thread's last answer (one entry: a thread mostly calls on one communicator at a
// time), valid while the epoch stays; the lookup it saves reads the handle table, the thread's
// identities and the communicator's members.
std::atomic<std::uint64_t> g_caller_epoch{1};
struct LastCaller {
  std::uintptr_t bits;
  Comm* c;
  Member* m;
  std::uint64_t epoch;
};
constinit TSMPI_TLS LastCaller tl_last{};
}  // namespace

void forget_callers() { g_caller_epoch.fetch_add(1, std::memory_order_acq_rel); }

Caller caller(MPI_Comm comm, const char* call) {
  const std::uintptr_t bits = handle_bits(comm);
  LastCaller& last = tl_last;
  const std::uint64_t epoch = g_caller_epoch.load(std::memory_order_acquire);
  if (last.bits == bits && last.epoch == epoch) return Caller{last.c, last.m};
  Caller k;
  k.c = comm_of(comm);
  if (!k.c) {
    k.rc = raise(nullptr, MPI_ERR_COMM, call);
    return k;
  }
  k.m = membership(k.c);
  if (k.m) {
    last = {bits, k.c, k.m, epoch};  // the epoch read before the lookup: a change since voids it
    return k;
  }
  // A thread outside the region, or not a member; in an address space, not attached yet.
  if (k.c == asp::g_world && family_rank_of_caller(k.c->family) < 0) k.fail(asp::not_attached_code(call), call);
  else k.fail(MPI_ERR_COMM, call);
  return k;
}

int check_dest(const Comm* c, int rank) {
  return rank == MPI_PROC_NULL || (rank >= 0 && rank < c->size()) ? MPI_SUCCESS : MPI_ERR_RANK;
}
int check_source(const Comm* c, int rank) {
  return rank == MPI_ANY_SOURCE ? MPI_SUCCESS : check_dest(c, rank);
}
int check_send_tag(int tag) { return tag >= 0 ? MPI_SUCCESS : MPI_ERR_TAG; }
int check_recv_tag(int tag) { return tag >= 0 || tag == MPI_ANY_TAG ? MPI_SUCCESS : MPI_ERR_TAG; }
int check_count(MPI_Count count) { return count >= 0 ? MPI_SUCCESS : MPI_ERR_COUNT; }
int check_type(MPI_Datatype type) { return type == MPI_DATATYPE_NULL ? MPI_ERR_TYPE : MPI_SUCCESS; }
int check_root(const Comm* c, int root) { return root >= 0 && root < c->size() ? MPI_SUCCESS : MPI_ERR_ROOT; }

namespace {
int first_error(std::initializer_list<int> codes) {
  for (int c : codes)
    if (c != MPI_SUCCESS) return c;
  return MPI_SUCCESS;
}
// The first failing check, in the order the checks are listed (a chain of branches: these run on
// every message).
int check_send(const Comm* c, MPI_Count count, MPI_Datatype type, int dest, int tag) {
  if (int e = check_count(count)) return e;
  if (int e = check_type(type)) return e;
  if (int e = check_dest(c, dest)) return e;
  return check_send_tag(tag);
}
int check_recv(const Comm* c, MPI_Count count, MPI_Datatype type, int source, int tag) {
  if (int e = check_count(count)) return e;
  if (int e = check_type(type)) return e;
  if (int e = check_source(c, source)) return e;
  return check_recv_tag(tag);
}

MPI_Message message_handle(Packet* p) {
  return handle_from_bits<MPI_Message>(make_handle(Made::kMessage, p));
}

// Where several threads act as one rank (an MPI process of an address space), a probe reserves
// its message for the probing thread (src/matching/thread_rank_reservations.h).
bool reserving(const Comm* c, int source) {
  return source != MPI_PROC_NULL && matching::g_policy != matching::Policy::kOff && asp::owns(c->family);
}

}  // namespace

Packet* reserved_for(const Comm* c, int source, int tag, MPI_Status* status) {
  if (!matching::thread_ranks::any() || source == MPI_PROC_NULL) return nullptr;
  return static_cast<Packet*>(matching::thread_ranks::take(c, source, tag, status));
}

namespace api {

int send(const char* call, const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
         SendMode mode) {
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_send(k.c, count, type, dest, tag))
    return k.fail(e, call);
  return raise(k.c, ranks::send(k.c, k.m->rank, {buf, count, type}, dest, tag, mode, Channel::kP2P), call);
}

int isend(const char* call, const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
          SendMode mode, MPI_Request* request) {
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_send(k.c, count, type, dest, tag))
    return k.fail(e, call);
  Request* r = new_request(k.c, k.m->rank, 1, request);
  if (!r) return k.fail(MPI_ERR_INTERN, call);
  count_send(r);
  r->send.unseen = true;  // the program gets the handle when this returns
  int rc = start_send(k.c, k.m->rank, {buf, count, type}, dest, tag, mode, Channel::kP2P, &r->send);
  if (rc != MPI_SUCCESS) {
    r->send.err = rc;
    r->send.complete();
  } else if (r->send.completed_at_start) {
    complete_unseen(r);
  }
  return MPI_SUCCESS;
}

int send_init(const char* call, const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm, SendMode mode, MPI_Request* request) {
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (int e = check_send(k.c, count, type, dest, tag))
    return k.fail(e, call);
  return raise(k.c, persistent_init(k.c, k.m->rank, false, {buf, count, type}, dest, tag, mode, request), call);
}

int recv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Caller k = caller(comm, "MPI_Recv");
  if (!k) return k.rc;
  if (int e = check_recv(k.c, count, type, source, tag))
    return k.fail(e, "MPI_Recv");
  if (Packet* p = reserved_for(k.c, source, tag)) return raise(k.c, ranks::mrecv(p, {buf, count, type}, status), "MPI_Recv");
  return raise(k.c, ranks::recv(k.c, k.m->rank, source, tag, {buf, count, type}, Channel::kP2P, status), "MPI_Recv");
}

int irecv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  Caller k = caller(comm, "MPI_Irecv");
  if (!k) return k.rc;
  if (int e = check_recv(k.c, count, type, source, tag))
    return k.fail(e, "MPI_Irecv");
  if (Packet* p = reserved_for(k.c, source, tag)) {
    MPI_Message m = message_handle(p);
    return imrecv(buf, count, type, &m, request);
  }
  Request* r = new_request(k.c, k.m->rank, 1, request);
  if (!r) return k.fail(MPI_ERR_INTERN, "MPI_Irecv");
  count_recv(r);
  r->recv.unseen = true;  // the program gets the handle when this returns
  int rc = start_recv(k.c, k.m->rank, source, tag, {buf, count, type}, Channel::kP2P, &r->recv);
  if (rc == MPI_SUCCESS && r->recv.completed_at_start) complete_unseen(r);
  return raise(k.c, rc, "MPI_Irecv");
}

int recv_init(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  Caller k = caller(comm, "MPI_Recv_init");
  if (!k) return k.rc;
  if (int e = check_recv(k.c, count, type, source, tag))
    return k.fail(e, "MPI_Recv_init");
  return raise(k.c, persistent_init(k.c, k.m->rank, true, {buf, count, type}, source, tag, SendMode::kStandard, request),
               "MPI_Recv_init");
}

int sendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status) {
  Caller k = caller(comm, "MPI_Sendrecv");
  if (!k) return k.rc;
  if (int e = first_error({check_send(k.c, sendcount, sendtype, dest, sendtag),
                           check_recv(k.c, recvcount, recvtype, source, recvtag)}))
    return k.fail(e, "MPI_Sendrecv");
  if (Packet* p = reserved_for(k.c, source, recvtag)) {
    int rc = ranks::send(k.c, k.m->rank, {sendbuf, sendcount, sendtype}, dest, sendtag, SendMode::kStandard, Channel::kP2P);
    int rrc = ranks::mrecv(p, {recvbuf, recvcount, recvtype}, status);
    return raise(k.c, rc != MPI_SUCCESS ? rc : rrc, "MPI_Sendrecv");
  }
  RecvOp r;
  int rc = start_recv(k.c, k.m->rank, source, recvtag, {recvbuf, recvcount, recvtype}, Channel::kP2P, &r);
  if (rc == MPI_SUCCESS) rc = ranks::send(k.c, k.m->rank, {sendbuf, sendcount, sendtype}, dest, sendtag,
                                          SendMode::kStandard, Channel::kP2P);
  wait_done(r.done, k.c->family, &k.c->box(k.m->rank, Channel::kP2P));
  r.fill(status);
  if (rc == MPI_SUCCESS) rc = r.r_err;
  return raise(k.c, rc, "MPI_Sendrecv");
}

int sendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                     MPI_Comm comm, MPI_Status* status) {
  long long bytes = packed_bytes({buf, count, type});
  if (bytes < 0) return sendrecv(buf, count, type, dest, sendtag, buf, count, type, source, recvtag, comm, status);
  // The outgoing message is packed first, so the receive may overwrite the buffer.
  char* copy = static_cast<char*>(std::malloc(static_cast<std::size_t>(bytes) + 1));
  ranks::pack({buf, count, type}, copy);
  int rc = sendrecv(copy, bytes, MPI_BYTE, dest, sendtag, buf, count, type, source, recvtag, comm, status);
  std::free(copy);
  return rc;
}

int isendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Request* request) {
  Caller k = caller(comm, "MPI_Isendrecv");
  if (!k) return k.rc;
  if (int e = first_error({check_send(k.c, sendcount, sendtype, dest, sendtag),
                           check_recv(k.c, recvcount, recvtype, source, recvtag)}))
    return k.fail(e, "MPI_Isendrecv");
  Request* r = new_request(k.c, k.m->rank, 2, request);
  if (!r) return k.fail(MPI_ERR_INTERN, "MPI_Isendrecv");
  count_recv(r);
  count_send(r);
  start_recv(k.c, k.m->rank, source, recvtag, {recvbuf, recvcount, recvtype}, Channel::kP2P, &r->recv);
  int rc = start_send(k.c, k.m->rank, {sendbuf, sendcount, sendtype}, dest, sendtag, SendMode::kStandard,
                      Channel::kP2P, &r->send);
  if (rc != MPI_SUCCESS) {
    r->send.err = rc;
    r->send.complete();
  }
  return MPI_SUCCESS;
}

int isendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source,
                      int recvtag, MPI_Comm comm, MPI_Request* request) {
  long long bytes = packed_bytes({buf, count, type});
  if (bytes < 0) return raise(comm_of(comm), MPI_ERR_TYPE, "MPI_Isendrecv_replace");
  char* copy = static_cast<char*>(std::malloc(static_cast<std::size_t>(bytes) + 1));
  ranks::pack({buf, count, type}, copy);
  Caller k = caller(comm, "MPI_Isendrecv_replace");
  if (!k) {
    std::free(copy);
    return k.rc;
  }
  Request* r = new_request(k.c, k.m->rank, 2, request);
  if (!r) {
    std::free(copy);
    return k.fail(MPI_ERR_INTERN, "MPI_Isendrecv_replace");
  }
  count_recv(r);
  count_send(r);
  r->on_complete = [copy] { std::free(copy); };
  start_recv(k.c, k.m->rank, source, recvtag, {buf, count, type}, Channel::kP2P, &r->recv);
  start_send(k.c, k.m->rank, {copy, bytes, MPI_BYTE}, dest, sendtag, SendMode::kStandard, Channel::kP2P, &r->send);
  return MPI_SUCCESS;
}

int probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Caller k = caller(comm, "MPI_Probe");
  if (!k) return k.rc;
  if (int e = first_error({check_source(k.c, source), check_recv_tag(tag)})) return k.fail(e, "MPI_Probe");
  if (reserving(k.c, source)) {
    if (matching::thread_ranks::find(k.c, source, tag, status)) return MPI_SUCCESS;  // probed again
    MPI_Status st;
    Packet* p = ranks::mprobe(k.c, k.m->rank, source, tag, &st);
    matching::thread_ranks::reserve(k.c, p, st);
    matching::copy_status(status, st);
    return MPI_SUCCESS;
  }
  return ranks::probe(k.c, k.m->rank, source, tag, status);
}

int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Caller k = caller(comm, "MPI_Iprobe");
  if (!k) return k.rc;
  if (int e = first_error({check_source(k.c, source), check_recv_tag(tag)})) return k.fail(e, "MPI_Iprobe");
  if (reserving(k.c, source)) {
    *flag = 1;
    if (matching::thread_ranks::find(k.c, source, tag, status)) return MPI_SUCCESS;
    MPI_Status st;
    Packet* p = ranks::improbe(k.c, k.m->rank, source, tag, &st);
    *flag = p != nullptr;
    if (p) {
      matching::thread_ranks::reserve(k.c, p, st);
      matching::copy_status(status, st);
    }
    return MPI_SUCCESS;
  }
  return ranks::iprobe(k.c, k.m->rank, source, tag, flag, status);
}

int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  Caller k = caller(comm, "MPI_Mprobe");
  if (!k) return k.rc;
  if (int e = first_error({check_source(k.c, source), check_recv_tag(tag)})) return k.fail(e, "MPI_Mprobe");
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
    return MPI_SUCCESS;
  }
  if (Packet* p = reserved_for(k.c, source, tag, status)) {
    *message = message_handle(p);
    return MPI_SUCCESS;
  }
  *message = message_handle(ranks::mprobe(k.c, k.m->rank, source, tag, status));
  return MPI_SUCCESS;
}

int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  Caller k = caller(comm, "MPI_Improbe");
  if (!k) return k.rc;
  if (int e = first_error({check_source(k.c, source), check_recv_tag(tag)})) return k.fail(e, "MPI_Improbe");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
    return MPI_SUCCESS;
  }
  Packet* p = reserved_for(k.c, source, tag, status);
  if (!p) p = ranks::improbe(k.c, k.m->rank, source, tag, status);
  *flag = p != nullptr;
  if (p) *message = message_handle(p);
  return MPI_SUCCESS;
}

int mrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  std::uintptr_t bits = handle_bits(*message);
  auto* p = find_as<Packet>(Made::kMessage, bits);
  if (!p) return raise(nullptr, MPI_ERR_REQUEST, "MPI_Mrecv");
  release_handle(bits);
  *message = MPI_MESSAGE_NULL;
  Comm* c = p->comm;
  return raise(c, ranks::mrecv(p, {buf, count, type}, status), "MPI_Mrecv");
}

int imrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  std::uintptr_t bits = handle_bits(*message);
  auto* p = find_as<Packet>(Made::kMessage, bits);
  if (!p) return raise(nullptr, MPI_ERR_REQUEST, "MPI_Imrecv");
  release_handle(bits);
  *message = MPI_MESSAGE_NULL;
  Comm* c = p->comm;
  Request* r = new_request(c, p->dst, 1, request);
  if (!r) {
    free_packet(p);
    return raise(c, MPI_ERR_INTERN, "MPI_Imrecv");
  }
  count_recv(r);
  recv_taken(p, {buf, count, type}, &r->recv);
  return MPI_SUCCESS;
}

}  // namespace api
}  // namespace tsmpi::ranks

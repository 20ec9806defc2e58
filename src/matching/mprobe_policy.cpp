// TSMPI_PROBE=mprobe: MPI_Probe / MPI_Iprobe are carried out with MPI_Mprobe / MPI_Improbe
// (seed 001 §3). The matched message leaves the MPI's queues, so no other thread's receive can
// see it; it is reserved for the probing thread (matching/reservations.h), and that thread's next
// receive that can match it takes it with MPI_Mrecv / MPI_Imrecv. Threads without reservations
// receive exactly as without the policy.
#include <atomic>

#include "locking/backoff.h"
#include "matching/helper_policy.h"
#include "matching/match_stats.h"
#include "matching/matched_receive.h"
#include "matching/policies.h"
#include "matching/reservations.h"
#include "runtime/os.h"

namespace tsmpi::matching::mprobe_policy {
namespace {

// Threads waiting in a blocking matched probe now, and how many may wait inside the MPI.
std::atomic<int> g_waiting{0};
int waiting_in_mpi_bound() {
  static const int cores = usable_cores();
  return cores;
}

// A blocking matched probe. Both MPIs spin in their progress engines while a thread waits in
// MPI_Mprobe; with more waiting threads than cores they keep the cores from the thread that
// would make progress, and Open MPI's rate fell from 2.4 M to 0.08-0.5 M messages/s at 16-256
// receiving threads (bench scaling). Beyond as many waiters as cores, a thread polls with
// MPI_Improbe and backs off instead, as lock2d's and helper's waiters do. A message already
// there is taken by the first MPI_Improbe either way.
int matched_probe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (serial::enabled()) return mpi::mprobe(source, tag, comm, message, status);  // it polls already
  int flag = 0;
  int rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
  if (rc != MPI_SUCCESS || flag) return rc;
  struct Waiting {
    Waiting() { g_waiting.fetch_add(1, std::memory_order_relaxed); }
    ~Waiting() { g_waiting.fetch_sub(1, std::memory_order_relaxed); }
  } waiting;
  if (g_waiting.load(std::memory_order_relaxed) <= waiting_in_mpi_bound())
    return PMPI_Mprobe(source, tag, comm, message, status);
  Backoff backoff;
  for (;;) {
    rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    backoff.pause();
  }
}

}  // namespace

int probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (probe_reserved(comm, source, tag, status)) return MPI_SUCCESS;
  Reserved r{comm, MPI_MESSAGE_NULL, {}};
  int rc = matched_probe(source, tag, comm, &r.message, &r.status);
  if (rc == MPI_SUCCESS) reserve_probed(r, status);
  return rc;
}

int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if ((*flag = probe_reserved(comm, source, tag, status))) return MPI_SUCCESS;
  Reserved r{comm, MPI_MESSAGE_NULL, {}};
  int rc = mpi::improbe(source, tag, comm, flag, &r.message, &r.status);
  if (rc == MPI_SUCCESS && *flag) reserve_probed(r, status);
  return rc;
}

// The application's own matched probe takes a message this thread reserved before the MPI's next.
int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (hand_over_reserved(comm, source, tag, message, status)) return MPI_SUCCESS;
  return matched_probe(source, tag, comm, message, status);
}

int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  if ((*flag = hand_over_reserved(comm, source, tag, message, status))) return MPI_SUCCESS;
  return mpi::improbe(source, tag, comm, flag, message, status);
}

int recv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Status* status, const OriginalCall& original) {
  auto r = take_reserved(comm, source, tag);
  if (!r) return original();
  count(g_match_stats.taken);
  return receive_matched(b, &r->message, r->status, comm, status);
}

int irecv(const Buffer& b, int source, int tag, MPI_Comm comm, MPI_Request* request, const OriginalCall& original) {
  auto r = take_reserved(comm, source, tag);
  if (!r) return original();
  count(g_match_stats.taken);
  return mpi::imrecv(b, &r->message, request);
}

bool takes_receive(MPI_Comm comm, int source, int tag) { return find_reserved(comm, source, tag).has_value(); }

int sendrecv(const Buffer& send, int dest, int sendtag, const Buffer& recv, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status) {
  auto r = take_reserved(comm, source, recvtag);
  if (r) count(g_match_stats.taken);
  if (r && truncation_misraised(recv, r->status)) {  // the receive raises its error itself
    MPI_Request sreq = MPI_REQUEST_NULL;
    int rc = mpi::isend(send, dest, sendtag, comm, &sreq);
    if (rc != MPI_SUCCESS) return rc;
    rc = receive_matched(recv, &r->message, r->status, comm, status);
    int rc_send = mpi::wait(&sreq, MPI_STATUS_IGNORE);
    return rc != MPI_SUCCESS ? rc : rc_send;
  }
  MPI_Request rreq = MPI_REQUEST_NULL;
  int rc = r ? mpi::imrecv(recv, &r->message, &rreq) : mpi::irecv(recv, source, recvtag, comm, &rreq);
  if (rc != MPI_SUCCESS) return rc;
  return mpi::send_and_complete(send, dest, sendtag, comm, &rreq, status);
}

// Nonblocking send-receive: without a reservation the MPI carries it out. A message this thread
// probed is out of the MPI's queues, where MPI_Isendrecv's own receive would wait for it forever:
// tsmpi then receives it with MPI_Imrecv, sends with MPI_Isend and completes a generalized
// request when both are done, with the helper policy's machinery (its thread completes it).
int isendrecv(const Buffer& send, int dest, int sendtag, const Buffer& recv, int source, int recvtag, MPI_Comm comm,
              MPI_Request* request, std::vector<char> owned_send, const OriginalCall& original) {
  if (!takes_receive(comm, source, recvtag)) return original();
  return helper_policy::isendrecv(send, dest, sendtag, recv, source, recvtag, comm, request, std::move(owned_send),
                                  original);
}

int start(MPI_Request* request, const PersistentRecv& p, const OriginalCall& original) {
  auto r = take_reserved(p.comm, p.source, p.tag);
  if (!r) return original();
  count(g_match_stats.taken);
  MPI_Request substitute = MPI_REQUEST_NULL;
  int rc = mpi::imrecv(p.buffer, &r->message, &substitute);
  if (rc == MPI_SUCCESS) set_substitute(*request, substitute);
  return rc;
}

}  // namespace tsmpi::matching::mprobe_policy

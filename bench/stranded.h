/* Keeping the racy probe+receive programs running to the end (msgrate.c, rtt.c).

   Natively, two threads that probe the same message both receive from its (source, tag): one
   gets it, the other gets a later message, or none at all: a thread whose receive has nothing
   left to match is stranded in MPI_Recv for ever. The benchmarks measure that racy program as
   the seed's reference, so they must not hang on it:

   - each worker thread publishes the (source, tag) it is waiting for and counts its receives;
   - the main thread of every process watches its workers; when none made progress for
     STRANDED_STALL_MS (300 ms of its polls; the environment variable of that name overrides it)
     while some still run, it asks the awaited source, over a private
     control communicator, for a "drain": an empty message (data messages are never empty);
   - every main thread serves such requests until all processes' workers are done;
   - then each process receives, on the data communicator, every message sent to it that no
     worker took (drains, and data skipped by a false match), so nothing is left over.
   A drain does not count as data: workers go on until they have their share of data messages.

   False matches are counted by message size: a sender alternates two sizes (data_count), so a
   thread whose receive returns a size other than the probed one, or a drain, did not get the
   message it probed. Two steals in a row that land on the same size go unseen,
   so the count is a lower bound.

   With a correct program (native MPI_Mprobe, or probe+receive under tsmpi) no thread strands,
   no drain is ever sent, and the main thread only sleeps and polls the control communicator. */
#ifndef TSMPI_BENCH_STRANDED_H
#define TSMPI_BENCH_STRANDED_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STRANDED_POLL_MS 2
#define STRANDED_STALL_MS 300 /* default; the environment's STRANDED_STALL_MS overrides it */
#define STRANDED_NOBODY (-3) /* not waiting in a probe or receive */

/* Control messages, told apart by tag. */
enum { CTRL_COUNT = 1, CTRL_DRAIN = 2, CTRL_DONE = 3 };
#define STRANDED_MAX_PEERS 64
#define STRANDED_MAX_DRAINS 1024

struct worker {
  atomic_long received;    /* messages received, data and drains: the watchdog's progress */
  atomic_int await_source; /* source it is blocked on, or STRANDED_NOBODY */
  atomic_int await_tag;
  atomic_int done;
  long sent;               /* data messages sent (to the only peer) */
  long false_matches;      /* receives that did not return the probed message */
  long drains;
  long errors;             /* data that failed its check */
};

/* A process's side of one measurement. */
struct stranded {
  MPI_Comm data, ctrl;
  const int* peers;
  int npeers, peers_done, ndrains;
  long sent[STRANDED_MAX_PEERS]; /* messages sent to each peer on the data communicator */
  MPI_Request drains[STRANDED_MAX_DRAINS];
  char drain;
};

/* The size of a sender's i-th data message: two sizes alternate, never 0 (the drain). */
static inline int data_count(int size, long i) {
  if (size <= 1) return 1 + (int)(i & 1);
  return size - (int)(i & 1);
}

static inline void stranded_sleep_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static inline void worker_reset(struct worker* w) {
  atomic_store(&w->received, 0);
  atomic_store(&w->await_source, STRANDED_NOBODY);
  atomic_store(&w->await_tag, 0);
  atomic_store(&w->done, 0);
  w->sent = w->false_matches = w->drains = w->errors = 0;
}

/* The two private communicators: data for the measured traffic (errors are returned and
   counted, not fatal), ctrl for stranded_serve's requests. */
static inline void stranded_comms(MPI_Comm* data, MPI_Comm* ctrl) {
  MPI_Comm_dup(MPI_COMM_WORLD, data);
  MPI_Comm_dup(MPI_COMM_WORLD, ctrl);
  MPI_Comm_set_errhandler(*data, MPI_ERRORS_RETURN);
}

static inline void stranded_begin(struct stranded* s, MPI_Comm data, MPI_Comm ctrl, const int* peers, int npeers) {
  s->data = data;
  s->ctrl = ctrl;
  s->peers = peers;
  s->npeers = npeers;
  s->peers_done = s->ndrains = 0;
  s->drain = 0;
  for (int p = 0; p < npeers; ++p) s->sent[p] = 0;
}

static inline int peer_index(const struct stranded* s, int rank) {
  for (int p = 0; p < s->npeers; ++p)
    if (s->peers[p] == rank) return p;
  return -1;
}

/* Answers the control messages that arrived: a drain request (always), a peer's "done" (when
   with_done). Returns 1 if there was one. */
static inline int stranded_answer(struct stranded* s, int with_done) {
  int flag = 0, request;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, CTRL_DRAIN, s->ctrl, &flag, &st);
  if (flag) {
    MPI_Recv(&request, 1, MPI_INT, st.MPI_SOURCE, CTRL_DRAIN, s->ctrl, MPI_STATUS_IGNORE);
    if (s->ndrains == STRANDED_MAX_DRAINS) { /* never expected: each drain is received */
      MPI_Waitall(s->ndrains, s->drains, MPI_STATUSES_IGNORE);
      s->ndrains = 0;
    }
    ++s->sent[peer_index(s, st.MPI_SOURCE)];
    MPI_Isend(&s->drain, 0, MPI_BYTE, st.MPI_SOURCE, request, s->data, &s->drains[s->ndrains++]);
    return 1;
  }
  if (!with_done) return 0;
  MPI_Iprobe(MPI_ANY_SOURCE, CTRL_DONE, s->ctrl, &flag, &st);
  if (!flag) return 0;
  MPI_Recv(&request, 1, MPI_INT, st.MPI_SOURCE, CTRL_DONE, s->ctrl, MPI_STATUS_IGNORE);
  ++s->peers_done;
  return 1;
}

/* MPI_Send of data by the main thread, answering drain requests while it waits: a blocked send
   would leave a stranded peer thread waiting for ever. Requests are looked for only once the
   send has waited STRANDED_POLL_MS: a probe per test would slow the sender, and unequally,
   since tsmpi's probe policies make MPI_Iprobe cost more than the MPI's own. */
static inline void stranded_send(struct stranded* s, const void* buf, int count, int dest, int tag) {
  MPI_Request r;
  int flag = 0;
  MPI_Isend(buf, count, MPI_BYTE, dest, tag, s->data, &r);
  ++s->sent[peer_index(s, dest)];
  MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  for (double since = MPI_Wtime(); !flag; MPI_Test(&r, &flag, MPI_STATUS_IGNORE))
    if (MPI_Wtime() - since > STRANDED_POLL_MS * 1e-3) {
      stranded_answer(s, 0);
      since = MPI_Wtime();
    }
}

/* Run by the main thread of every process while its workers (maybe none) run, until every
   process is done; then receives the messages no worker took. Workers' data sends are
   counted for the peer when there is only one. max_bytes: the largest data message. */
static inline void stranded_serve(struct stranded* s, struct worker* workers, int nworkers, int max_bytes) {
  int me_done = nworkers == 0, told = 0, idle_ms = 0;
  /* The tests of correct programs (probe+receive under tsmpi, native MPI_Mprobe) set it far
     above any stall of a loaded machine, so that a drain there means a stranded thread. */
  const char* stall_env = getenv("STRANDED_STALL_MS");
  const int stall_ms = stall_env && atoi(stall_env) > 0 ? atoi(stall_env) : STRANDED_STALL_MS;
  long last_progress = -1;
  for (;;) {
    if (me_done && !told) {
      int done = 0;
      for (int p = 0; p < s->npeers; ++p) MPI_Send(&done, 1, MPI_INT, s->peers[p], CTRL_DONE, s->ctrl);
      told = 1;
    }
    if (me_done && s->peers_done == s->npeers) break;
    if (stranded_answer(s, 1)) continue;
    stranded_sleep_ms(STRANDED_POLL_MS);
    if (me_done) continue;
    long progress = 0;
    int running = 0;
    for (int w = 0; w < nworkers; ++w) {
      progress += atomic_load(&workers[w].received);
      running += !atomic_load(&workers[w].done);
    }
    if (!running) { me_done = 1; continue; }
    if (progress != last_progress) { last_progress = progress; idle_ms = 0; continue; }
    if ((idle_ms += STRANDED_POLL_MS) < stall_ms) continue;
    idle_ms = 0;
    for (int w = 0; w < nworkers; ++w) {
      int source = atomic_load(&workers[w].await_source);
      if (atomic_load(&workers[w].done) || source == STRANDED_NOBODY) continue;
      int tag = atomic_load(&workers[w].await_tag);
      if (tag == MPI_ANY_TAG) tag = 0;
      for (int p = 0; p < s->npeers; ++p)
        if (source == MPI_ANY_SOURCE || source == s->peers[p]) MPI_Send(&tag, 1, MPI_INT, s->peers[p], CTRL_DRAIN, s->ctrl);
    }
  }
  /* Nobody sends any more: settle what is left on the data communicator. */
  long expected = 0, received = 0;
  for (int w = 0; w < nworkers; ++w) received += atomic_load(&workers[w].received);
  if (s->npeers == 1)
    for (int w = 0; w < nworkers; ++w) s->sent[0] += workers[w].sent;
  for (int p = 0; p < s->npeers; ++p) {
    long from_peer = 0;
    MPI_Sendrecv(&s->sent[p], 1, MPI_LONG, s->peers[p], CTRL_COUNT, &from_peer, 1, MPI_LONG, s->peers[p],
                 CTRL_COUNT, s->ctrl, MPI_STATUS_IGNORE);
    expected += from_peer;
  }
  char* sink = malloc((size_t)max_bytes + 1);
  for (long i = received; i < expected; ++i)
    MPI_Recv(sink, max_bytes + 1, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, s->data, MPI_STATUS_IGNORE);
  free(sink);
  MPI_Waitall(s->ndrains, s->drains, MPI_STATUSES_IGNORE);
}

/* One probe -> receive by a worker: the racy program natively when use_mprobe is 0, the native
   thread-safe program when 1. buf holds `capacity` bytes, at least the largest data message:
   the receive offers all of it, so that a false match is seen as a different count rather
   than a truncation (after which Open MPI leaves a rendezvous sender waiting for ever).
   Returns 1 when a data message was consumed (correctly or not), 0 for a drain. Counts false
   matches, drains and payload errors (every data byte equals the sender's rank).
   status: source and tag of what was received. */
static inline int probe_receive(struct worker* w, MPI_Comm data, int source, int tag, int use_mprobe,
                                char* buf, int capacity, MPI_Status* status) {
  MPI_Status st;
  int count, got = -1;
  atomic_store(&w->await_tag, tag);
  atomic_store(&w->await_source, source);
  if (use_mprobe) {
    MPI_Message m;
    MPI_Mprobe(source, tag, data, &m, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    MPI_Mrecv(buf, count, MPI_BYTE, &m, status);
    got = count;
  } else {
    MPI_Probe(source, tag, data, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    atomic_store(&w->await_tag, st.MPI_TAG);
    atomic_store(&w->await_source, st.MPI_SOURCE);
    if (MPI_Recv(buf, capacity, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, data, status) == MPI_SUCCESS)
      MPI_Get_count(status, MPI_BYTE, &got);
    else
      ++w->errors;
  }
  atomic_store(&w->await_source, STRANDED_NOBODY);
  atomic_fetch_add(&w->received, 1);
  if (got != count) ++w->false_matches;
  if (got == 0) {
    ++w->drains;
    return 0;
  }
  if (got == count)
    for (int i = 0; i < got; i += 509)
      if ((unsigned char)buf[i] != (unsigned char)status->MPI_SOURCE) ++w->errors;
  return 1;
}

#endif

/* Coverage: bad arguments from several threads at once. Each of NT threads of every rank has a
   duplicate of MPI_COMM_WORLD, a window on it and an info object of its own, each communicator
   and window with an error handler object of its own, and makes ROUNDS rounds of erroneous
   calls concurrently with the other threads: point-to-point (bad ranks, tags, counts,
   datatypes), probes, collectives with a bad root, count or operation, communicator
   constructors with a NULL output, RMA with a bad target or lock type. Each call must return
   the MPI's class and call the handler of the thread's own communicator or window exactly once
   with that class; the class of each case must be the same in every round. Calls that name no
   communicator (datatype, info, group, operation calls, MPI_COMM_NULL) go to MPI_COMM_WORLD's
   handler on both MPIs (MPI_COMM_SELF has the same one here), shared by the threads: its calls
   are counted per class. Then each thread exchanges messages and reduces on its communicator
   and puts into its window, checking the data: the errors left nothing behind.
   Phase 2: the threads share one communicator, each receiving its own messages by probe ->
   receive between erroneous probes and receives on that communicator (the probe policies' path).
   Only the main thread prints. */
// ranks: 2
#include <pthread.h>
#include <stdatomic.h>

#include "error_classes.h"

#define NT 4
#define ROUNDS 40
#define MAXCASES 32

struct thread_state {
  int index;
  MPI_Comm comm;
  MPI_Win win;
  int* win_mem;
  MPI_Info info;
  MPI_Errhandler eh, weh;
  /* written by the handler, which runs on this thread */
  int calls, last_class, wrong_object;
  /* per case */
  int ncases;
  const char* name[MAXCASES];
  int cls[MAXCASES];
  int unstable[MAXCASES];    /* rounds whose class differed from round 0's */
  int unstable_cls[MAXCASES]; /* the last such class */
  int bad_handler[MAXCASES]; /* rounds where the handler was not called exactly once with it */
  int ok_after;              /* the correct calls afterwards */
};
static struct thread_state ts[NT];
static int rank, size;

/* Handlers of the threads' communicators and windows: find the thread by the object. (Not by
   an attribute: MPICH 4.0.2 asserts in MPI_Comm_get_attr called from an error handler at
   MPI_THREAD_MULTIPLE.) */
static void comm_handler(MPI_Comm* comm, int* code, ...) {
  for (int t = 0; t < NT; ++t)
    if (*comm == ts[t].comm) {
      ++ts[t].calls;
      MPI_Error_class(*code, &ts[t].last_class);
      return;
    }
}
static void win_handler(MPI_Win* win, int* code, ...) {
  for (int t = 0; t < NT; ++t)
    if (*win == ts[t].win) {
      ++ts[t].calls;
      MPI_Error_class(*code, &ts[t].last_class);
      return;
    }
}

/* MPICH's ring of error codes (see the note above work()): a code that other threads' errors
   overwrote before MPICH returned it comes back as MPI_ERR_UNKNOWN (4.0.2) or MPI_ERR_OTHER
   (4.2.1), natively, with "INTERNAL ERROR: invalid error code ... (Ring ids do not match)" on
   stderr. MPICH 4.2 makes point-to-point, probe and RMA calls without its global lock too, so any
   case can meet it (measured: a few calls of 8000 per run). No case here has either class as its
   own: such a call is not counted in the case's rounds, and a handler that gets such a code counts
   the class the call has (the case's, found by another round or thread; phase 2's, known), so
   that the printed counts stay those of a run without the race. */
static int ring_lost(int cls) {
#ifdef MPICH
  return cls == MPI_ERR_UNKNOWN || cls == MPI_ERR_OTHER;
#else
  (void)cls;
  return 0;
#endif
}

/* The case a thread's call belongs to, and the class of each case (0 until some thread's round
   returned it): what a handler counts for a code lost in MPICH's ring. */
static __thread int current_case = -1, expected_class;
static _Atomic int case_class[MAXCASES], lost_unattributed[MAXCASES];

/* MPI_COMM_WORLD's handler, shared by all threads: calls counted per class. */
#define NCLASS 128
static int world_calls[NCLASS];
static pthread_mutex_t world_lock = PTHREAD_MUTEX_INITIALIZER;
static void world_handler(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  int cls = -1;
  MPI_Error_class(*code, &cls);
  if (ring_lost(cls) && current_case >= 0) {
    if (!case_class[current_case]) {
      ++lost_unattributed[current_case]; /* counted once its class is known */
      return;
    }
    cls = case_class[current_case];
  }
  pthread_mutex_lock(&world_lock);
  ++world_calls[cls >= 0 && cls < NCLASS ? cls : NCLASS - 1];
  pthread_mutex_unlock(&world_lock);
}

/* Records a round of case i (its class the first round's, as any thread saw it first); false when
   MPICH's ring lost the code, which then counts for nothing. */
static int record_case(struct thread_state* s, int i, const char* what, int cls) {
  if (ring_lost(cls)) return 0;
  int unset = 0;
  atomic_compare_exchange_strong(&case_class[i], &unset, cls);
  if (!s->name[i]) s->name[i] = what, s->cls[i] = cls;
  else if (s->cls[i] != cls) ++s->unstable[i], s->unstable_cls[i] = cls;
  return 1;
}
/* The call as case k of this round, its class in cls_ (current_case tells the handlers). */
#define RUN_CASE(call)      \
  int i_ = k++;             \
  current_case = i_;        \
  int cls_ = err_class(call); \
  current_case = -1
/* A case on the thread's own communicator or window: its handler called once, with the class. */
#define OWN(what, call)                                                                     \
  do {                                                                                      \
    int before_ = s->calls;                                                                 \
    RUN_CASE(call);                                                                         \
    if (record_case(s, i_, what, cls_) && (s->calls - before_ != 1 || s->last_class != cls_)) \
      ++s->bad_handler[i_];                                                                 \
  } while (0)
/* A case whose error goes to MPI_COMM_WORLD's handler: the thread's own is not called. */
#define WORLD(what, call)                                                       \
  do {                                                                          \
    int before_ = s->calls;                                                     \
    RUN_CASE(call);                                                             \
    if (record_case(s, i_, what, cls_) && s->calls != before_) ++s->bad_handler[i_]; \
  } while (0)

/* MPICH 4.0.2 makes the next calls without its global lock (MPI_Comm_rank, MPI_Pack,
   MPI_Info_set, MPI_Info_delete): their error codes race with the other threads' on MPICH's
   ring of error codes, and natively one such call in some runs (3 of 40) prints "INTERNAL ERROR:
   invalid error code ... (Ring ids do not match)" and returns MPI_ERR_UNKNOWN. */
static void* work(void* arg) {
  struct thread_state* s = arg;
  const MPI_Comm c = s->comm;
  const int peer = 1 - rank, big = size + 3;
  int buf[8] = {0}, flag = 0, ranks[1] = {big};
  char long_key[MPI_MAX_INFO_KEY + 8];
  memset(long_key, 'k', sizeof long_key - 1);
  long_key[sizeof long_key - 1] = 0;
  MPI_Request req;
  MPI_Status st;
  MPI_Message msg;
  MPI_Group g, ng;
  MPI_Datatype nt, null_type = MPI_DATATYPE_NULL;
  MPI_Op sum = MPI_SUM;
  MPI_Comm_group(c, &g);
  for (int round = 0; round < ROUNDS; ++round) {
    int k = 0, pos = 0;
    char packed[64];
    (void)pos, (void)packed;
    OWN("send dest size+3", MPI_Send(buf, 1, MPI_INT, big, 0, c));
    OWN("recv tag -3", MPI_Recv(buf, 1, MPI_INT, peer, -3, c, &st));
    OWN("isend count -1", MPI_Isend(buf, -1, MPI_INT, peer, 0, c, &req));
    OWN("irecv source -7", MPI_Irecv(buf, 1, MPI_INT, -7, 0, c, &req));
    OWN("ssend MPI_DATATYPE_NULL", MPI_Ssend(buf, 1, MPI_DATATYPE_NULL, peer, 0, c));
    OWN("sendrecv dest size+3", MPI_Sendrecv(buf, 1, MPI_INT, big, 0, buf + 1, 1, MPI_INT, peer, 0, c, &st));
    OWN("probe source size+3", MPI_Probe(big, 0, c, &st));
    OWN("iprobe tag -3", MPI_Iprobe(peer, -3, c, &flag, &st));
    OWN("mprobe tag -3", MPI_Mprobe(MPI_ANY_SOURCE, -3, c, &msg, &st));
    OWN("bcast root size+3", MPI_Bcast(buf, 1, MPI_INT, big, c));
    OWN("allreduce MPI_OP_NULL", MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_OP_NULL, c));
    OWN("ibcast root -7", MPI_Ibcast(buf, 1, MPI_INT, -7, c, &req));
    OWN("gather root size+3", MPI_Gather(buf, 1, MPI_INT, buf + 2, 1, MPI_INT, big, c));
    OWN("comm_split NULL newcomm", MPI_Comm_split(c, 0, 0, NULL));
    OWN("comm_dup NULL newcomm", MPI_Comm_dup(c, NULL));
#ifndef MPICH /* see the note above work() */
    OWN("comm_rank NULL rank", MPI_Comm_rank(c, NULL));
    OWN("pack count -1", MPI_Pack(buf, -1, MPI_INT, packed, (int)sizeof packed, &pos, c));
#endif
    OWN("win_lock lock type 99", MPI_Win_lock(99, peer, 0, s->win));
    MPI_Win_lock_all(0, s->win);
    OWN("put target size+3", MPI_Put(buf, 1, MPI_INT, big, 0, 1, MPI_INT, s->win));
    OWN("get count -1", MPI_Get(buf, -1, MPI_INT, peer, 0, 1, MPI_INT, s->win));
    MPI_Win_unlock_all(s->win);
    WORLD("type_contiguous count -1", MPI_Type_contiguous(-1, MPI_INT, &nt));
    WORLD("type_commit MPI_DATATYPE_NULL", MPI_Type_commit(&null_type));
#ifndef MPICH /* see the note above work() */
    WORLD("info_set key too long", MPI_Info_set(s->info, long_key, "v"));
    WORLD("info_delete missing key", MPI_Info_delete(s->info, "absent"));
#endif
    WORLD("group_incl rank size+3", MPI_Group_incl(g, 1, ranks, &ng));
    WORLD("op_free MPI_SUM", MPI_Op_free(&sum));
    WORLD("send MPI_COMM_NULL", MPI_Send(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL));
    WORLD("allreduce MPI_COMM_NULL", MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    WORLD("barrier MPI_COMM_NULL", MPI_Barrier(MPI_COMM_NULL));
    s->ncases = k;
  }
  MPI_Group_free(&g);
  /* Nothing left behind: messages, a reduction and a put on this thread's objects. */
  int ok = 1, out[4], in[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; ++i) out[i] = 1000 * rank + 100 * s->index + i;
  ok &= MPI_Sendrecv(out, 4, MPI_INT, peer, 9, in, 4, MPI_INT, peer, 9, c, &st) == MPI_SUCCESS;
  for (int i = 0; i < 4; ++i) ok &= in[i] == 1000 * peer + 100 * s->index + i;
  int v = s->index + rank, total = -1;
  ok &= MPI_Allreduce(&v, &total, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS;
  ok &= total == 2 * s->index + 1;
  ok &= MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, s->win) == MPI_SUCCESS;
  ok &= MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, s->win) == MPI_SUCCESS;
  ok &= MPI_Win_unlock(peer, s->win) == MPI_SUCCESS;
  ok &= MPI_Barrier(c) == MPI_SUCCESS;
  ok &= MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, s->win) == MPI_SUCCESS;
  ok &= s->win_mem[0] == s->index + peer;
  ok &= MPI_Win_unlock(rank, s->win) == MPI_SUCCESS;
  s->ok_after = ok;
  return NULL;
}

/* Phase 2: all threads on one communicator, each receiving its own messages (tag = thread) by
   probe -> receive while making erroneous probes and receives with bad sources and tags on the
   same communicator: the probe policies must neither lose nor swap a message, and every error
   reaches the shared communicator's handler. */
#define MSGS 30
static MPI_Comm shared = MPI_COMM_NULL;
static int shared_calls[NCLASS];
static void shared_handler(MPI_Comm* comm, int* code, ...) {
  int cls = -1;
  MPI_Error_class(*code, &cls);
  if (ring_lost(cls)) cls = expected_class;
  pthread_mutex_lock(&world_lock);
  ++shared_calls[*comm == shared && cls >= 0 && cls < NCLASS ? cls : NCLASS - 1];
  pthread_mutex_unlock(&world_lock);
}
static int not_class(int rc, int want) {
  int cls = err_class(rc);
  return cls != want && !ring_lost(cls);
}
/* Whether an erroneous call's class is not WANT (what the shared handler counts if MPICH lost it). */
#define WRONG(want, call) (expected_class = (want), not_class(call, want))
struct phase2 {
  int index, wrong_data, bad_rc, good_rc;
};
static void* work2(void* arg) {
  struct phase2* p = arg;
  const int peer = 1 - rank, tag = p->index, big = size + 3;
  int flag, count, out[4], in[4];
  MPI_Status st;
  MPI_Message msg;
  MPI_Request req;
  for (int m = 0; m < MSGS; ++m) {
    for (int i = 0; i < 4; ++i) out[i] = 10000 * rank + 100 * tag + m;
    if (MPI_Isend(out, 4, MPI_INT, peer, tag, shared, &req) != MPI_SUCCESS) ++p->good_rc;
    /* erroneous calls between the send and the receive */
    p->bad_rc += WRONG(MPI_ERR_RANK, MPI_Probe(big, tag, shared, &st));
    p->bad_rc += WRONG(MPI_ERR_TAG, MPI_Iprobe(peer, -3, shared, &flag, &st));
    p->bad_rc += WRONG(MPI_ERR_TAG, MPI_Recv(in, 4, MPI_INT, MPI_ANY_SOURCE, -3, shared, &st));
    p->bad_rc += WRONG(MPI_ERR_RANK, MPI_Improbe(-7, tag, shared, &flag, &msg, &st));
    /* this thread's message, by probe -> receive */
    if (MPI_Probe(peer, tag, shared, &st) != MPI_SUCCESS) ++p->good_rc;
    MPI_Get_count(&st, MPI_INT, &count);
    p->bad_rc += WRONG(MPI_ERR_RANK, MPI_Recv(in, 4, MPI_INT, big, tag, shared, &st));
    for (int i = 0; i < 4; ++i) in[i] = -1;
    if (MPI_Recv(in, count, MPI_INT, peer, tag, shared, &st) != MPI_SUCCESS) ++p->good_rc;
    for (int i = 0; i < 4; ++i) p->wrong_data += in[i] != 10000 * peer + 100 * tag + m;
    if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS) ++p->good_rc;
  }
  return NULL;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "bad_args_threads");
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Errhandler world_eh;
  MPI_Comm_create_errhandler(world_handler, &world_eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, world_eh);
  for (int t = 0; t < NT; ++t) {
    struct thread_state* s = &ts[t];
    s->index = t;
    MPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
    MPI_Comm_create_errhandler(comm_handler, &s->eh);
    MPI_Comm_set_errhandler(s->comm, s->eh);
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, s->comm, &s->win_mem, &s->win);
    s->win_mem[0] = -1;
    MPI_Win_create_errhandler(win_handler, &s->weh);
    MPI_Win_set_errhandler(s->win, s->weh);
    MPI_Info_create(&s->info);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  pthread_t th[NT];
  for (int t = 0; t < NT; ++t) pthread_create(&th[t], NULL, work, &ts[t]);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);

  /* The classes, once (thread 0's); then per thread what differed. */
  for (int i = 0; i < ts[0].ncases; ++i) SAY("%s: %s", ts[0].name[i], class_name(ts[0].cls[i]));
  for (int t = 0; t < NT; ++t) {
    struct thread_state* s = &ts[t];
    int other = 0, unstable = 0, bad = 0;
    for (int i = 0; i < s->ncases; ++i) {
      other += s->cls[i] != ts[0].cls[i];
      unstable += s->unstable[i];
      bad += s->bad_handler[i];
      if (s->unstable[i] || s->bad_handler[i])
        SAY("thread %d: %s: rounds with another class %d (%s), with the wrong handler calls %d", t, s->name[i],
            s->unstable[i], s->unstable[i] ? class_name(s->unstable_cls[i]) : "-", s->bad_handler[i]);
    }
    SAY("thread %d: %d cases x %d rounds: own handler calls %d, classes other than thread 0's %d, "
        "rounds with another class %d, with the wrong handler calls %d; correct calls afterwards ok %d",
        t, s->ncases, ROUNDS, s->calls, other, unstable, bad, s->ok_after);
    CHECK(other == 0 && unstable == 0 && bad == 0 && s->ok_after);
  }
  for (int i = 0; i < ts[0].ncases; ++i)
    if (lost_unattributed[i]) world_calls[case_class[i]] += lost_unattributed[i];
  int total = 0;
  for (int cls = 0; cls < NCLASS; ++cls)
    if (world_calls[cls]) {
      SAY("MPI_COMM_WORLD's handler: %s %d times", class_name(cls), world_calls[cls]);
      total += world_calls[cls];
    }
  SAY("MPI_COMM_WORLD's handler: %d calls in all", total);

  /* Phase 2 */
  MPI_Errhandler shared_eh;
  MPI_Comm_dup(MPI_COMM_WORLD, &shared);
  MPI_Comm_create_errhandler(shared_handler, &shared_eh);
  MPI_Comm_set_errhandler(shared, shared_eh);
  struct phase2 p2[NT];
  memset(p2, 0, sizeof p2);
  for (int t = 0; t < NT; ++t) p2[t].index = t, pthread_create(&th[t], NULL, work2, &p2[t]);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < NT; ++t) {
    SAY("shared communicator, thread %d: %d messages by probe -> receive, wrong data %d, "
        "erroneous calls with another class %d, correct calls failed %d",
        t, MSGS, p2[t].wrong_data, p2[t].bad_rc, p2[t].good_rc);
    CHECK(p2[t].wrong_data == 0 && p2[t].bad_rc == 0 && p2[t].good_rc == 0);
  }
  for (int cls = 0; cls < NCLASS; ++cls)
    if (shared_calls[cls])
      SAY("shared communicator's handler: %s %d times", cls == NCLASS - 1 ? "other" : class_name(cls),
          shared_calls[cls]);
  MPI_Comm_free(&shared);
  MPI_Errhandler_free(&shared_eh);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&world_eh);
  for (int t = 0; t < NT; ++t) {
    MPI_Win_free(&ts[t].win);
    MPI_Comm_free(&ts[t].comm);
    MPI_Info_free(&ts[t].info);
    MPI_Errhandler_free(&ts[t].eh);
    MPI_Errhandler_free(&ts[t].weh);
  }
  return cov_finish();
}

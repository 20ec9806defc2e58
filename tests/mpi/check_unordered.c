/* Pairs of MPI calls that MPI's thread rules forbid to be concurrent, made by two OpenMP threads of
   rank 0 and NOT ORDERED by anything of the program (TSMPI_CHECK reports "no ordering between
   thread A's CALL and thread B's CALL on OBJECT"), although in the run they never overlap in time:
   the later thread sleeps first (DELAY_US), so the error does not manifest and the program ends
   with correct data. Each has correct twins (usage's KIND) in which the same calls are ordered by
   the program's own synchronization; those tsmpi must not report.

   usage: check_unordered MODE [KIND]      (2 ranks; rank 1 makes the peer side of every call)
   MODE, the erroneous program (thread 1 of the pair delayed 200 ms):
     barrier       both threads MPI_Barrier on one communicator
     allreduce     both MPI_Allreduce on one communicator
     dup           both MPI_Comm_dup of one communicator (a constructor: collective over its input)
     barrier_many  8 threads, thread t delayed t x 100 ms, all MPI_Barrier on one communicator
     barrier_loop  the barrier pair 5 times in a loop (5 parallel regions): reported once
     barrier_free  MPI_Barrier on a communicator, then (another thread) MPI_Comm_free of it
     wait          both MPI_Wait(&req) on one request variable: the later one finds
                   MPI_REQUEST_NULL there (still erroneous: nothing orders the two calls)
     wait_loop     the wait pair 5 times (a new MPI_Irecv each time): reported once
     test          both poll MPI_Test(&req) until it is complete (the later finds MPI_REQUEST_NULL)
     free_comm     MPI_Sendrecv on a communicator, MPI_Comm_free of it in an `omp single nowait`
     free_info     MPI_Info_get, MPI_Info_free of the info in an `omp single nowait`
     free_type     MPI_Sendrecv with a datatype, MPI_Type_free of it in an `omp single nowait`
     probe         both MPI_Probe(MPI_ANY_SOURCE, tag) then MPI_Recv of the probed source and tag
     probe_handover thread 0 probes and hands the probed source/tag over (mutex + flag) to
                   thread 1, which receives with them: ordered, but under tsmpi's probe policy a
                   probed message is reserved for the probing thread, so "thread 1's MPI_Recv may
                   take the message thread 0's MPI_Probe probed" is reported as non-portable.
                   Rank 1 sends two messages with one envelope: natively thread 1 receives the
                   probed one and thread 0 (after thread 1 is done) the second; under the
                   default TSMPI_PROBE=mprobe thread 1 receives the second and thread 0 its
                   reserved one. Either way each is received once and the data checks pass.
                   (Under TSMPI_PROBE=lock2d thread 1's receive may wait for thread 0's, which
                   waits for thread 1: run it under the default policy.)
   The free modes have the shape "object freed in one `omp single nowait` while another thread
   uses it": thread 0 sleeps HEAD_US before its use, so thread 1 takes the single, and the single
   sleeps DELAY_US before the free: the use comes first in time, the free later, nothing orders
   them. (If thread 0 should take the single, the free is after the use on one thread: correct,
   nothing to report; the program says so on a line of its own.)
   KIND, a correct twin (the same calls ordered):
     barrier   an `omp barrier` between the first call and the second
     critical  each call in `omp critical` (the free modes: the freeing thread waits in the
               critical section for a flag the using thread sets after its call)
     lock      the same with omp_set_lock/omp_unset_lock
     mutex     the same with a pthread mutex
     join      the first call in thread 1 inside the parallel region, the second by the master
               after it (the end of the region joins)
     fork      the first call by the master before the region, the second in thread 1
     single    (free modes) the use in an `omp single` (its implied barrier), the free in the
               following `omp single nowait`
     taskwait  in an `omp single`: a task makes the first call, `omp taskwait`, a task the second
     depend    two tasks, depend(out) and depend(in) on one variable
     taskloop  in an `omp single`: the first call, then a taskloop of 2 tasks that wait for each
               other (so that the other thread runs one), whose task on the other thread makes
               the second call (a taskloop's tasks begin after their creator's present)
     taskloop_end  the same, but the other thread's task makes the first call and the single's
               thread the second after the taskloop (its implicit taskgroup ends it)
     tag       (probe) each thread probes and receives its own tag
     self      (probe_handover) thread 0 receives what it probed before it hands over; thread 1
               then probes and receives the second message
   Prints "check_unordered: rank R: MODE[ twin KIND] done" and "check_unordered: rank R: ok". */
#include <omp.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define DELAY_US 200000 /* the later thread's sleep before its call */
#define HEAD_US 50000   /* free modes: the using thread's sleep, so that the other takes the single */
#define STEP_US 100000  /* barrier_many: thread t sleeps t x STEP_US */
#define MANY 8
#define TAG 7

enum kind { K_NONE, K_BARRIER, K_CRITICAL, K_LOCK, K_MUTEX, K_JOIN, K_FORK, K_SINGLE, K_TASKWAIT, K_DEPEND, K_TAG, K_SELF,
            K_TASKLOOP, K_TASKLOOP_END };
static const char* const kind_names[] = {"none",   "barrier",  "critical", "lock", "mutex",    "join",        "fork",
                                         "single", "taskwait", "depend",   "tag",  "self",     "taskloop", "taskloop_end"};
#define KINDS (int)(sizeof kind_names / sizeof kind_names[0])
#define BIT(k) (1u << (k))
#define LOCKS (BIT(K_CRITICAL) | BIT(K_LOCK) | BIT(K_MUTEX))
#define ORDERS (BIT(K_BARRIER) | LOCKS | BIT(K_JOIN) | BIT(K_FORK) | BIT(K_TASKWAIT) | BIT(K_DEPEND) | BIT(K_TASKLOOP) | BIT(K_TASKLOOP_END))

static int rank, peer;
static enum kind kind;
static MPI_Comm comm;       /* the round's communicator (a duplicate of MPI_COMM_WORLD) */
static MPI_Comm dups[2];    /* dup: the two duplicates of comm */
static MPI_Request shared_req;
static int recv_val;
static MPI_Info info;
static MPI_Datatype type;
static int got[MANY];       /* probe: the first value of each role's message */
static omp_lock_t omp_lk;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static int a_done;          /* free modes' flag: the first call is over (under the kind's lock) */
static int dep;             /* depend: the tasks' dependence variable */
static int team[2];         /* team sizes seen (thread 0 of a region writes it) */
static int single_taker = -1;

#define RC(call)                                               \
  do {                                                         \
    int rc_ = (call);                                          \
    CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);   \
  } while (0)

/* ---- the calls of each mode; `role` 0 is the first call, 1 the second ---- */
static void barrier_call(int role) {
  (void)role;
  RC(MPI_Barrier(comm));
}
static void allreduce_call(int role) {
  (void)role;
  int in = 1, out = 0;
  RC(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm));
  CHECK(out == 11, "MPI_Allreduce gave %d, expected 11", out);
}
static void dup_call(int role) { RC(MPI_Comm_dup(comm, &dups[role])); }
static void comm_free_call(int role) {
  (void)role;
  RC(MPI_Comm_free(&comm));
}
static void wait_call(int role) {
  (void)role;
  MPI_Status st;
  RC(MPI_Wait(&shared_req, &st));
}
static void test_call(int role) {
  (void)role;
  int flag = 0;
  while (!flag) RC(MPI_Test(&shared_req, &flag, MPI_STATUS_IGNORE));
}
static void sendrecv_comm_call(int role) {
  (void)role;
  int out = 1000 + rank, in = -1;
  RC(MPI_Sendrecv(&out, 1, MPI_INT, peer, TAG, &in, 1, MPI_INT, peer, TAG, comm, MPI_STATUS_IGNORE));
  CHECK(in == 1000 + peer, "MPI_Sendrecv received %d, expected %d", in, 1000 + peer);
}
static void info_get_call(int role) {
  (void)role;
  char value[16] = "";
  int flag = 0;
  RC(MPI_Info_get(info, "k", sizeof value - 1, value, &flag));
  CHECK(flag && !strcmp(value, "v"), "MPI_Info_get: flag %d value '%s'", flag, value);
}
static void info_free_call(int role) {
  (void)role;
  RC(MPI_Info_free(&info));
}
static void sendrecv_type_call(int role) {
  (void)role;
  int out[4], in[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; ++i) out[i] = 100 * rank + i;
  RC(MPI_Sendrecv(out, 1, type, peer, TAG, in, 1, type, peer, TAG, comm, MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK(in[i] == 100 * peer + i, "in[%d] = %d", i, in[i]);
}
static void type_free_call(int role) {
  (void)role;
  RC(MPI_Type_free(&type));
}
/* Message k of rank 1 (probe modes): k + 2 ints (probe_handover: 2), each 100 + k. */
static void probe_call(int role) {
  MPI_Status st;
  int n = -1, m = -1;
  RC(MPI_Probe(MPI_ANY_SOURCE, kind == K_TAG ? TAG + role : TAG, comm, &st));
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n >= 2 && n <= 3, "probed %d ints", n);
  if (n < 2 || n > 3) n = 3;
  int buf[3] = {-1, -1, -1};
  RC(MPI_Recv(buf, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, comm, &st));
  MPI_Get_count(&st, MPI_INT, &m);
  CHECK(m == n, "probed %d ints, received %d", n, m);
  for (int i = 1; i < m; ++i) CHECK(buf[i] == buf[0], "buf[%d] = %d, buf[0] = %d", i, buf[i], buf[0]);
  CHECK(buf[0] == 100 + n - 2, "received %d in a message of %d ints", buf[0], n);
  got[role] = buf[0];
}

typedef struct {
  const char* name;
  void (*a)(int);       /* the first call (thread 0) */
  void (*b)(int);       /* the second (thread 1, delayed) */
  int free_shape;       /* b frees what a uses: a must come first (see the header) */
  int rounds;
  unsigned kinds;       /* the twins it has */
} Mode;

static const Mode modes[] = {
  {"barrier", barrier_call, barrier_call, 0, 1, ORDERS},
  {"allreduce", allreduce_call, allreduce_call, 0, 1, ORDERS},
  {"dup", dup_call, dup_call, 0, 1, ORDERS},
  {"barrier_many", barrier_call, barrier_call, 0, 1, BIT(K_BARRIER) | LOCKS},
  {"barrier_loop", barrier_call, barrier_call, 0, 5, ORDERS},
  {"barrier_free", barrier_call, comm_free_call, 1, 1, ORDERS | BIT(K_SINGLE)},
  {"wait", wait_call, wait_call, 0, 1, ORDERS},
  {"wait_loop", wait_call, wait_call, 0, 5, ORDERS},
  {"test", test_call, test_call, 0, 1, ORDERS},
  {"free_comm", sendrecv_comm_call, comm_free_call, 1, 1, ORDERS | BIT(K_SINGLE)},
  {"free_info", info_get_call, info_free_call, 1, 1, ORDERS | BIT(K_SINGLE)},
  {"free_type", sendrecv_type_call, type_free_call, 1, 1, ORDERS | BIT(K_SINGLE)},
  {"probe", probe_call, probe_call, 0, 1, ORDERS | BIT(K_TAG)},
  {"probe_handover", NULL, NULL, 0, 1, BIT(K_SELF)},
};
static const Mode* mode;

/* ---- the kinds of ordering ---- */
/* taskloop: the loop's two tasks wait for each other, so that the thread that did not create them
   runs one (an atomic counter: nothing an observer takes for an ordering). */
static atomic_int tasks_met;
static void meet_other_task(void) {
  atomic_fetch_add(&tasks_met, 1);
  for (int i = 0; atomic_load(&tasks_met) < 2; ++i) {
    CHECK(i < 100000, "the taskloop's other task never began");
    usleep(100);
  }
}

static void locked_call(void (*fn)(int), int role, int set_flag) {
  switch (kind) {
    case K_CRITICAL: {
#pragma omp critical(check_unordered)
      {
        fn(role);
        if (set_flag) a_done = 1;
      }
      break;
    }
    case K_LOCK:
      omp_set_lock(&omp_lk);
      fn(role);
      if (set_flag) a_done = 1;
      omp_unset_lock(&omp_lk);
      break;
    default:
      pthread_mutex_lock(&mtx);
      fn(role);
      if (set_flag) a_done = 1;
      pthread_mutex_unlock(&mtx);
      break;
  }
}
/* Polls the flag under the kind's lock until the first call is over. */
static void wait_for_first(void) {
  for (;;) {
    int seen = 0;
    switch (kind) {
      case K_CRITICAL: {
#pragma omp critical(check_unordered)
        seen = a_done;
        break;
      }
      case K_LOCK:
        omp_set_lock(&omp_lk);
        seen = a_done;
        omp_unset_lock(&omp_lk);
        break;
      default:
        pthread_mutex_lock(&mtx);
        seen = a_done;
        pthread_mutex_unlock(&mtx);
        break;
    }
    if (seen) return;
    usleep(1000);
  }
}

/* When each role's call began and ended (CLOCK_MONOTONIC, ns; no synchronization): an
   erroneous run says so when its two calls overlapped in time after all. */
static long long began[MANY], ended[MANY];
static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static void (*timed_fn[2])(int);
static void timed(int role) {
  began[role] = now_ns();
  timed_fn[role](role);
  ended[role] = now_ns();
}
static void report_times(int n) {
  for (int i = 1; i < n; ++i)
    if (began[i] < ended[i - 1])
      printf("check_unordered: rank 0: calls %d and %d overlapped in time by %.1f ms\n", i - 1, i,
             (ended[i - 1] - began[i]) / 1e6);
  if (getenv("CHECK_UNORDERED_TRACE"))
    for (int i = 0; i < n; ++i)
      printf("check_unordered: rank 0: call %d from %.1f to %.1f ms\n", i, (began[i] - began[0]) / 1e6,
             (ended[i] - began[0]) / 1e6);
}

/* One round of rank 0: the pair of calls in a parallel region of two threads. */
static void run_pair(void) {
  const Mode m_ = {mode->name, timed, timed, mode->free_shape, mode->rounds, mode->kinds};
  const Mode* m = &m_;
  timed_fn[0] = mode->a;
  timed_fn[1] = mode->b;
  a_done = 0;
  if (kind == K_FORK) m->a(0);
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    if (t == 0) team[0] = omp_get_num_threads();
    switch (kind) {
      case K_NONE:
      case K_TAG:
        if (m->free_shape) {
          if (t == 0) {
            usleep(HEAD_US);
            m->a(0);
          }
#pragma omp single nowait
          {
            single_taker = t;
            usleep(DELAY_US);
            m->b(1);
          }
        } else {
          if (t == 1) usleep(DELAY_US);
          (t == 0 ? m->a : m->b)(t);
        }
        break;
      case K_BARRIER:
        if (t == 0) m->a(0);
#pragma omp barrier
        if (m->free_shape) {
#pragma omp single nowait
          m->b(1);
        } else if (t == 1) {
          m->b(1);
        }
        break;
      case K_CRITICAL:
      case K_LOCK:
      case K_MUTEX:
        if (m->free_shape) {
          if (t == 0) {
            usleep(HEAD_US);
            locked_call(m->a, 0, 1);
          }
#pragma omp single nowait
          {
            usleep(DELAY_US);
            wait_for_first();
            m->b(1);
          }
        } else {
          if (t == 1) usleep(DELAY_US);
          locked_call(t == 0 ? m->a : m->b, t, 0);
        }
        break;
      case K_JOIN:
        if (t == 1) m->a(0);
        break;
      case K_FORK:
        if (t == 1) m->b(1);
        break;
      case K_SINGLE:
#pragma omp single
        m->a(0);
#pragma omp single nowait
        m->b(1);
        break;
      case K_TASKWAIT:
#pragma omp single
        {
#pragma omp task
          m->a(0);
#pragma omp taskwait
#pragma omp task
          m->b(1);
        }
        break;
      case K_DEPEND:
#pragma omp single
        {
#pragma omp task depend(out : dep)
          m->a(0);
#pragma omp task depend(in : dep)
          m->b(1);
        }
        break;
      case K_TASKLOOP:
      case K_TASKLOOP_END:
#pragma omp single
        {
          const int creator = omp_get_thread_num();
          if (kind == K_TASKLOOP) m->a(0);
          atomic_store(&tasks_met, 0);
#pragma omp taskloop num_tasks(2)
          for (int i = 0; i < 2; ++i) {
            meet_other_task();
            if (omp_get_thread_num() != creator) (kind == K_TASKLOOP ? m->b : m->a)(kind == K_TASKLOOP);
          }
          if (kind == K_TASKLOOP_END) m->b(1);
        }
        break;
      default:
        break;
    }
  }
  if (kind == K_JOIN) m->b(1);
  CHECK(team[0] == 2, "a team of %d threads, not 2", team[0]);
  report_times(2);
}

/* barrier_many: MANY threads, each MPI_Barrier on comm. */
static void run_many(void) {
#pragma omp parallel num_threads(MANY)
  {
    int t = omp_get_thread_num();
    if (t == 0) team[1] = omp_get_num_threads();
    switch (kind) {
      case K_NONE:
        usleep(t * STEP_US);
        began[t] = now_ns();
        barrier_call(t);
        ended[t] = now_ns();
        break;
      case K_BARRIER:
        for (int i = 0; i < MANY; ++i) {
          if (t == i) barrier_call(t);
#pragma omp barrier
        }
        break;
      default:  /* critical, lock, mutex */
        usleep(t * STEP_US);
        locked_call(barrier_call, t, 0);
        break;
    }
  }
  CHECK(team[1] == MANY, "a team of %d threads, not %d", team[1], MANY);
  if (kind == K_NONE) report_times(MANY);
}

/* probe_handover: thread 0 probes; thread 1 receives with the probed envelope. */
static int handed, taken, ho_source, ho_tag;
static int mutex_flag(int* flag) {
  pthread_mutex_lock(&mtx);
  int v = *flag;
  pthread_mutex_unlock(&mtx);
  return v;
}
static void set_mutex_flag(int* flag) {
  pthread_mutex_lock(&mtx);
  *flag = 1;
  pthread_mutex_unlock(&mtx);
}
static int recv_two(int source, int tag) {
  int buf[2] = {-1, -1}, n = -1;
  MPI_Status st;
  RC(MPI_Recv(buf, 2, MPI_INT, source, tag, comm, &st));
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 2 && buf[0] == buf[1], "received %d ints: %d %d", n, buf[0], buf[1]);
  return buf[0];
}
static void run_handover(void) {
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    if (t == 0) team[0] = omp_get_num_threads();
    if (t == 0) {
      MPI_Status st;
      int n = -1;
      RC(MPI_Probe(MPI_ANY_SOURCE, TAG, comm, &st));
      MPI_Get_count(&st, MPI_INT, &n);
      CHECK(n == 2, "probed %d ints", n);
      if (kind == K_SELF) got[0] = recv_two(st.MPI_SOURCE, st.MPI_TAG);
      pthread_mutex_lock(&mtx);
      ho_source = st.MPI_SOURCE;
      ho_tag = st.MPI_TAG;
      handed = 1;
      pthread_mutex_unlock(&mtx);
      if (kind != K_SELF) {
        /* After thread 1's receive: the message left with this envelope. */
        while (!mutex_flag(&taken)) usleep(1000);
        got[0] = recv_two(ho_source, ho_tag);
      }
    } else {
      while (!mutex_flag(&handed)) usleep(1000);
      if (kind == K_SELF) {
        MPI_Status st;
        RC(MPI_Probe(MPI_ANY_SOURCE, TAG, comm, &st));
        got[1] = recv_two(st.MPI_SOURCE, st.MPI_TAG);
      } else {
        got[1] = recv_two(ho_source, ho_tag);
      }
      set_mutex_flag(&taken);
    }
  }
  CHECK(team[0] == 2, "a team of %d threads, not 2", team[0]);
}

/* ---- each mode's preparation (both ranks), rank 1's side, rank 0's checks ---- */
static int starts_with(const char* s, const char* prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static void prepare(int round) {
  if (starts_with(mode->name, "wait") || !strcmp(mode->name, "test")) {
    /* Rank 1 sends before the round's barrier: the message is there when rank 0's first thread
       waits, so its wait ends at once however loaded the machine (a send made after the
       barrier came more than the second thread's 200 ms later once, and the two waits met). */
    if (rank == 0) {
      recv_val = -1;
      RC(MPI_Irecv(&recv_val, 1, MPI_INT, 1, TAG, comm, &shared_req));
    } else {
      int v = 42 + round;
      RC(MPI_Send(&v, 1, MPI_INT, 0, TAG, comm));
    }
  } else if (!strcmp(mode->name, "free_info")) {
    if (rank == 0) {
      RC(MPI_Info_create(&info));
      RC(MPI_Info_set(info, "k", "v"));
    }
  } else if (!strcmp(mode->name, "free_type")) {
    RC(MPI_Type_contiguous(4, MPI_INT, &type));
    RC(MPI_Type_commit(&type));
  }
  got[0] = got[1] = -1;
}

static void peer_side(int round) {
  const char* n = mode->name;
  if (!strcmp(n, "barrier") || !strcmp(n, "barrier_loop")) {
    barrier_call(0);
    barrier_call(1);
  } else if (!strcmp(n, "barrier_many")) {
    for (int i = 0; i < MANY; ++i) barrier_call(i);
  } else if (!strcmp(n, "allreduce")) {
    for (int i = 0; i < 2; ++i) {
      int in = 10, out = 0;
      RC(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm));
      CHECK(out == 11, "MPI_Allreduce gave %d, expected 11", out);
    }
  } else if (!strcmp(n, "dup")) {
    dup_call(0);
    dup_call(1);
  } else if (!strcmp(n, "barrier_free")) {
    barrier_call(0);
    comm_free_call(1);
  } else if (!strcmp(n, "free_comm")) {  /* wait, test: rank 1 sent in prepare() */
    sendrecv_comm_call(0);
    comm_free_call(1);
  } else if (!strcmp(n, "free_type")) {
    sendrecv_type_call(0);
    type_free_call(1);
  } else if (!strcmp(n, "probe") || !strcmp(n, "probe_handover")) {
    for (int k = 0; k < 2; ++k) {
      int buf[3], len = !strcmp(n, "probe") ? k + 2 : 2;
      for (int i = 0; i < 3; ++i) buf[i] = 100 + k;
      RC(MPI_Send(buf, len, MPI_INT, 0, kind == K_TAG ? TAG + k : TAG, comm));
    }
  }
  /* free_info: nothing on rank 1 */
}

static void check_round(int round) {
  const char* n = mode->name;
  if (starts_with(n, "wait") || !strcmp(n, "test")) {
    CHECK(recv_val == 42 + round, "received %d, expected %d", recv_val, 42 + round);
    CHECK(shared_req == MPI_REQUEST_NULL, "the request is not MPI_REQUEST_NULL");
  } else if (!strcmp(n, "probe") || !strcmp(n, "probe_handover")) {
    CHECK((got[0] == 100 && got[1] == 101) || (got[0] == 101 && got[1] == 100),
          "the threads received %d and %d, expected 100 and 101 once each", got[0], got[1]);
  } else if (!strcmp(n, "free_info")) {
    CHECK(info == MPI_INFO_NULL, "the info is not MPI_INFO_NULL after MPI_Info_free");
  } else if (!strcmp(n, "free_type")) {
    CHECK(type == MPI_DATATYPE_NULL, "the datatype is not MPI_DATATYPE_NULL after MPI_Type_free");
  }
  if (mode->free_shape && kind == K_NONE && single_taker == 0)
    printf("check_unordered: rank 0: thread 0 took the single: the free followed the use on one thread\n");
}

static void finish_mode(void) {
  if (!strcmp(mode->name, "dup")) {
    for (int i = 0; i < 2; ++i) {
      int result = -1;
      MPI_Comm_compare(dups[i], MPI_COMM_WORLD, &result);
      CHECK(result == MPI_CONGRUENT, "duplicate %d compares %d with MPI_COMM_WORLD", i, result);
      RC(MPI_Comm_free(&dups[i]));
    }
  }
  if (!strcmp(mode->name, "barrier_free") || !strcmp(mode->name, "free_comm"))
    CHECK(comm == MPI_COMM_NULL, "the communicator is not MPI_COMM_NULL after MPI_Comm_free");
  else
    RC(MPI_Comm_free(&comm));
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "check_unordered", &rank, &peer);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* mode_name = argc > 1 ? argv[1] : "";
  const char* kind_name = argc > 2 ? argv[2] : "none";
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
    if (!strcmp(modes[i].name, mode_name)) mode = &modes[i];
  int k = 0;
  while (k < KINDS && strcmp(kind_names[k], kind_name)) ++k;
  if (!mode || k == KINDS || (k != K_NONE && !(mode->kinds & BIT(k)))) {
    if (rank == 0) printf("check_unordered: unknown mode or twin '%s' '%s'\n", mode_name, kind_name);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  kind = (enum kind)k;
  omp_set_dynamic(0);
  omp_init_lock(&omp_lk);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);  /* inherits MPI_ERRORS_RETURN */
  for (int round = 0; round < mode->rounds; ++round) {
    prepare(round);
    /* Rank 1 is in its calls when rank 0's threads make theirs: the first call of the pair
       completes at once, long before the second begins. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      if (!strcmp(mode->name, "barrier_many"))
        run_many();
      else if (!strcmp(mode->name, "probe_handover"))
        run_handover();
      else
        run_pair();
      check_round(round);
    } else {
      peer_side(round);
    }
  }
  finish_mode();
  omp_destroy_lock(&omp_lk);
  printf("check_unordered: rank %d: %s%s%s done\n", rank, mode->name, kind == K_NONE ? "" : " twin ",
         kind == K_NONE ? "" : kind_names[kind]);
  return test_finish();
}

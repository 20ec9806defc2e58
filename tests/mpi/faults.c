/* Faults: how a job ends when a rank aborts or dies while other threads wait in MPI calls, and
   that nothing keeps a process alive after MPI_Finalize or exit. Run by tests/mpi/faults_run.sh,
   which measures the time from the program's last "at t=" mark (CLOCK_REALTIME, printed just
   before the fault or the end) to the end of the job, and looks for processes left behind.

   faults abort: 2+ ranks. Every rank starts five threads that block for ever in calls tsmpi
     protects: MPI_Recv from MPI_ANY_SOURCE, MPI_Probe from MPI_ANY_SOURCE (tags nobody sends),
     MPI_Wait on an MPI_Irecv from the next rank, MPI_Ssend to the next rank on a communicator
     nobody receives on, and a collective on a duplicate of MPI_COMM_WORLD that one rank never
     joins (MPI_Barrier on ranks 0..size-2, MPI_Bcast from rank 0 on the last rank). Once all
     ranks' threads are inside (each other rank says so) and DELAY ms later, a sixth thread of
     rank 0 calls MPI_Abort(MPI_COMM_WORLD, 7).
   faults kill: 3 ranks. Ranks 0 and 1: a thread probes and receives a stream of messages from
     rank 2, a thread waits in MPI_Recv from rank 2 for a tag it never sends, one in MPI_Barrier
     and one in MPI_Allreduce on duplicates rank 2 never enters, and two threads exchange
     messages with the other of ranks 0 and 1 without end (send, probe, receive), checking them.
     Rank 2 sends the stream from two threads (a third waits in MPI_Recv from rank 0); once
     ranks 0 and 1 say all their threads are inside and DELAY ms later, mid-stream, it raises
     SIGKILL.
   faults finalize: 2+ ranks, 4 threads each exchange 40 rounds of messages of varying size
     with every other rank (MPI_Isend ... MPI_Waitall), received by MPI_Probe(MPI_ANY_SOURCE) +
     MPI_Recv (threads 0, 2) or MPI_Iprobe(MPI_ANY_SOURCE) loop + MPI_Recv (threads 1, 3) by the
     probed source and tag, every byte checked. Rank 0 starts 200 ms late
     so the other ranks' probes wait (under TSMPI_PROBE=helper that starts the helper thread).
     Then a mark, MPI_Finalize, return 0.
   faults exit: as finalize, but the threads' traffic is followed by a barrier, a mark and
     exit(0) from main without MPI_Finalize (erroneous; the launcher decides the status).

   faults abort|kill [DELAY]: DELAY in ms, default 1000.
   Every mode sets alarm(120) (FAULTS_ALARM=S to change it), so that no process outlives a
   broken test for long (faults_run.sh ends a hung job sooner; 120 s leaves room for the machine
   stalls it leaves out of its times), and reports the terminating signals it gets (SIGALRM, SIGTERM, ...)
   with their sender before they take effect. faults_run.sh appends faults_marks=PATH, which also identifies the
   job's processes; other further arguments are ignored. */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

static int rank, size;
static int fault_delay_ms = 1000; /* argv[2]: from "everybody is blocked" to the fault */
static MPI_Comm ready_comm;       /* "my threads are blocked" messages, apart from theirs */
enum { TAG_READY = 999 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "faults: rank R: WHAT at t=SECONDS": faults_run.sh times the end of the job from the last one.
   Also appended to the file faults_run.sh names in the argument faults_marks=PATH: a launcher
   may drop a rank's last output when the job is ended (Hydra, after MPI_Abort). */
static const char* marks_path;
static void mark(const char* what) {
  char line[256];
  snprintf(line, sizeof line, "faults: rank %d: %s at t=%.3f\n", rank, what, now());
  fputs(line, stdout);
  fflush(stdout);
  int fd = marks_path ? open(marks_path, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
  if (fd >= 0) {
    if (write(fd, line, strlen(line)) < 0) perror("faults: marks file");
    close(fd);
  }
}

/* One printf per line: lines of several threads must not interleave. */
static void say(const char* fmt, const char* what) {
  char text[256];
  snprintf(text, sizeof text, fmt, what);
  printf("faults: rank %d: %s\n", rank, text);
  fflush(stdout);
}

/* A terminating signal from outside is reported (who sent it) before it takes effect. */
static void on_signal(int sig, siginfo_t* si, void* uc) {
  (void)uc;
  char text[160];
  int n = snprintf(text, sizeof text, "faults: rank %d (pid %d): signal %d from pid %d (si_code %d)\n", rank,
                   (int)getpid(), sig, (int)si->si_pid, si->si_code);
  if (write(2, text, n) < 0) {
  }
  raise(sig); /* SA_RESETHAND: the default action, once this handler returns */
}

static void report_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGALRM, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};
  for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) sigaction(sigs[i], &sa, NULL);
}

static int thread_count(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  for (struct dirent* e; (e = readdir(d));)
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Sleeps ms of time in which the machine ran: the virtual machines here stand still for 30-60 s
   at times, after which every timer is due at once; the wait starts again after such a stall,
   so that the hang watchdog's timer (due well before the fault) has its report out first. */
static double monotonic_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static void sleep_running_ms(int ms) {
  double left = ms / 1000.0;
  while (left > 0) {
    const double step = left < 0.1 ? left : 0.1;
    const double before = monotonic_s();
    sleep_ms((int)(step * 1000));
    const double took = monotonic_s() - before;
    left = took > step + 1.0 ? ms / 1000.0 : left - step;
  }
}

/* Threads count themselves just before their blocking call. */
static atomic_int entered;
static void entering(const char* call) {
  say("thread enters %s", call);
  atomic_fetch_add(&entered, 1);
}

static void wait_entered(int n) {
  while (atomic_load(&entered) < n) sleep_ms(10);
}

/* The faulting rank waits until every other rank's threads are inside their calls (each says
   so once they all entered), then fault_delay_ms more. */
static void tell_ready(int to, int n) {
  wait_entered(n);
  int v = rank;
  MPI_Send(&v, 1, MPI_INT, to, TAG_READY, ready_comm);
}
static void wait_ready(int n) {
  wait_entered(n);
  for (int k = 0; k < size - 1; ++k) {
    int v;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, TAG_READY, ready_comm, MPI_STATUS_IGNORE);
  }
  say("%s", "every rank's threads are inside their calls");
  sleep_running_ms(fault_delay_ms);
}

/* ---- abort --------------------------------------------------------------------------------- */
enum { TAG_NEVER_RECV = 1000, TAG_NEVER_PROBE = 1001, TAG_NEVER_IRECV = 1002, TAG_SSEND = 1003 };
static MPI_Comm abort_coll_comm, abort_ssend_comm;

static void* abort_recv_any(void* arg) {
  (void)arg;
  int v;
  entering("MPI_Recv(MPI_ANY_SOURCE)");
  MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, TAG_NEVER_RECV, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  say("%s", "MPI_Recv returned (it must not)");
  return NULL;
}

static void* abort_probe_any(void* arg) {
  (void)arg;
  MPI_Status st;
  entering("MPI_Probe(MPI_ANY_SOURCE)");
  MPI_Probe(MPI_ANY_SOURCE, TAG_NEVER_PROBE, MPI_COMM_WORLD, &st);
  say("%s", "MPI_Probe returned (it must not)");
  return NULL;
}

static void* abort_wait_irecv(void* arg) {
  (void)arg;
  int v;
  MPI_Request r;
  MPI_Irecv(&v, 1, MPI_INT, (rank + 1) % size, TAG_NEVER_IRECV, MPI_COMM_WORLD, &r);
  entering("MPI_Wait(MPI_Irecv)");
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  say("%s", "MPI_Wait returned (it must not)");
  return NULL;
}

static void* abort_ssend(void* arg) {
  (void)arg;
  int v = rank;
  entering("MPI_Ssend");
  MPI_Ssend(&v, 1, MPI_INT, (rank + 1) % size, TAG_SSEND, abort_ssend_comm);
  say("%s", "MPI_Ssend returned (it must not)");
  return NULL;
}

static void* abort_collective(void* arg) {
  (void)arg;
  if (rank < size - 1) {
    entering("MPI_Barrier");
    MPI_Barrier(abort_coll_comm); /* the last rank never enters it */
    say("%s", "MPI_Barrier returned (it must not)");
  } else {
    int v = 0;
    entering("MPI_Bcast");
    MPI_Bcast(&v, 1, MPI_INT, 0, abort_coll_comm); /* rank 0 never enters it */
    say("%s", "MPI_Bcast returned (it must not)");
  }
  return NULL;
}

enum { ABORT_BLOCKED = 5 };

static void* abort_aborter(void* arg) {
  (void)arg;
  wait_ready(ABORT_BLOCKED);
  mark("MPI_Abort(MPI_COMM_WORLD, 7) from a thread");
  MPI_Abort(MPI_COMM_WORLD, 7);
  say("%s", "MPI_Abort returned (it must not)");
  return NULL;
}

static int run_abort(void) {
  MPI_Comm_dup(MPI_COMM_WORLD, &abort_coll_comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &abort_ssend_comm);
  MPI_Barrier(MPI_COMM_WORLD);
  thread_fn fns[ABORT_BLOCKED] = {abort_recv_any, abort_probe_any, abort_wait_irecv, abort_ssend, abort_collective};
  pthread_t t[ABORT_BLOCKED + 1];
  for (int i = 0; i < ABORT_BLOCKED; ++i) pthread_create(&t[i], NULL, fns[i], NULL);
  if (rank == 0) pthread_create(&t[ABORT_BLOCKED], NULL, abort_aborter, NULL);
  else tell_ready(0, ABORT_BLOCKED);
  for (int i = 0; i < ABORT_BLOCKED; ++i) pthread_join(t[i], NULL);
  say("%s", "all threads returned (they must not)");
  return 1;
}

/* ---- kill ---------------------------------------------------------------------------------- */
enum { TAG_STREAM = 2000, TAG_NEVER_FROM_2 = 2001, TAG_PAIR = 2100, STREAM_INTS = 64 };
static MPI_Comm kill_barrier_comm, kill_allreduce_comm, kill_pair_comm;
static atomic_long stream_received, pair_exchanged;

static void fill(int* buf, int n, int seed) {
  for (int i = 0; i < n; ++i) buf[i] = seed * 31 + i;
}
static int check_buf(const int* buf, int n, int seed) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != seed * 31 + i) return 0;
  return 1;
}

/* Ranks 0, 1: probe + receive the stream from rank 2 for ever. */
static void* kill_stream_receiver(void* arg) {
  (void)arg;
  int buf[STREAM_INTS + 1];
  for (;;) {
    MPI_Status st;
    int n = -1;
    MPI_Probe(2, TAG_STREAM, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == STREAM_INTS + 1, "stream count %d", n);
    MPI_Recv(buf, STREAM_INTS + 1, MPI_INT, 2, TAG_STREAM, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(check_buf(buf + 1, STREAM_INTS, buf[0]), "stream message %d corrupt", buf[0]);
    if (atomic_fetch_add(&stream_received, 1) == 0) entering("the stream from rank 2 (MPI_Probe + MPI_Recv)");
  }
  return NULL;
}

static void* kill_recv_never(void* arg) {
  (void)arg;
  int v;
  entering("MPI_Recv(2)");
  MPI_Recv(&v, 1, MPI_INT, 2, TAG_NEVER_FROM_2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  say("%s", "MPI_Recv from rank 2 returned (it must not)");
  return NULL;
}

static void* kill_barrier(void* arg) {
  (void)arg;
  entering("MPI_Barrier");
  MPI_Barrier(kill_barrier_comm);
  say("%s", "MPI_Barrier returned (it must not)");
  return NULL;
}

static void* kill_allreduce(void* arg) {
  (void)arg;
  int one = 1, sum = 0;
  entering("MPI_Allreduce");
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, kill_allreduce_comm);
  say("%s", "MPI_Allreduce returned (it must not)");
  return NULL;
}

/* Ranks 0, 1: send, probe, receive with the other one, for ever; thread i uses tag TAG_PAIR+i. */
static void* kill_pair(void* arg) {
  int i = *(int*)arg, peer = 1 - rank, tag = TAG_PAIR + i;
  int out[STREAM_INTS + 1], in[STREAM_INTS + 1];
  for (int round = 0;; ++round) {
    int n = 1 + round % STREAM_INTS;
    out[0] = round;
    fill(out + 1, n, round);
    MPI_Send(out, n + 1, MPI_INT, peer, tag, kill_pair_comm);
    MPI_Status st;
    int got = -1;
    MPI_Probe(peer, tag, kill_pair_comm, &st);
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK(got == n + 1, "pair round %d count %d", round, got);
    MPI_Recv(in, STREAM_INTS + 1, MPI_INT, peer, tag, kill_pair_comm, MPI_STATUS_IGNORE);
    CHECK(in[0] == round && check_buf(in + 1, n, round), "pair round %d corrupt", round);
    if (round == 0) entering("the exchange with the other rank");
    atomic_fetch_add(&pair_exchanged, 1);
  }
  return NULL;
}

/* Rank 2: the stream to ranks 0 and 1 (thread i sends to rank i). */
static void* kill_stream_sender(void* arg) {
  int dest = *(int*)arg;
  int buf[STREAM_INTS + 1];
  for (int k = 0;; ++k) {
    buf[0] = k;
    fill(buf + 1, STREAM_INTS, k);
    MPI_Send(buf, STREAM_INTS + 1, MPI_INT, dest, TAG_STREAM, MPI_COMM_WORLD);
    if (k == 0) entering("the stream (MPI_Send)");
    if (k % 16 == 15) sleep_ms(1);
  }
  return NULL;
}

static void* kill_rank2_recv(void* arg) {
  (void)arg;
  int v;
  entering("MPI_Recv(0)");
  MPI_Recv(&v, 1, MPI_INT, 0, TAG_NEVER_FROM_2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

static int run_kill(void) {
  if (size != 3) {
    printf("faults: kill needs exactly 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &kill_barrier_comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &kill_allreduce_comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &kill_pair_comm);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 2) {
    pthread_t t[3];
    int dests[2] = {0, 1};
    for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, kill_stream_sender, &dests[i]);
    pthread_create(&t[2], NULL, kill_rank2_recv, NULL);
    wait_ready(3);
    mark("raise(SIGKILL) mid-stream");
    raise(SIGKILL);
    return 1;
  }
  pthread_t t[6];
  int idx[2] = {0, 1};
  pthread_create(&t[0], NULL, kill_stream_receiver, NULL);
  pthread_create(&t[1], NULL, kill_recv_never, NULL);
  pthread_create(&t[2], NULL, kill_barrier, NULL);
  pthread_create(&t[3], NULL, kill_allreduce, NULL);
  pthread_create(&t[4], NULL, kill_pair, &idx[0]);
  pthread_create(&t[5], NULL, kill_pair, &idx[1]);
  tell_ready(2, 6);
  /* Outside MPI: report progress until the job is ended. */
  for (int s = 0;; ++s) {
    sleep_ms(500);
    printf("faults: rank %d: %ld stream messages, %ld exchanges\n", rank, atomic_load(&stream_received),
           atomic_load(&pair_exchanged));
    fflush(stdout);
  }
  return 1;
}

/* ---- finalize / exit ----------------------------------------------------------------------- */
enum { FIN_THREADS = 4, FIN_ROUNDS = 40, FIN_MAX_INTS = 2048, TAG_FIN = 3000 };
static MPI_Comm fin_comm;

static void* fin_thread(void* arg) {
  int t = *(int*)arg;
  int* out = malloc((FIN_MAX_INTS + 2) * sizeof(int));
  MPI_Request* sends = malloc(size * sizeof(MPI_Request));
  for (int round = 0; round < FIN_ROUNDS; ++round) {
    int n = 1 + (round * 97 + t * 13) % FIN_MAX_INTS;
    /* A sender can be one round ahead (its sends of this round done): the round's parity in
       the tag keeps its next message out of this round's wildcard receives. */
    int tag = TAG_FIN + 2 * t + round % 2;
    out[0] = rank;
    out[1] = round;
    fill(out + 2, n, rank * 1000 + round);
    int ns = 0;
    for (int d = 0; d < size; ++d)
      if (d != rank) MPI_Isend(out, n + 2, MPI_INT, d, tag, fin_comm, &sends[ns++]);
    for (int k = 0; k < size - 1; ++k) {
      MPI_Status st;
      if (t % 2 == 0) {
        MPI_Probe(MPI_ANY_SOURCE, tag, fin_comm, &st);
      } else {
        int flag = 0;
        for (MPI_Iprobe(MPI_ANY_SOURCE, tag, fin_comm, &flag, &st); !flag;
             MPI_Iprobe(MPI_ANY_SOURCE, tag, fin_comm, &flag, &st))
          sched_yield(); /* 2 cores: let the senders run */
      }
      int count = -1;
      MPI_Get_count(&st, MPI_INT, &count);
      int* in = malloc((count > 0 ? count : 1) * sizeof(int));
      MPI_Recv(in, count, MPI_INT, st.MPI_SOURCE, tag, fin_comm, MPI_STATUS_IGNORE);
      CHECK(count >= 2 && in[0] == st.MPI_SOURCE && count == 2 + 1 + (in[1] * 97 + t * 13) % FIN_MAX_INTS &&
                check_buf(in + 2, count - 2, in[0] * 1000 + in[1]),
            "thread %d: message from %d of %d ints corrupt", t, st.MPI_SOURCE, count);
      free(in);
    }
    MPI_Waitall(ns, sends, MPI_STATUSES_IGNORE);
  }
  free(sends);
  free(out);
  return NULL;
}

static int run_finalize(int finalize) {
  MPI_Comm_dup(MPI_COMM_WORLD, &fin_comm);
  if (rank == 0) sleep_ms(200); /* the others' first probes wait */
  int idx[FIN_THREADS];
  for (int i = 0; i < FIN_THREADS; ++i) idx[i] = i;
  run_threads(FIN_THREADS, fin_thread, idx, sizeof idx[0]);
  int mine = atomic_load(&test_failures), total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&fin_comm);
  printf("faults: rank %d: %d messages received, %s; %d threads in the process\n", rank,
         FIN_THREADS * FIN_ROUNDS * (size - 1), total ? "FAILED" : "ok", thread_count());
  fflush(stdout);
  if (!finalize) {
    /* Every rank's mark is out before any rank exits: Open MPI's mpiexec kills the others as
       soon as one exits without MPI_Finalize, which could take a rank before its mark. */
    mark("exit(0) without MPI_Finalize");
    MPI_Barrier(MPI_COMM_WORLD);
    exit(total ? 1 : 0);
  }
  mark("calls MPI_Finalize");
  MPI_Finalize();
  say("%s", "MPI_Finalize returned");
  return total ? 1 : 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  for (int i = 2; i < argc; ++i)
    if (!strncmp(argv[i], "faults_marks=", 13)) marks_path = argv[i] + 13;
  const char* a = getenv("FAULTS_ALARM");
  alarm(a ? (unsigned)atoi(a) : 120);
  report_signals();
  test_init(&argc, &argv, "faults");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    printf("faults: needs 2 or more ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (argc > 2 && atoi(argv[2]) > 0) fault_delay_ms = atoi(argv[2]);
  MPI_Comm_dup(MPI_COMM_WORLD, &ready_comm);
  if (!strcmp(mode, "abort")) return run_abort();
  if (!strcmp(mode, "kill")) return run_kill();
  if (!strcmp(mode, "finalize")) return run_finalize(1);
  if (!strcmp(mode, "exit")) return run_finalize(0);
  if (rank == 0) printf("usage: faults abort|kill|finalize|exit\n");
  MPI_Finalize();
  return 2;
}

/* threadcomm: threads as MPI ranks (MPIX_Threadcomm, include/tsmpi.h) against processes.
   usage: threadcomm MODE threads|procs T ITERATIONS ARG...
     threads  each process (np = 1, or more for pairs and collectives spanning processes) runs T
              threads, each an MPI rank of a threadcomm of np x T ranks made by
              MPIX_Threadcomm_init(MPI_COMM_WORLD, T); every thread calls MPIX_Threadcomm_start,
              measures on the threadcomm, and MPIX_Threadcomm_finish. Thread-rank r binds itself
              to the r-th core the process may use (bind_thread_rank; BENCH_THREAD_BIND=none:
              unbound). tsmpi's threadcomm: the
              program linked to it (bench_threadcomm) under tsmpirun; the MPI's own (MPICH 4.2):
              bench_threadcomm_native under the MPI's mpiexec, no tsmpi.
     procs    np = T processes of one thread each on MPI_COMM_WORLD, plain MPI (MPI_Init):
              the MPI's shared-memory transport. bench_threadcomm_native is the same program
              not linked to tsmpi, for the MPI's own mpiexec; bench_threadcomm under tsmpirun
              runs it with tsmpi preloaded. MPI_Init: natively the MPI runs at
              MPI_THREAD_SINGLE, its fastest path; under tsmpi at TSMPI_UNDERLYING_LEVEL.
              (threads: MPI_Init_thread with MPI_THREAD_MULTIPLE.)
     asp      tsmpirun -asp T -n T: one OS process holds T MPI processes (MPIX_THREAD_ATTACH), one
              thread attached to each; measures on MPI_COMM_WORLD.
   Modes (every measurement: 5 blocks after a warm-up block, the median block reported):
     pingpong T = 2, ARG = SIZE...: rank 0 sends SIZE bytes to rank 1, which sends them back;
              ITERATIONS round trips per block up to 1 KiB, fewer above (iterations_for).
              threadcomm mode=pingpong config=C ranks=2 size=S iterations=N latency_us=L bandwidth_MBs=B errors=E
              latency_us: half the round trip; bandwidth_MBs: SIZE / latency (bytes per µs).
     msgrate  an even number of ranks, ARG = WINDOW...: in each pair (2i, 2i+1; a pair lives in
              one process when T is even) rank 2i starts WINDOW MPI_Isend of 8 bytes, MPI_Waitall;
              rank 2i+1 posted WINDOW MPI_Irecv, MPI_Waitall, then a 0-byte acknowledgement;
              ITERATIONS messages per pair and block.
              threadcomm mode=msgrate config=C ranks=R per_process=T window=W size=8 messages=N rate=R errors=E
              rate: messages per second of all pairs together (over the slowest rank's time).
     coll     ARG = [BUDGET_MS] (default 100): MPI_Barrier, MPI_Bcast of 8 B and 64 KiB from rank
              0, MPI_Allreduce (MPI_SUM) of 1 double and of 8192 doubles (64 KiB); per block
              up to ITERATIONS calls, fewer when a warm-up says a block would take longer
              than BUDGET_MS (oversubscribed processes can take milliseconds per call).
              threadcomm mode=coll config=C ranks=R per_process=T op=O size=S iterations=N time_us=X errors=E
              time_us: per call, the slowest rank's block time over the calls.
   Data: every ping-pong block ends with an untimed exchange whose every byte is checked at
   both ends (a pattern that depends on the byte's position and the block); every msgrate
   message carries its sequence number, checked on arrival; each collective block checks the
   last call's result on every rank. errors counts wrong bytes/values over all ranks; the
   program exits with status 1 (MPI_Abort) when any arrived wrong. */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsmpi.h"

/* bench_threadcomm_native on an MPI with a threadcomm of its own (MPICH 4.2): the threads
   configuration runs on the MPI's MPIX_Threadcomm_*, without tsmpi. */
#if defined(THREADCOMM_NATIVE) && defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
#define THREADS_CONFIG 1
#elif defined(THREADCOMM_NATIVE)
#define THREADS_CONFIG 0
#else
#define THREADS_CONFIG 1
#endif

#ifndef THREADCOMM_NATIVE
/* Weak: the program links and its procs configuration runs even with a libtsmpi that does
   not export the threadcomm functions; the threads configuration then stops with a message. */
#pragma weak MPIX_Threadcomm_init
#pragma weak MPIX_Threadcomm_start
#pragma weak MPIX_Threadcomm_finish
#pragma weak MPIX_Threadcomm_free
#pragma weak MPIX_Thread_attach
#endif

#define BLOCKS 5
#define MAX_RANKS 256

enum mode { PINGPONG, MSGRATE, COLL };
static enum mode mode;
static int threads_config, asp_config, nranks, nargs;
static int per_process = 1, nprocs = 1;  /* ranks per OS process: T in the threads and asp configurations */
static long iterations;
static char** args;
static atomic_long errors_total;

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median_block(double* block) {
  qsort(block, BLOCKS, sizeof block[0], cmp);
  return block[BLOCKS / 2];
}

static const char* config_name(void) { return asp_config ? "asp" : threads_config ? "threads" : "procs"; }

/* A byte pattern that depends on the position (a shifted or truncated copy fails) and on the
   stamp (a stale buffer fails). */
static unsigned char pattern(long k, int stamp) { return (unsigned char)(stamp * 31 + k * 7 + (k >> 8)); }

static void fill(unsigned char* b, long n, int stamp) {
  for (long k = 0; k < n; ++k) b[k] = pattern(k, stamp);
}

static long check(const unsigned char* b, long n, int stamp) {
  long bad = 0;
  for (long k = 0; k < n; ++k) bad += b[k] != pattern(k, stamp);
  return bad;
}

/* Errors of one point summed over the ranks (on the measured communicator, untimed). */
static long sum_errors(MPI_Comm comm, long mine) {
  long all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, comm);
  atomic_fetch_add(&errors_total, mine);
  return all;
}

static long iterations_for(long base, long bytes) {
  long n = bytes <= 1024 ? base : base * 1024 / bytes;
  return n < 20 ? 20 : n;
}

/* ---------------------------------------------------------------- ping-pong */
static void pingpong(MPI_Comm comm, int rank) {
  long max = 0;
  for (int a = 0; a < nargs; ++a)
    if (atol(args[a]) > max) max = atol(args[a]);
  unsigned char* sbuf = malloc((size_t)max + 1);
  unsigned char* rbuf = malloc((size_t)max + 1);
  memset(sbuf, 0, (size_t)max + 1);
  memset(rbuf, 0, (size_t)max + 1);
  int peer = 1 - rank;
  for (int a = 0; a < nargs; ++a) {
    int size = atoi(args[a]);
    long n = iterations_for(iterations, size), bad = 0;
    double block[BLOCKS];
    for (int b = -1; b < BLOCKS; ++b) {
      MPI_Barrier(comm);
      double t0 = MPI_Wtime();
      for (long i = 0; i < n; ++i) {
        if (rank == 0) {
          MPI_Send(sbuf, size, MPI_BYTE, 1, 0, comm);
          MPI_Recv(rbuf, size, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(rbuf, size, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
          MPI_Send(rbuf, size, MPI_BYTE, 0, 0, comm);
        }
      }
      double t = MPI_Wtime() - t0;
      if (b >= 0) block[b] = t / n / 2 * 1e6;
      /* Untimed check: rank 0 sends stamp s, rank 1 checks it and answers stamp s + 1. */
      int stamp = 2 * (b + 2) + size;
      memset(rbuf, 0xee, (size_t)size);
      if (rank == 0) {
        fill(sbuf, size, stamp);
        MPI_Send(sbuf, size, MPI_BYTE, peer, 1, comm);
        MPI_Recv(rbuf, size, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
        bad += check(rbuf, size, stamp + 1);
      } else {
        MPI_Recv(rbuf, size, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
        bad += check(rbuf, size, stamp);
        fill(sbuf, size, stamp + 1);
        MPI_Send(sbuf, size, MPI_BYTE, peer, 1, comm);
      }
    }
    long all = sum_errors(comm, bad);
    double lat = median_block(block);
    if (rank == 0) {
      printf("threadcomm mode=pingpong config=%s ranks=2 size=%d iterations=%ld latency_us=%.4f bandwidth_MBs=%.1f errors=%ld\n",
             config_name(), size, n, lat, size / lat, all);
      fflush(stdout);
    }
  }
  free(sbuf);
  free(rbuf);
}

/* ---------------------------------------------------------------- message rate */
static void msgrate(MPI_Comm comm, int rank) {
  int size;
  MPI_Comm_size(comm, &size);
  /* Pairs of neighbours (2i sends to 2i+1): with T thread-ranks per process, every pair lives
     in one process. */
  const int sender = rank % 2 == 0, peer = rank ^ 1;
  for (int a = 0; a < nargs; ++a) {
    int window = atoi(args[a]);
    long windows = iterations / window < 1 ? 1 : iterations / window, bad = 0, seq = 0;
    char ack = 0;
    uint64_t* buf = malloc(sizeof(uint64_t) * (size_t)window);
    MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)window);
    double block[BLOCKS];
    for (int b = -1; b < BLOCKS; ++b) {
      MPI_Barrier(comm);
      double t0 = MPI_Wtime();
      for (long w = 0; w < windows; ++w) {
        if (sender) {
          for (int i = 0; i < window; ++i) {
            buf[i] = (uint64_t)seq++;
            MPI_Isend(&buf[i], 8, MPI_BYTE, peer, 2, comm, &req[i]);
          }
          MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
          MPI_Recv(&ack, 0, MPI_BYTE, peer, 3, comm, MPI_STATUS_IGNORE);
        } else {
          for (int i = 0; i < window; ++i) {
            buf[i] = UINT64_MAX;
            MPI_Irecv(&buf[i], 8, MPI_BYTE, peer, 2, comm, &req[i]);
          }
          MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
          for (int i = 0; i < window; ++i) bad += buf[i] != (uint64_t)seq++;  /* in posting order */
          MPI_Send(&ack, 0, MPI_BYTE, peer, 3, comm);
        }
      }
      double t = MPI_Wtime() - t0, slowest = 0;
      MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
      if (b >= 0) block[b] = (double)(size / 2) * windows * window / slowest;
    }
    long all = sum_errors(comm, bad);
    double rate = median_block(block);
    if (rank == 0) {
      printf("threadcomm mode=msgrate config=%s ranks=%d per_process=%d window=%d size=8 messages=%ld rate=%.1f errors=%ld\n",
             config_name(), size, per_process, window, windows * window, rate, all);
      fflush(stdout);
    }
    free(buf);
    free(req);
  }
}

/* ---------------------------------------------------------------- collectives */
enum op { BARRIER, BCAST, ALLREDUCE };
struct coll_case { enum op op; const char* name; long bytes; };
static const struct coll_case coll_cases[] = {
  {BARRIER, "barrier", 0},     {BCAST, "bcast", 8},           {BCAST, "bcast", 65536},
  {ALLREDUCE, "allreduce", 8}, {ALLREDUCE, "allreduce", 65536},
};

static void coll_call(const struct coll_case* c, MPI_Comm comm, void* in, void* out) {
  switch (c->op) {
    case BARRIER: MPI_Barrier(comm); break;
    case BCAST: MPI_Bcast(out, (int)c->bytes, MPI_BYTE, 0, comm); break;
    case ALLREDUCE: MPI_Allreduce(in, out, (int)(c->bytes / 8), MPI_DOUBLE, MPI_SUM, comm); break;
  }
}

/* Before a block: the root's bcast data and everyone's allreduce contribution for stamp s,
   the others' receive buffers poisoned. After it: the last call's result, on every rank. */
static void coll_prepare(const struct coll_case* c, int rank, int stamp, unsigned char* in, unsigned char* out) {
  if (c->op == BCAST) {
    if (rank == 0) fill(out, c->bytes, stamp);
    else memset(out, 0xee, (size_t)c->bytes);
  } else if (c->op == ALLREDUCE) {
    double* x = (double*)in;
    for (long k = 0; k < c->bytes / 8; ++k) x[k] = rank + k % 1000 + stamp;
    memset(out, 0xee, (size_t)c->bytes);
  }
}

static long coll_check(const struct coll_case* c, int size, int stamp, const unsigned char* out) {
  if (c->op == BCAST) return check(out, c->bytes, stamp);
  long bad = 0;
  if (c->op == ALLREDUCE) {
    const double* y = (const double*)out;
    for (long k = 0; k < c->bytes / 8; ++k)  /* sum over ranks of rank + k % 1000 + stamp: exact */
      bad += y[k] != (double)size * (k % 1000 + stamp) + (double)size * (size - 1) / 2;
  }
  return bad;
}

static void coll(MPI_Comm comm, int rank, int size) {
  double budget = (nargs > 0 ? atof(args[0]) : 100.0) * 1e-3;
  unsigned char* in = malloc(65536);
  unsigned char* out = malloc(65536);
  for (size_t ci = 0; ci < sizeof coll_cases / sizeof coll_cases[0]; ++ci) {
    const struct coll_case* c = &coll_cases[ci];
    /* Warm-up, and how many calls fit in the budget; every rank takes the slowest's view. */
    long warm = iterations < 10 ? iterations : 10, bad = 0;
    coll_prepare(c, rank, 1, in, out);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (long i = 0; i < warm; ++i) coll_call(c, comm, in, out);
    double per = (MPI_Wtime() - t0) / warm, slowest = 0;
    bad += coll_check(c, size, 1, out);
    MPI_Allreduce(&per, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    long n = slowest > 0 ? (long)(budget / slowest) : iterations;
    if (n > iterations) n = iterations;
    if (n < 5) n = 5;
    double block[BLOCKS];
    for (int b = 0; b < BLOCKS; ++b) {
      int stamp = b + 2;
      coll_prepare(c, rank, stamp, in, out);
      MPI_Barrier(comm);
      t0 = MPI_Wtime();
      for (long i = 0; i < n; ++i) coll_call(c, comm, in, out);
      double t = (MPI_Wtime() - t0) / n, tmax = 0;
      bad += coll_check(c, size, stamp, out);
      MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
      block[b] = tmax * 1e6;
    }
    long all = sum_errors(comm, bad);
    double us = median_block(block);
    if (rank == 0) {
      printf("threadcomm mode=coll config=%s ranks=%d per_process=%d op=%s size=%ld iterations=%ld time_us=%.4f errors=%ld\n",
             config_name(), size, per_process, c->name, c->bytes, n, us, all);
      fflush(stdout);
    }
  }
  free(in);
  free(out);
}

static void measure(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  switch (mode) {
    case PINGPONG: pingpong(comm, rank); break;
    case MSGRATE: msgrate(comm, rank); break;
    case COLL: coll(comm, rank, size); break;
  }
}

/* ---------------------------------------------------------------- threads as ranks */
#if THREADS_CONFIG
static MPI_Comm threadcomm;

/* Thread-rank r runs on the r-th core the process may use (modulo their number), as the MPI's
   mpiexec binds each process of the procs configuration to a core and as OMP_PROC_BIND=close
   places an OpenMP team. Unbound, Linux starts both threads of T = 2 on one core and, while
   each waits by sleeping or yielding, may leave them there for tens of milliseconds (every
   round trip then a context switch). BENCH_THREAD_BIND=none leaves them unbound. */
static void bind_thread_rank(int rank) {
  const char* how = getenv("BENCH_THREAD_BIND");
  if (how && !strcmp(how, "none")) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int want = rank % CPU_COUNT(&allowed), seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ != want) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    return;
  }
}

static void* thread_rank(void* arg) {
  (void)arg;
  int rc = MPIX_Threadcomm_start(threadcomm);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "threadcomm: MPIX_Threadcomm_start failed (%d)\n", rc);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  int rank = -1, size = -1;
  MPI_Comm_rank(threadcomm, &rank);
  MPI_Comm_size(threadcomm, &size);
  int expected = nranks * nprocs;
  if (size != expected || rank < 0 || rank >= expected) {
    fprintf(stderr, "threadcomm: thread sees rank %d of %d, expected one of %d\n", rank, size, expected);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  bind_thread_rank(rank);
  measure(threadcomm);
  MPIX_Threadcomm_finish(threadcomm);
  return NULL;
}

static void run_threads(void) {
#ifndef THREADCOMM_NATIVE
  if (!MPIX_Threadcomm_init || !MPIX_Threadcomm_start || !MPIX_Threadcomm_finish || !MPIX_Threadcomm_free) {
    fprintf(stderr, "threadcomm: this libtsmpi has no MPIX_Threadcomm_* (threads as ranks not built)\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
#endif
  int rc = MPIX_Threadcomm_init(MPI_COMM_WORLD, nranks, &threadcomm);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "threadcomm: MPIX_Threadcomm_init failed (%d)\n", rc);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  pthread_t tid[MAX_RANKS];
  for (int t = 1; t < nranks; ++t) pthread_create(&tid[t], NULL, thread_rank, NULL);
  thread_rank(NULL);  /* the main thread is one of the ranks */
  for (int t = 1; t < nranks; ++t) pthread_join(tid[t], NULL);
  MPIX_Threadcomm_free(&threadcomm);
}
#endif

/* ---------------------------------------------------------------- MPI processes of one address space */
#ifndef THREADCOMM_NATIVE
static void* asp_process(void* arg) {
  if (MPIX_Thread_attach((int)(long)arg) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
  measure(MPI_COMM_WORLD);
  return NULL;
}

/* tsmpirun -asp T -n T: T MPI processes in one OS process, one thread each. */
static void run_asp(void) {
  if (!MPIX_Thread_attach) {
    fprintf(stderr, "threadcomm: this libtsmpi has no MPIX_Thread_attach\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  pthread_t tid[MAX_RANKS];
  for (int t = 0; t < nranks; ++t) pthread_create(&tid[t], NULL, asp_process, (void*)(long)t);
  for (int t = 0; t < nranks; ++t) pthread_join(tid[t], NULL);
}
#endif

int main(int argc, char** argv) {
  int provided, rank = 0, np = 0;
  threads_config = argc > 2 && !strcmp(argv[2], "threads");
#ifndef THREADCOMM_NATIVE
  asp_config = argc > 2 && !strcmp(argv[2], "asp");
#endif
  if (asp_config) {
    MPI_Init_thread(&argc, &argv, MPIX_THREAD_ATTACH, &provided);
    if (provided != MPIX_THREAD_ATTACH) {
      fprintf(stderr, "threadcomm: asp needs tsmpirun -asp T -n T\n");
      return 2;
    }
    np = atoi(argc > 3 ? argv[3] : "0");  /* MPI processes; rank 0 is in this OS process */
  } else {
    if (threads_config)
      MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
      MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
  }
  int ok = argc >= 5 && (threads_config || asp_config || !strcmp(argv[2], "procs"));
  if (ok) {
    if (!strcmp(argv[1], "pingpong")) mode = PINGPONG;
    else if (!strcmp(argv[1], "msgrate")) mode = MSGRATE;
    else if (!strcmp(argv[1], "coll")) mode = COLL;
    else ok = 0;
    nranks = atoi(argv[3]);
    iterations = atol(argv[4]);
    args = argv + 5;
    nargs = argc - 5;
    ok = ok && nranks >= 1 && nranks <= MAX_RANKS && iterations >= 1 &&
         (mode == PINGPONG ? nranks == 2 && np * (threads_config ? nranks : 1) == 2 : 1) &&
         (mode != MSGRATE || (nranks * (threads_config ? np : 1)) % 2 == 0) && (mode == COLL || nargs >= 1) &&
         (threads_config || np == nranks) && (threads_config ? np * nranks : nranks) >= 2;
    nprocs = threads_config ? np : 1;
    per_process = threads_config || asp_config ? nranks : 1;
#if !THREADS_CONFIG
    ok = ok && !threads_config;
#endif
  }
  if (!ok) {
    if (rank == 0)
      fprintf(stderr,
              "usage: threadcomm pingpong|msgrate|coll threads|procs T ITERATIONS ARG...\n"
              "  pingpong: 2 ranks; msgrate: an even number; threads: T per process (tsmpi);\n"
              "  procs: np = T\n"
              "  pingpong ARG: SIZE...; msgrate ARG: WINDOW...; coll ARG: [BUDGET_MS]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
#ifndef THREADCOMM_NATIVE
  if (asp_config) {  /* the initializing thread is no MPI process: it checks and finalizes them all */
    run_asp();
    if (atomic_load(&errors_total)) {
      fprintf(stderr, "threadcomm: %ld bytes or values arrived wrong\n", (long)atomic_load(&errors_total));
      return 1;
    }
    MPI_Finalize();
    return 0;
  }
#endif
#if THREADS_CONFIG
  if (threads_config)
    run_threads();
  else
#endif
    measure(MPI_COMM_WORLD);
  long mine = atomic_load(&errors_total), all = 0;
  MPI_Reduce(&mine, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0 && all) {
    fprintf(stderr, "threadcomm: %ld bytes or values arrived wrong\n", all);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

/* Helpers for the threads-as-ranks test programs (tests/ranks/): hybrid MPI + OpenMP/pthreads
   codes in which every thread of a threaded region is an MPI rank of an MPIX_Threadcomm.

   - rk_init: MPI_Init_thread(MPI_THREAD_MULTIPLE), MPI_ERRORS_RETURN on MPI_COMM_WORLD (the
     threadcomms inherit it, so a failing call is reported by the program instead of ending
     the job), a watchdog (alarm) that names the stage the process was in when it hangs;
   - rk_threads_for: this process's thread count from a spec "A,B,C" (process p gets the
     (p mod 3)-th entry), so processes may have different counts;
   - CHECK / MPI_OK: thread-safe failure counting with the process rank, the thread-rank (when
     the calling thread is inside a region) and the stage;
   - rk_finish: one verdict line per process "<name>: rank R: ok|FAILED" and the exit status.

   The MPIX_Threadcomm_* functions are declared weak: the programs link against libtsmpi and
   still load (and fail with a clear line) when the library does not provide them yet. */
#ifndef TSMPI_RANKS_UTIL_H
#define TSMPI_RANKS_UTIL_H

#include "../common/message_pattern.h"
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsmpi.h"

/* A line of output in one write(2): the lines of two processes reach the launcher whole
   (MPICH's hydra interleaved the pieces stdio wrote). */
static inline void rk_say(const char* fmt, ...) {
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n >= (int)sizeof line) n = (int)sizeof line - 1;
  fflush(stdout);
  ssize_t w = write(1, line, (size_t)n);
  (void)w;
}

#pragma weak MPIX_Threadcomm_init
#pragma weak MPIX_Threadcomm_start
#pragma weak MPIX_Threadcomm_finish
#pragma weak MPIX_Threadcomm_free

static atomic_int rk_failures;
static const char* rk_name = "ranks";
static int rk_wrank, rk_wsize;
static const char* volatile rk_stage = "MPI_Init";
/* The calling thread's rank in the threadcomm of the current region (-1 outside). */
static __thread int rk_my = -1;

#define RK_MAX_REPORTS 30
#define CHECK(cond, ...)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      if (atomic_fetch_add(&rk_failures, 1) < RK_MAX_REPORTS) {                               \
        char m_[512];                                                                         \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                 \
        rk_say("%s: rank %d: thread-rank %d: [%s] check failed: %s: %s\n", rk_name, rk_wrank, \
               rk_my, rk_stage, #cond, m_);                                                   \
        fflush(stdout);                                                                       \
      }                                                                                       \
    }                                                                                         \
  } while (0)

// CHECK for a value: got == want, else the failure names `what` (a string in the caller's
// scope: which part of the program) and both values.
#define EXPECT_EQ(got, want, ...)                                                          \
  do {                                                                                     \
    long long g_ = (long long)(got), w_ = (long long)(want);                              \
    if (g_ != w_) {                                                                        \
      char c_[200];                                                                        \
      snprintf(c_, sizeof c_, __VA_ARGS__);                                                \
      CHECK(g_ == w_, "%s: %s: got %lld, expected %lld", what, c_, g_, w_);               \
    }                                                                                      \
  } while (0)

static inline const char* rk_errstr(int rc, char* buf) {
  int len = 0, cls = -1;
  MPI_Error_class(rc, &cls);
  buf[0] = 0;
  MPI_Error_string(rc, buf, &len);
  snprintf(buf + strlen(buf), 64, " (code %d, class %d)", rc, cls);
  return buf;
}
/* An MPI call that must succeed. Evaluates to its return code. */
#define MPI_OK(call)                                                                 \
  ({                                                                                 \
    int rc_ = (call);                                                                \
    if (rc_ != MPI_SUCCESS) {                                                        \
      char e_[MPI_MAX_ERROR_STRING + 64];                                            \
      CHECK(rc_ == MPI_SUCCESS, "line %d: %s returned %s", __LINE__, #call, rk_errstr(rc_, e_)); \
    }                                                                                \
    rc_;                                                                             \
  })

static inline int rk_error_class(int rc) {
  int cls = -1;
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  return cls;
}

static void rk_alarm(int sig) {
  (void)sig;
  char line[256];
  int n = snprintf(line, sizeof line, "%s: rank %d: watchdog: still in stage [%s], giving up\n",
                   rk_name, rk_wrank, rk_stage);
  if (write(1, line, n) < 0) _exit(1);
  _exit(1);
}

/* Sets the stage (printed by failed checks and the watchdog). Call from one thread. */
static inline void rk_set_stage(const char* stage) {
  rk_stage = stage;
  if (getenv("RK_TRACE")) {
    rk_say("%s: rank %d: stage %s\n", rk_name, rk_wrank, stage);
    fflush(stdout);
  }
}

static inline void rk_init(int* argc, char*** argv, const char* name) {
  rk_name = name;
  int provided;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rk_wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &rk_wsize);
  setvbuf(stdout, NULL, _IOLBF, 1 << 16);
  if (provided != MPI_THREAD_MULTIPLE) {
    rk_say("%s: rank %d: MPI_THREAD_MULTIPLE not provided (%d)\n", name, rk_wrank, provided);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (!&MPIX_Threadcomm_init || !&MPIX_Threadcomm_start || !&MPIX_Threadcomm_finish ||
      !&MPIX_Threadcomm_free) {
    rk_say("%s: rank %d: MPIX_Threadcomm_* not provided (run under tsmpirun with a libtsmpi "
           "that has threads as ranks): FAILED\n", name, rk_wrank);
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* w = getenv("RK_WATCHDOG");
  int seconds = w ? atoi(w) : 150;
  if (seconds > 0) {
    signal(SIGALRM, rk_alarm);
    alarm(seconds);
  }
}

/* The thread count of process p in a spec "A[,B[,C...]]": entry p mod (number of entries). */
static inline int rk_threads_of(const char* spec, int p) {
  int vals[64], n = 0;
  const char* s = spec;
  while (*s && n < 64) {
    vals[n++] = atoi(s);
    const char* c = strchr(s, ',');
    if (!c) break;
    s = c + 1;
  }
  if (n == 0) return 1;
  return vals[p % n];
}

/* Layout of a threadcomm over comm when this process brings `mine` threads: every process's
   count gathered; *offset = sum over lower ranks of comm, *total = sum. */
static inline void rk_layout(MPI_Comm comm, int mine, int* offset, int* total) {
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  int* all = malloc(size * sizeof *all);
  MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, comm);
  *offset = 0;
  *total = 0;
  for (int p = 0; p < size; ++p) {
    if (p < rank) *offset += all[p];
    *total += all[p];
  }
  free(all);
}

/* Which process of comm (and whose threads) hold thread-rank r: process index. */
static inline int rk_process_of(const int* counts, int nprocs, int r) {
  for (int p = 0; p < nprocs; ++p) {
    if (r < counts[p]) return p;
    r -= counts[p];
  }
  return -1;
}

/* The verdict: failures summed over the processes; "<name>: rank R: ok" or "FAILED". */
static inline int rk_finish(void) {
  int mine = atomic_load(&rk_failures), total = 0;
  rk_set_stage("finish");
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  rk_say("%s: rank %d: %s\n", rk_name, rk_wrank, total ? "FAILED" : "ok");
  fflush(stdout);
  alarm(0);
  MPI_Finalize();
  return total ? 1 : 0;
}

#endif

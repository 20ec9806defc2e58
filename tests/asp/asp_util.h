/* Helpers for the address-space test programs (tests/asp/): several MPI processes in one OS
   process (the MPI Forum draft of ticket 310, `tsmpirun -asp K -np N`), each thread of an MPI
   process attached with MPIX_Thread_attach(index).

   - asp_init: MPI_Init_thread at MPIX_THREAD_ATTACH or MPIX_THREAD_REATTACH (provided must be
     the level asked), K from the key "asp" of MPI_INFO_ENV, a watchdog (alarm) that names the
     stage the address space was in when it hangs;
   - asp_attach: MPIX_Thread_attach(index) for the calling thread, then its world rank and
     MPI_ERRORS_RETURN on its MPI process's MPI_COMM_WORLD (so failing calls are reported by the
     program instead of ending the job);
   - CHECK / MPI_OK: thread-safe failure counting with the world rank of the calling thread
     (or "unattached") and the stage;
   - asp_verdict: called by one attached thread of each MPI process once every check of the
     address space is done: failures summed over MPI_COMM_WORLD, one line per MPI process
     "<name>: rank R: ok|FAILED".

   Globals are per address space (that is, shared by its K MPI processes); per-thread state is
   thread-local. MPIX_Thread_attach is declared weak: the programs link against libtsmpi and
   still load (and fail with a clear line) when the library does not provide it yet. */
#ifndef TSMPI_ASP_UTIL_H
#define TSMPI_ASP_UTIL_H

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

#pragma weak MPIX_Thread_attach

enum { ASP_MAXK = 64 };

static const char* asp_name = "asp";
static int asp_level;                 /* the level asked and provided */
static int asp_K = -1;                /* MPI processes per address space */
static int asp_N = -1;                /* MPI processes in MPI_COMM_WORLD (set at first attach) */
static const char* volatile asp_stage = "MPI_Init_thread";
/* Failures by the index of the thread that saw them; [ASP_MAXK]: unattached threads. */
static atomic_int asp_failures[ASP_MAXK + 1];
static __thread int asp_idx = -1;   /* index the calling thread is attached to, -1 if none */
static __thread int asp_rank = -1;  /* its rank in MPI_COMM_WORLD */

/* A line of output in one write(2), so lines of several threads and processes stay whole. */
static inline void asp_say(const char* fmt, ...) {
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n >= (int)sizeof line) n = (int)sizeof line - 1;
  ssize_t w = write(1, line, (size_t)n);
  (void)w;
}

#define ASP_MAX_REPORTS 30
#define CHECK(cond, ...)                                                                        \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      int slot_ = asp_idx >= 0 && asp_idx < ASP_MAXK ? asp_idx : ASP_MAXK;                      \
      int all_ = 0;                                                                             \
      for (int i_ = 0; i_ <= ASP_MAXK; ++i_) all_ += atomic_load(&asp_failures[i_]);            \
      atomic_fetch_add(&asp_failures[slot_], 1);                                                \
      if (all_ < ASP_MAX_REPORTS) {                                                             \
        char m_[512];                                                                           \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                   \
        if (asp_rank >= 0)                                                                      \
          asp_say("%s: rank %d: [%s] check failed: %s: %s\n", asp_name, asp_rank, asp_stage,    \
                  #cond, m_);                                                                   \
        else                                                                                    \
          asp_say("%s: pid %d unattached thread: [%s] check failed: %s: %s\n", asp_name,        \
                  (int)getpid(), asp_stage, #cond, m_);                                         \
      }                                                                                         \
    }                                                                                           \
  } while (0)

static inline const char* asp_errstr(int rc, char* buf) {
  int len = 0, cls = -1;
  buf[0] = 0;
  /* Error queries are MPI calls: attached threads only, and never on a negative code (Open MPI
     4.1 returns its internal code -30 from a second MPI_Buffer_attach; MPI_Error_class of it
     raises MPI_ERR_ARG on MPI_COMM_WORLD's fatal handler). */
  if (asp_idx >= 0 && rc > 0) {
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, buf, &len);
  }
  snprintf(buf + strlen(buf), 64, " (code %d, class %d)", rc, cls);
  return buf;
}
/* An MPI call that must succeed. Evaluates to its return code. */
#define MPI_OK(call)                                                                        \
  ({                                                                                        \
    int rc_ = (call);                                                                       \
    if (rc_ != MPI_SUCCESS) {                                                               \
      char e_[MPI_MAX_ERROR_STRING + 64];                                                   \
      CHECK(rc_ == MPI_SUCCESS, "line %d: %s returned %s", __LINE__, #call, asp_errstr(rc_, e_)); \
    }                                                                                       \
    rc_;                                                                                    \
  })

static void asp_alarm(int sig) {
  (void)sig;
  char line[256];
  int n = snprintf(line, sizeof line, "%s: pid %d: watchdog: still in stage [%s], giving up\n",
                   asp_name, (int)getpid(), asp_stage);
  if (write(1, line, n) < 0) _exit(1);
  _exit(1);
}

static inline void asp_set_stage(const char* stage) {
  asp_stage = stage;
  if (getenv("ASP_TRACE")) asp_say("%s: pid %d: stage %s\n", asp_name, (int)getpid(), stage);
}

/* The value of "asp" in MPI_INFO_ENV, -1 when absent. */
static inline int asp_info_K(void) {
  char val[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  if (MPI_Info_get(MPI_INFO_ENV, "asp", MPI_MAX_INFO_VAL, val, &flag) != MPI_SUCCESS || !flag)
    return -1;
  return atoi(val);
}

/* MPI_Init_thread at `level` by the calling (main) thread, which stays unattached. */
static inline void asp_init(int* argc, char*** argv, const char* name, int level) {
  asp_name = name;
  asp_level = level;
  const char* w = getenv("ASP_WATCHDOG");
  int seconds = w ? atoi(w) : 150;
  if (seconds > 0) {
    signal(SIGALRM, asp_alarm);
    alarm(seconds);
  }
  if (!&MPIX_Thread_attach) {
    asp_say("%s: pid %d: MPIX_Thread_attach not provided (run under tsmpirun -asp K with a "
            "libtsmpi that has address spaces): FAILED\n", name, (int)getpid());
    exit(4);
  }
  int provided = -1;
  int rc = MPI_Init_thread(argc, argv, level, &provided);
  if (rc != MPI_SUCCESS || provided != level) {
    asp_say("%s: pid %d: MPI_Init_thread(%d) returned %d, provided %d: FAILED\n", name,
            (int)getpid(), level, rc, provided);
    exit(3);
  }
  /* As in the draft's examples, the initializing thread reads "asp" before any attach. */
  asp_K = asp_info_K();
  if (asp_K < 1 || asp_K > ASP_MAXK) {
    asp_say("%s: pid %d: MPI_INFO_ENV \"asp\" is %d (run under tsmpirun -asp K): FAILED\n", name,
            (int)getpid(), asp_K);
    exit(3);
  }
}

/* Attaches the calling thread to MPI process `index` of this address space (the first attach,
   or a reattach). Returns MPIX_Thread_attach's code; on success the thread's rank is known and
   its process's MPI_COMM_WORLD returns errors. */
static inline int asp_attach(int index) {
  int rc = MPIX_Thread_attach(index);
  CHECK(rc == MPI_SUCCESS, "MPIX_Thread_attach(%d) returned %d", index, rc);
  if (rc != MPI_SUCCESS) return rc;
  asp_idx = index;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &asp_rank));
  int n = -1;
  MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &n));
  asp_N = n;
  return rc;
}

/* The verdict of one MPI process, from one of its attached threads, after every thread of the
   address space has finished its checks. Collective over MPI_COMM_WORLD (each MPI process
   calls it once). Returns 1 when any MPI process failed. */
static inline int asp_verdict(void) {
  int mine = atomic_load(&asp_failures[asp_idx]);
  if (asp_idx == 0) mine += atomic_load(&asp_failures[ASP_MAXK]); /* unattached threads' */
  int total = -1;
  int rc = MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) total = mine + 1;
  asp_say("%s: rank %d: %s\n", asp_name, asp_rank, total ? "FAILED" : "ok");
  return total ? 1 : 0;
}

#endif

/* Shared by the coverage programs (tests/coverage/NAME.c). A program records what it observed with
   SAY(...) on any rank; cov_finish() gathers every rank's lines to rank 0, which prints them in
   rank order, one "NAME: rank R: ..." line each, then finalizes. Printing from rank 0 only keeps
   the output identical from run to run (mpiexec interleaves the ranks' streams, even inside
   lines), so run_mode.sh can compare it with the native run's byte for byte.

   Only results that do not depend on timing or the machine may be recorded: values received,
   counts, flags, error classes. A program that must know something went wrong records it (the
   native run then shows it too). CHECK(cond) records "check failed" lines, and cov_finish()
   returns 1 when any rank recorded one. */
#ifndef TSMPI_COVERAGE_H
#define TSMPI_COVERAGE_H
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPI-4's functions other than the large-count ones: MPICH 4 (MPI_VERSION 4), and Open MPI 5.0,
   which has them although its MPI_VERSION says 3.1. */
#if MPI_VERSION >= 4 || (defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5)
#define COV_MPI4 1
#else
#define COV_MPI4 0
#endif

static const char* cov_name = "coverage";
static char* cov_text = NULL;
static size_t cov_len = 0, cov_cap = 0;
static int cov_failures = 0;

static void cov_say(const char* fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  if (cov_len + (size_t)n + 1 > cov_cap) {
    cov_cap = (cov_len + (size_t)n + 1) * 2;
    cov_text = realloc(cov_text, cov_cap);
  }
  memcpy(cov_text + cov_len, line, (size_t)n);
  cov_len += (size_t)n;
  cov_text[cov_len] = '\0';
}
#define SAY(...) cov_say(__VA_ARGS__)
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      cov_say("check failed at line %d: %s", __LINE__, #cond);        \
      ++cov_failures;                                                 \
    }                                                                 \
  } while (0)

/* MPI_Init_thread at MPI_THREAD_MULTIPLE (recorded), MPI_ERRORS_RETURN on MPI_COMM_WORLD so a
   failing call is recorded instead of aborting. */
static int cov_init(int* argc, char*** argv, const char* name) {
  cov_name = name;
  int provided = -1, rank;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) SAY("provided %d", provided);
  return rank;
}

/* Gathers and prints every rank's lines at rank 0, finalizes; returns the exit status. */
static int cov_finish(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int len = (int)cov_len, failures = cov_failures, total = 0;
  int* lens = rank == 0 ? malloc(size * sizeof *lens) : NULL;
  int* displs = rank == 0 ? malloc(size * sizeof *displs) : NULL;
  MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char* all = NULL;
  if (rank == 0) {
    int sum = 0;
    for (int r = 0; r < size; ++r) displs[r] = sum, sum += lens[r];
    all = malloc((size_t)sum + 1);
  }
  MPI_Gatherv(cov_text ? cov_text : "", len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    /* COV_OUTPUT: a file instead of standard output (run_mode.sh). Open MPI 5.0's mpiexec moved
       the end of a 4 KiB block of a rank's standard output to its standard error when the rank
       wrote to both at once (tsmpi's statistics at MPI_Finalize). */
    const char* path = getenv("COV_OUTPUT");
    MPI_Comm parent = MPI_COMM_NULL;  /* spawned processes keep standard output */
    MPI_Comm_get_parent(&parent);
    FILE* out = path && *path && parent == MPI_COMM_NULL ? fopen(path, "w") : NULL;
    if (!out) out = stdout;
    for (int r = 0; r < size; ++r) {
      const char* p = all + displs[r];
      const char* end = p + lens[r];
      while (p < end) {
        const char* nl = memchr(p, '\n', (size_t)(end - p));
        int n = (int)((nl ? nl : end) - p);
        fprintf(out, "%s: rank %d: %.*s\n", cov_name, r, n, p);
        p += n + 1;
      }
    }
    fprintf(out, "%s: %s\n", cov_name, total ? "FAILED" : "done");
    if (out != stdout) fclose(out);
    fflush(stdout);
    free(all);
    free(lens);
    free(displs);
  }
  free(cov_text);
  MPI_Bcast(&total, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return total ? 1 : 0;
}
#endif

/* The bad_args*.c programs: one line per erroneous call with the class it returned and the
   error handler's calls since the last line (class and communicator of each). */
#pragma once
#include "error_classes.h"

/* The counting handler: each call's class and the communicator it was called on. */
static MPI_Comm tested = MPI_COMM_NULL; /* the duplicate the cases run on */
static int calls;
static char seen[512];
static const char* comm_name(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return "world";
  if (c == MPI_COMM_SELF) return "self";
  if (c != MPI_COMM_NULL && c == tested) return "dup";
  return "other";
}
static void handler(MPI_Comm* comm, int* code, ...) {
  ++calls;
  size_t n = strlen(seen);
  snprintf(seen + n, sizeof seen - n, " %s@%s", class_name(err_class(*code)), comm_name(*comm));
}
/* One line per case: the class returned and the handler's calls since the last line. */
static void report(const char* what, int rc) {
  if (getenv("BAD_ARGS_TRACE"))
    fprintf(stderr, "%s trace: %s: %s\n", cov_name, what, class_name(err_class(rc)));
  SAY("  %s: %s, handler %d%s", what, class_name(err_class(rc)), calls, seen);
  calls = 0;
  seen[0] = 0;
}
/* For reproducing one case by hand (the tests never set them): BAD_ARGS_ONLY="case;case..." runs
   only the cases named (as printed, e.g. "recv count -1"), BAD_ARGS_SKIP="case;..." all but
   those; BAD_ARGS_TRACE=1 names each case on standard error before and after it runs. With
   Open MPI, pass them to the ranks: tsmpirun -x BAD_ARGS_ONLY ... */
static int listed(const char* list, const char* what) {
  size_t n = strlen(what);
  for (const char* p = list; p && *p;) {
    const char* end = strchr(p, ';');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, what, n) == 0) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}
static int wanted(const char* what) {
  const char* only = getenv("BAD_ARGS_ONLY");
  if (only) return listed(only, what);
  return !listed(getenv("BAD_ARGS_SKIP"), what);
}
#define CASE(what, call)                                                                 \
  do {                                                                                   \
    if (wanted(what)) {                                                                  \
      if (getenv("BAD_ARGS_TRACE")) fprintf(stderr, "%s trace: %s ...\n", cov_name, what); \
      report(what, (call));                                                              \
    }                                                                                    \
  } while (0)

/* A pass of the cases: 0 with MPI_ERRORS_RETURN everywhere, 1 with the counting handler on the
   tested duplicate, MPI_COMM_WORLD and MPI_COMM_SELF. */
static void begin_pass(int pass, MPI_Errhandler counting) {
  MPI_Errhandler h = pass ? counting : MPI_ERRORS_RETURN;
  MPI_Comm_set_errhandler(tested, h);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, h);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, h);
  SAY("pass %d: %s", pass + 1, pass ? "counting handler" : "MPI_ERRORS_RETURN");
}
/* After the cases: MPI_COMM_WORLD and MPI_COMM_SELF return errors again (the checks after a
   pass must not call the counting handler). */
static void end_pass(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

/* Shared by the collective coverage programs (coll_all.c, coll_rooted.c, coll_reduce.c,
   coll_neighbor.c): the forms each collective is called in (blocking, nonblocking, persistent,
   and MPICH's large-count _c forms of the three), completing a nonblocking or persistent call,
   large-count copies of count and displacement arrays, and recording a call's result against
   its expected value. */
#ifndef TSMPI_COVERAGE_COLL_FORMS_H
#define TSMPI_COVERAGE_COLL_FORMS_H
#include "coverage.h"
#ifdef OPEN_MPI
#include <mpi-ext.h> /* MPIX_*_init: Open MPI's persistent collectives (pcollreq extension) */
#endif

#if defined(MPICH) && MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#define HAVE_LARGE 1
#define PERSISTENT(name) MPI_##name##_init
#elif defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5 /* MPI-4's names (the MPIX_ ones are kept too) */
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPI_##name##_init
#elif defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPIX_##name##_init
#endif

enum { F_BLOCKING, F_NONBLOCKING, F_PERSISTENT, F_LARGE, F_LARGE_NONBLOCKING, F_LARGE_PERSISTENT, F_COUNT };
__attribute__((unused)) static const char* form_name[F_COUNT] = {"blocking", "nonblocking", "persistent", "large", "large-nonblocking", "large-persistent"};
static inline int form_available(int f) {
#ifndef HAVE_PERSISTENT
  if (f == F_PERSISTENT) return 0;
#endif
#ifndef HAVE_LARGE
  if (f >= F_LARGE) return 0;
#endif
  return 1;
}

__attribute__((unused)) static MPI_Info pinfo = MPI_INFO_NULL; /* given to every persistent init */

/* Completes a nonblocking (persistent = 0) or persistent (1) collective started by rc's call. */
static inline int done(int rc, MPI_Request* req, int persistent) {
  if (rc != MPI_SUCCESS) return rc;
  if (persistent && (rc = MPI_Start(req)) != MPI_SUCCESS) return rc;
  rc = MPI_Wait(req, MPI_STATUS_IGNORE);
  if (persistent) {
    int rc2 = MPI_Request_free(req);
    if (rc == MPI_SUCCESS) rc = rc2;
  }
  return rc;
}

#ifdef HAVE_LARGE
/* Large-count copies of int count and displacement arrays; NULL stays NULL. */
static inline MPI_Count* counts_c(const int* a, int n, MPI_Count* store) {
  if (!a) return NULL;
  for (int i = 0; i < n; ++i) store[i] = a[i];
  return store;
}
static inline MPI_Aint* displs_c(const int* a, int n, MPI_Aint* store) {
  if (!a) return NULL;
  for (int i = 0; i < n; ++i) store[i] = a[i];
  return store;
}
#endif

__attribute__((unused)) static char text[8][1024];
__attribute__((unused)) static int text_next;
static inline const char* ints(const int* a, int n) {
  char* s = text[text_next++ % 8];
  int len = 0;
  s[0] = 0;
  for (int i = 0; i < n && len < 1000; ++i) len += snprintf(s + len, sizeof text[0] - len, i ? " %d" : "%d", a[i]);
  return s;
}
static inline const char* label(int f, const char* what) {
  char* s = text[text_next++ % 8];
  snprintf(s, sizeof text[0], "%s %s", form_name[f], what);
  return s;
}
/* Records the result of one call and checks it. */
static inline void verify(const char* what, int rc, const int* got, const int* expected, int n) {
  SAY("%s: rc %d: %s", what, rc, ints(got, n));
  if (rc != MPI_SUCCESS || memcmp(got, expected, n * sizeof(int)) != 0) {
    SAY("check failed: %s: expected %s", what, ints(expected, n));
    ++cov_failures;
  }
}
static inline void fill(int* a, int n, int v) {
  for (int i = 0; i < n; ++i) a[i] = v;
}
#endif

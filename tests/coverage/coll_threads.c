/* Coverage: collectives from two threads of every rank at once, each thread on a communicator of
   its own (a duplicate of MPI_COMM_WORLD, a split of it in reverse rank order, and a periodic
   ring topology on each), as a correct MPI_THREAD_MULTIPLE program may: blocking, nonblocking,
   persistent and neighborhood collectives interleave freely between the threads, which tsmpi's
   serialize mode must carry out without deadlock (admission of persistent inits included) and
   checking mode must not report. Every result is compared with its expected value. */
// ranks: 4
#include <pthread.h>

#include "coverage.h"
#ifdef OPEN_MPI
#include <mpi-ext.h> /* MPIX_*_init: Open MPI's persistent collectives (pcollreq extension) */
#endif

#if defined(MPICH) && MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPI_##name##_init
#elif defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5 /* MPI-4's names (the MPIX_ ones are kept too) */
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPI_##name##_init
#elif defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define HAVE_PERSISTENT 1
#define PERSISTENT(name) MPIX_##name##_init
#endif

#define ROUNDS 8

struct worker {
  int index;          /* 0 or 1 */
  MPI_Comm comm;      /* this thread's communicator */
  MPI_Comm ring;      /* a periodic ring on it */
  int rank;           /* in comm */
  int failures;       /* wrong results */
  int first_bad_round, first_bad_step;
};

static void expect(struct worker* w, int round, int step, int ok) {
  if (!ok && w->failures++ == 0) w->first_bad_round = round, w->first_bad_step = step;
}

static void* work(void* arg) {
  struct worker* w = arg;
  const int me = w->rank;
  for (int round = 0; round < ROUNDS; ++round) {
    const int v = 1000 * w->index + 100 * round;
    int rc, a[4], b[4], c = -1;
    /* blocking */
    a[0] = v + me;
    rc = MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, w->comm);
    expect(w, round, 0, rc == MPI_SUCCESS && b[0] == 4 * v + 6);
    c = me == round % 4 ? v + 7 : -1;
    rc = MPI_Bcast(&c, 1, MPI_INT, round % 4, w->comm);
    expect(w, round, 1, rc == MPI_SUCCESS && c == v + 7);
    for (int d = 0; d < 4; ++d) a[d] = v + 10 * me + d;
    rc = MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, w->comm);
    for (int s = 0; s < 4; ++s) expect(w, round, 2, rc == MPI_SUCCESS && b[s] == v + 10 * s + me);
    rc = MPI_Barrier(w->comm);
    expect(w, round, 3, rc == MPI_SUCCESS);
    /* nonblocking */
    MPI_Request r;
    a[0] = v + me;
    rc = MPI_Iallgather(a, 1, MPI_INT, b, 1, MPI_INT, w->comm, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int s = 0; s < 4; ++s) expect(w, round, 4, rc == MPI_SUCCESS && b[s] == v + s);
    a[0] = me + 1;
    rc = MPI_Iscan(a, &c, 1, MPI_INT, MPI_PROD, w->comm, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    expect(w, round, 5, rc == MPI_SUCCESS && c == (me == 0 ? 1 : me == 1 ? 2 : me == 2 ? 6 : 24));
    /* neighborhood on the ring */
    a[0] = v + me;
    rc = MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, w->ring);
    expect(w, round, 6, rc == MPI_SUCCESS && b[0] == v + (me + 3) % 4 && b[1] == v + (me + 1) % 4);
#ifdef HAVE_PERSISTENT
    /* persistent: initialized, started twice, freed */
    rc = PERSISTENT(Reduce_scatter_block)(a, &c, 1, MPI_INT, MPI_SUM, w->comm, MPI_INFO_NULL, &r);
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; ++k) {
      for (int d = 0; d < 4; ++d) a[d] = v + k + d;
      c = -1;
      rc = MPI_Start(&r);
      if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
      expect(w, round, 7 + k, rc == MPI_SUCCESS && c == 4 * (v + k + me));
    }
    if (rc == MPI_SUCCESS) rc = MPI_Request_free(&r);
    expect(w, round, 9, rc == MPI_SUCCESS);
#endif
  }
  return NULL;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_threads"), size, provided;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Query_thread(&provided);
  if (size != 4 || provided != MPI_THREAD_MULTIPLE) {
    SAY("needs 4 ranks and MPI_THREAD_MULTIPLE, has %d and %d", size, provided);
    ++cov_failures;
    return cov_finish();
  }
  struct worker w[2] = {{0}, {1}};
  MPI_Comm_dup(MPI_COMM_WORLD, &w[0].comm);
  MPI_Comm_split(MPI_COMM_WORLD, 0, 3 - rank, &w[1].comm);
  for (int i = 0; i < 2; ++i) {
    int dims[1] = {4}, periods[1] = {1};
    MPI_Comm_rank(w[i].comm, &w[i].rank);
    MPI_Cart_create(w[i].comm, 1, dims, periods, 0, &w[i].ring);
  }
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, work, &w[i]);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; ++i) {
    SAY("thread %d: %d rounds, %d wrong results", i, ROUNDS, w[i].failures);
    if (w[i].failures) {
      SAY("check failed: thread %d first wrong in round %d step %d", i, w[i].first_bad_round, w[i].first_bad_step);
      ++cov_failures;
    }
    MPI_Comm_free(&w[i].ring);
    MPI_Comm_free(&w[i].comm);
  }
  return cov_finish();
}

/* rk_refuse: what a threadcomm does not support is refused with MPI_ERR_UNSUPPORTED_OPERATION
   (error class) through the error handler, and the program goes on.
   usage: rk_refuse SPEC                 (SPEC as in rk_layout)

   Region 1 (threadcomm inheriting MPI_ERRORS_RETURN from MPI_COMM_WORLD), every thread-rank
   calls, on the threadcomm and on a dup of it: MPI_Win_create, MPI_Win_allocate, MPI_File_open,
   MPI_Intercomm_create and MPI_Comm_spawn (topologies work: rk_topo.c, rk_graph.c): each must
   return an error of class
   MPI_ERR_UNSUPPORTED_OPERATION; then an Allreduce and a ring on the threadcomm must work.
   Region 2 (a new threadcomm made while MPI_COMM_WORLD has MPI_ERRORS_ARE_FATAL): every rank
   sets MPI_ERRORS_RETURN on the threadcomm itself, MPI_Win_allocate is refused by return code;
   then a user error handler set on the threadcomm is called once per thread-rank, on its own
   thread, with that class, for MPI_Win_create. */
#include <omp.h>

#include "ranks_util.h"

static MPI_Comm tc;
static int N, T, offset;
static __thread int tls_eh_calls, tls_eh_class;
static __thread MPI_Comm tls_eh_comm;

static void eh_fn(MPI_Comm* comm, int* code, ...) {
  ++tls_eh_calls;
  MPI_Error_class(*code, &tls_eh_class);
  tls_eh_comm = *comm;
}

#define REFUSED(call)                                                                                \
  do {                                                                                               \
    int rc_ = (call);                                                                                \
    CHECK(rk_error_class(rc_) == MPI_ERR_UNSUPPORTED_OPERATION,                                      \
          "%s on %s: error class %d, expected MPI_ERR_UNSUPPORTED_OPERATION (%d)", #call, on, rk_error_class(rc_), \
          MPI_ERR_UNSUPPORTED_OPERATION);                                                            \
    ++refused;                                                                                       \
  } while (0)

static int refuse_all(MPI_Comm c, const char* on, int r) {
  int refused = 0;
  static char buf[64 * 64];
  MPI_Win win = MPI_WIN_NULL;
  REFUSED(MPI_Win_create(buf + 64 * (r % 64), 64, 1, MPI_INFO_NULL, c, &win));
  void* base = NULL;
  win = MPI_WIN_NULL;
  REFUSED(MPI_Win_allocate(64, 1, MPI_INFO_NULL, c, &base, &win));
  MPI_File fh = MPI_FILE_NULL;
  REFUSED(MPI_File_open(c, "/tmp/rk_refuse.never", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_Comm ic = MPI_COMM_NULL;
  REFUSED(MPI_Intercomm_create(c, 0, MPI_COMM_WORLD, 0, 77, &ic));
  MPI_Comm child = MPI_COMM_NULL;
  REFUSED(MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, c, &child, MPI_ERRCODES_IGNORE));
  return refused;
}

/* The threadcomm still works: an Allreduce and a ring. */
static void still_works(int r, const char* after) {
  long long s = r, o = -1;
  MPI_OK(MPI_Allreduce(&s, &o, 1, MPI_LONG_LONG, MPI_SUM, tc));
  CHECK(o == (long long)N * (N - 1) / 2, "Allreduce after %s: %lld", after, o);
  int left = (r - 1 + N) % N, right = (r + 1) % N, in = -1;
  MPI_Status st;
  MPI_OK(MPI_Sendrecv(&r, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, tc, &st));
  CHECK(in == left && st.MPI_SOURCE == left, "ring after %s: got %d from %d, expected %d", after, in, st.MPI_SOURCE, left);
}

/* A freed communicator's handle is refused with MPI_ERR_COMM (through MPI_COMM_SELF's handler,
   as for any freed object) even right after point-to-point calls on it: the engine remembers each
   thread's last communicator and rank. The next communicator, which may get the same handle,
   is the new one, with this thread's rank in it (a split with reversed keys). */
static void stale_handle(int r) {
  MPI_Comm f = MPI_COMM_NULL, stale;
  MPI_Status st;
  int x = r, y = -1, me = -1;
  MPI_OK(MPI_Comm_dup(tc, &f));
  MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, r, 9, &y, 1, MPI_INT, r, 9, f, &st));
  CHECK(y == r, "self Sendrecv on a dup: got %d", y);
  stale = f;
  MPI_OK(MPI_Comm_free(&f));
  int rc = MPI_Send(&x, 1, MPI_INT, r, 9, stale);
  CHECK(rk_error_class(rc) == MPI_ERR_COMM, "MPI_Send on a freed communicator: class %d, expected MPI_ERR_COMM", rk_error_class(rc));
  MPI_Request q = MPI_REQUEST_NULL;
  rc = MPI_Irecv(&y, 1, MPI_INT, r, 9, stale, &q);
  CHECK(rk_error_class(rc) == MPI_ERR_COMM && q == MPI_REQUEST_NULL, "MPI_Irecv on a freed communicator: class %d", rk_error_class(rc));
  MPI_OK(MPI_Comm_split(tc, 0, N - r, &f));
  MPI_OK(MPI_Comm_rank(f, &me));
  CHECK(me == N - 1 - r, "split with reversed keys: rank %d, expected %d", me, N - 1 - r);
  x = 1000 + me;
  y = -1;
  MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, me, 9, &y, 1, MPI_INT, MPI_ANY_SOURCE, 9, f, &st));
  CHECK(y == 1000 + me && st.MPI_SOURCE == me, "self Sendrecv on the split: got %d from %d, expected %d from %d", y,
        st.MPI_SOURCE, 1000 + me, me);
  MPI_OK(MPI_Comm_free(&f));
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_refuse");
  if (argc < 2) {
    rk_say("usage: rk_refuse SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  T = rk_threads_of(argv[1], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  atomic_int refused_total = 0;

  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);  /* freed objects' errors (stale_handle) */
  rk_set_stage("region 1: MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
#pragma omp parallel num_threads(T)
  {
    if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_OK(MPIX_Threadcomm_start(tc));
    int r = -1;
    MPI_Comm_rank(tc, &r);
    rk_my = r;
    if (r == offset) rk_set_stage("region 1: refusals on the threadcomm");
    atomic_fetch_add(&refused_total, refuse_all(tc, "the threadcomm", r));
    still_works(r, "the refusals on the threadcomm");
    if (r == offset) rk_set_stage("region 1: refusals on a dup");
    MPI_Comm d = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(tc, &d));
    atomic_fetch_add(&refused_total, refuse_all(d, "a dup of the threadcomm", r));
    MPI_OK(MPI_Comm_free(&d));
    still_works(r, "the refusals on a dup");
    if (r == offset) rk_set_stage("region 1: a freed communicator's handle, and the next one");
    stale_handle(r);
    /* An active persistent request may be freed (MPI-4.0 §3.7.3): the handle goes at once, the
       operation still completes (here when the send matches it). */
    if (r == offset) rk_set_stage("region 1: freeing an active persistent request");
    {
      int me = -1, in = -1, out = r;
      MPI_Request p = MPI_REQUEST_NULL;
      MPI_OK(MPI_Comm_rank(tc, &me));
      MPI_OK(MPI_Recv_init(&in, 1, MPI_INT, me, 77, tc, &p));
      MPI_OK(MPI_Start(&p));
      MPI_OK(MPI_Request_free(&p));
      CHECK(p == MPI_REQUEST_NULL, "MPI_Request_free of an active persistent request left the handle");
      MPI_OK(MPI_Send(&out, 1, MPI_INT, me, 77, tc));  /* to itself: matched before it returns */
      CHECK(in == r, "the freed persistent receive got %d, expected %d", in, r);
    }
    MPI_OK(MPIX_Threadcomm_finish(tc));
    rk_my = -1;
  }
  rk_set_stage("region 1: MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));

  /* Region 2: the threadcomm inherits MPI_ERRORS_ARE_FATAL; its ranks set their own handler. */
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(eh_fn, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  rk_set_stage("region 2: MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#pragma omp parallel num_threads(T)
  {
    if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_OK(MPIX_Threadcomm_start(tc));
    int r = -1;
    MPI_Comm_rank(tc, &r);
    rk_my = r;
    if (r == offset) rk_set_stage("region 2: MPI_ERRORS_RETURN set on the threadcomm");
    MPI_OK(MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Barrier(tc));
    void* base = NULL;
    MPI_Win awin = MPI_WIN_NULL;
    int rc = MPI_Win_allocate(64, 1, MPI_INFO_NULL, tc, &base, &awin);
    CHECK(rk_error_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_allocate with MPI_ERRORS_RETURN set on the threadcomm: class %d", rk_error_class(rc));
    atomic_fetch_add(&refused_total, 1);
    still_works(r, "MPI_Win_allocate");
    if (r == offset) rk_set_stage("region 2: user error handler on the threadcomm");
    MPI_OK(MPI_Comm_set_errhandler(tc, eh));
    MPI_OK(MPI_Barrier(tc));
    tls_eh_calls = 0;
    static char wbuf[64 * 64];
    MPI_Win win = MPI_WIN_NULL;
    rc = MPI_Win_create(wbuf + 64 * (r % 64), 64, 1, MPI_INFO_NULL, tc, &win);
    CHECK(rk_error_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_create with a user handler: class %d", rk_error_class(rc));
    /* The handler's communicator argument is a stand-in (docs/threads-as-ranks.md). */
    CHECK(tls_eh_calls == 1 && tls_eh_class == MPI_ERR_UNSUPPORTED_OPERATION && tls_eh_comm != MPI_COMM_NULL,
          "user error handler: %d calls on this thread, class %d", tls_eh_calls, tls_eh_class);
    atomic_fetch_add(&refused_total, 1);
    MPI_OK(MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN));
    still_works(r, "MPI_Win_create");
    MPI_OK(MPIX_Threadcomm_finish(tc));
    rk_my = -1;
  }
  rk_set_stage("region 2: MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  MPI_Errhandler_free(&eh);
  rk_say("rk_refuse: rank %d: %d threads of %d thread-ranks, %d refusals checked\n", rk_wrank, T, N,
         atomic_load(&refused_total));
  return rk_finish();
}

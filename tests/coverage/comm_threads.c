/* Coverage: communicator, group, attribute and error-handler calls made by two threads per
   process at once, each thread on a parent communicator of its own (MPI allows concurrent
   collectives on different communicators). Each round a thread builds communicators with dup,
   idup, dup_with_info, split, split_type, create and create_group from its parent, checks them
   with an Allreduce, caches an attribute whose copy and delete callbacks count per thread, and
   frees everything. The threads' totals are printed at the end. */
// ranks: 2
#include <pthread.h>
#include <stdint.h>

#include "coverage.h"

/* GCC 12 takes Open MPI's MPI_UNWEIGHTED for a zero-size array */
#pragma GCC diagnostic ignored "-Wstringop-overread"

#define ROUNDS 10

typedef struct {
  int id;
  MPI_Comm parent;
  MPI_Comm self; /* a duplicate of MPI_COMM_SELF: the local side of Intercomm_create, which is
                    collective on it, so the two threads must not share MPI_COMM_SELF */
  int keyval;
  int copies, deletes, errors_seen;
  long sum;
  int failures;
} thread_t;

static int copy_fn(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm, (void)keyval;
  ++((thread_t*)extra)->copies;
  *(void**)out = (void*)((intptr_t)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)value;
  ++((thread_t*)extra)->deletes;
  return MPI_SUCCESS;
}

static void handler(MPI_Comm* comm, int* code, ...) {
  (void)comm, (void)code;
}

static long check(thread_t* t, MPI_Comm c, int expect_size) {
  int size = -1, rank = -1, one = 1, total = 0;
  MPI_Comm_size(c, &size);
  MPI_Comm_rank(c, &rank);
  if (MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, c) != MPI_SUCCESS || total != size ||
      size != expect_size)
    ++t->failures;
  return size * 100 + rank;
}

static void* worker(void* arg) {
  thread_t* t = arg;
  int wsize;
  MPI_Comm_size(t->parent, &wsize);
  MPI_Group pgroup;
  MPI_Comm_group(t->parent, &pgroup);
  for (int round = 0; round < ROUNDS; ++round) {
    MPI_Comm c, d, e, s, st, cr, cg;
    MPI_Request req;
    MPI_Comm_set_attr(t->parent, t->keyval, (void*)(intptr_t)(round * 10));
    MPI_Comm_dup(t->parent, &c);
    void* v = NULL;
    int flag = 0;
    MPI_Comm_get_attr(c, t->keyval, &v, &flag);
    if (!flag || (intptr_t)v != round * 10 + 1) ++t->failures;
    t->sum += check(t, c, wsize);
    MPI_Comm_idup(c, &d, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    t->sum += check(t, d, wsize);
    MPI_Comm_dup_with_info(d, MPI_INFO_NULL, &e);
    t->sum += check(t, e, wsize);
    MPI_Comm_split(t->parent, 0, -round, &s);
    t->sum += check(t, s, wsize);
    MPI_Comm_split_type(s, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &st);
    t->sum += check(t, st, wsize);
    MPI_Comm_create(t->parent, pgroup, &cr);
    t->sum += check(t, cr, wsize);
    MPI_Comm_create_group(t->parent, pgroup, round, &cg);
    t->sum += check(t, cg, wsize);
    /* A group and an error handler of this thread's own. */
    MPI_Group g, inc;
    MPI_Comm_group(cg, &g);
    int first = 0, r = -1;
    MPI_Group_incl(g, 1, &first, &inc);
    MPI_Group_rank(inc, &r);
    t->sum += r == MPI_UNDEFINED ? 7 : r;
    MPI_Group_free(&inc);
    MPI_Group_free(&g);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(cr, eh);
    MPI_Errhandler_free(&eh);
    /* Topologies and an intercommunicator between the two processes. */
    MPI_Comm cart, sub, dg, ic, merged;
    int dims[1] = {wsize}, periods[1] = {1}, keep[1] = {1}, src, dst;
    MPI_Cart_create(t->parent, 1, dims, periods, 0, &cart);
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    t->sum += check(t, cart, wsize) + src + dst;
    MPI_Cart_sub(cart, keep, &sub);
    t->sum += check(t, sub, wsize);
    int me, nbr;
    MPI_Comm_rank(t->parent, &me);
    nbr = (me + 1) % wsize;
    MPI_Dist_graph_create_adjacent(t->parent, 1, &nbr, MPI_UNWEIGHTED, 1, &nbr, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &dg);
    t->sum += check(t, dg, wsize);
    /* Open MPI's Intercomm_create takes up to seconds when two threads run it at once: once. */
    ic = merged = MPI_COMM_NULL;
    if (round == 0) {
      MPI_Intercomm_create(t->self, 0, t->parent, nbr, 100 + round, &ic);
      int rsize = -1;
      MPI_Comm_remote_size(ic, &rsize);
      t->sum += check(t, ic, 1) + rsize;
      MPI_Intercomm_merge(ic, me, &merged);
      t->sum += check(t, merged, 2);
    }
    MPI_Comm_delete_attr(t->parent, t->keyval);
    MPI_Comm* all[] = {&c, &d, &e, &s, &st, &cr, &cg, &cart, &sub, &dg, &ic, &merged};
    for (unsigned i = 0; i < sizeof all / sizeof *all; ++i)
      if (*all[i] != MPI_COMM_NULL && (MPI_Comm_free(all[i]) != MPI_SUCCESS || *all[i] != MPI_COMM_NULL))
        ++t->failures;
  }
  MPI_Group_free(&pgroup);
  return NULL;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "comm_threads");
  int provided;
  MPI_Query_thread(&provided);
  thread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    memset(&threads[i], 0, sizeof threads[i]);
    threads[i].id = i;
    MPI_Comm_dup(MPI_COMM_WORLD, &threads[i].parent);
    MPI_Comm_dup(MPI_COMM_SELF, &threads[i].self);
    MPI_Comm_create_keyval(copy_fn, delete_fn, &threads[i].keyval, &threads[i]);
  }
  /* Open MPI 4.1.4 opens its topology framework at the first topology constructor, and not
     thread-safely: two threads making the process's first Cart_create at once crash natively
     (5 of 40 runs). Make the first one here. */
  MPI_Comm first;
  int one_dim[1] = {0}, one_period[1] = {0};
  MPI_Comm_size(MPI_COMM_WORLD, &one_dim[0]);
  MPI_Cart_create(MPI_COMM_WORLD, 1, one_dim, one_period, 0, &first);
  MPI_Comm_free(&first);
  if (provided == MPI_THREAD_MULTIPLE) {
    pthread_t tids[2];
    for (int i = 0; i < 2; ++i) pthread_create(&tids[i], NULL, worker, &threads[i]);
    for (int i = 0; i < 2; ++i) pthread_join(tids[i], NULL);
  }
  for (int i = 0; i < 2; ++i) {
    thread_t* t = &threads[i];
    /* Per round: one copy on dup (its copy is copied again by idup and dup_with_info), the
       parent's value deleted once, and each copy deleted by Comm_free. */
    SAY("thread %d: sum %ld copies %d deletes %d failures %d", i, t->sum, t->copies, t->deletes,
        t->failures);
    CHECK(t->failures == 0);
    MPI_Comm_free(&t->parent);
    MPI_Comm_free(&t->self);
    MPI_Comm_free_keyval(&t->keyval);
  }
  (void)rank;
  return cov_finish();
}

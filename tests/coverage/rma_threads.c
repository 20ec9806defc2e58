/* Coverage: RMA from several threads at once. Part 1: one window, one lock_all epoch opened by the
   main thread; 3 threads each do MPI_Fetch_and_op, MPI_Accumulate, MPI_Rput + MPI_Wait,
   MPI_Win_flush and MPI_Win_flush_local on it concurrently. Part 2: each thread has its own
   window (MPI_Win_create) and does fence epochs (a collective per window) and
   post/start/complete/wait on it at the same time as the others. Part 3 (Open MPI only): each
   thread sets, reads and deletes its own attribute on one window (delete callbacks counted per
   thread). Part 4: each thread creates, uses and frees windows (MPI_Win_create, MPI_Win_allocate,
   MPI_Win_create_dynamic with attach/detach) on its own communicator while the others do the
   same. Final window contents are checked. */
// ranks: 2
#include <pthread.h>

#include "coverage.h"

#define NT 3
#define ROUNDS 20

static int rank, size;
static MPI_Win shared_win;
static MPI_Win own_win[NT];
static int* own_mem[NT];
static int errors[NT];

static void* part1(void* arg) {
  int t = (int)(long)arg, right = (rank + 1) % size;
  for (int i = 0; i < ROUNDS; ++i) {
    int one = 1, old = -1, v = 1000 * rank + 100 * t + i;
    if (MPI_Fetch_and_op(&one, &old, MPI_INT, right, 0, MPI_SUM, shared_win) != MPI_SUCCESS) ++errors[t];
    if (MPI_Accumulate(&one, 1, MPI_INT, right, 1 + t, 1, MPI_INT, MPI_SUM, shared_win) != MPI_SUCCESS) ++errors[t];
    MPI_Request req;
    if (MPI_Rput(&v, 1, MPI_INT, right, 8 + t, 1, MPI_INT, shared_win, &req) != MPI_SUCCESS) ++errors[t];
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_flush_local(right, shared_win);
    if (MPI_Win_flush(right, shared_win) != MPI_SUCCESS) ++errors[t];
  }
  return NULL;
}

static void* part2(void* arg) {
  int t = (int)(long)arg, right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Win win = own_win[t];
  MPI_Group world, gl, gr;
  MPI_Win_get_group(win, &world);
  MPI_Group_incl(world, 1, &left, &gl);
  MPI_Group_incl(world, 1, &right, &gr);
  for (int i = 0; i < ROUNDS; ++i) {
    int v = 10000 * t + 100 * rank + i;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (own_mem[t][0] != 10000 * t + 100 * left + i) ++errors[t];
    MPI_Win_post(gl, 0, win);
    MPI_Win_start(gr, 0, win);
    MPI_Accumulate(&v, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    if (own_mem[t][1] != 10000 * t + 100 * left + i) ++errors[t];
  }
  MPI_Group_free(&gl);
  MPI_Group_free(&gr);
  MPI_Group_free(&world);
  return NULL;
}

#ifndef MPICH
static int delete_count[NT];
static int count_delete(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win, (void)keyval, (void)value;
  ++*(int*)extra;
  return MPI_SUCCESS;
}

static void* part3(void* arg) {
  int t = (int)(long)arg, keyval, values[ROUNDS], flag, *got;
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &keyval, &delete_count[t]);
  for (int i = 0; i < ROUNDS; ++i) {
    values[i] = 100 * t + i;
    MPI_Win_set_attr(shared_win, keyval, &values[i]);
    got = NULL;
    MPI_Win_get_attr(shared_win, keyval, &got, &flag);
    if (!flag || got != &values[i]) ++errors[t];
    if (i % 2 == 0) MPI_Win_delete_attr(shared_win, keyval); /* odd rounds: replaced by the next set */
  }
  MPI_Win_delete_attr(shared_win, keyval);
  MPI_Win_free_keyval(&keyval);
  return NULL;
}
#endif

static MPI_Comm comms[NT];
static void* part4(void* arg) {
  int t = (int)(long)arg, r, n, right, left;
  MPI_Comm comm = comms[t];
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  right = (r + 1) % n, left = (r + n - 1) % n;
  for (int i = 0; i < ROUNDS; ++i) {
    MPI_Win win;
    int v = 1000 * t + 10 * r + i % 3, *mem = NULL;
    void* page = NULL;
    MPI_Aint addr = 0, raddr = 0;
    switch (i % 3) {
      case 0:
        if (posix_memalign(&page, 4096, 4096) != 0) return NULL;
        mem = page;
        mem[0] = -1;
        MPI_Win_create(mem, 4096, sizeof(int), MPI_INFO_NULL, comm, &win);
        break;
      case 1:
        MPI_Win_allocate(4096, sizeof(int), MPI_INFO_NULL, comm, &mem, &win);
        mem[0] = -1;
        break;
      default:
        MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win);
        if (posix_memalign(&page, 4096, 4096) != 0) return NULL;
        mem = page;
        mem[0] = -1;
        MPI_Win_attach(win, mem, 4096);
        MPI_Get_address(mem, &addr);
        MPI_Sendrecv(&addr, 1, MPI_AINT, left, 0, &raddr, 1, MPI_AINT, right, 0, comm, MPI_STATUS_IGNORE);
        break;
    }
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_INT, right, i % 3 == 2 ? raddr : 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (mem[0] != 1000 * t + 10 * left + i % 3) ++errors[t];
    if (i % 3 == 2) {
      MPI_Barrier(comm);
      MPI_Win_detach(win, mem);
    }
    MPI_Win_free(&win);
    free(page);
  }
  return NULL;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "rma_threads");
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int left = (rank + size - 1) % size;
  int provided;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    SAY("no MPI_THREAD_MULTIPLE");
    return cov_finish();
  }
  pthread_t th[NT];

  int* mem = NULL;
  MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &shared_win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, shared_win);
  for (int i = 0; i < 16; ++i) mem[i] = 0;
  MPI_Win_unlock(rank, shared_win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, shared_win);
  for (long t = 0; t < NT; ++t) pthread_create(&th[t], NULL, part1, (void*)t);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);
  MPI_Win_unlock_all(shared_win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, shared_win);
  SAY("part 1 counter %d accumulates %d %d %d last puts %d %d %d", mem[0], mem[1], mem[2], mem[3], mem[8], mem[9],
      mem[10]);
  CHECK(mem[0] == NT * ROUNDS);
  for (int t = 0; t < NT; ++t) CHECK(mem[1 + t] == ROUNDS && mem[8 + t] == 1000 * left + 100 * t + ROUNDS - 1);
  MPI_Win_unlock(rank, shared_win);

#ifdef MPICH
  /* MPICH 4.0.2 natively loses delete callbacks (and once returned a wrong value from
     MPI_Win_get_attr) when several threads set attributes on one window, even with every call
     under one mutex (/tmp reproduction in the coverage report); part 3 runs on Open MPI only. */
  SAY("part 3 skipped on MPICH");
#else
  for (long t = 0; t < NT; ++t) pthread_create(&th[t], NULL, part3, (void*)t);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < NT; ++t) {
    SAY("part 3 thread %d delete callbacks %d errors %d", t, delete_count[t], errors[t]);
    CHECK(delete_count[t] == ROUNDS && errors[t] == 0); /* a set over a value deletes it too */
  }
#endif
  MPI_Win_free(&shared_win);

  for (int t = 0; t < NT; ++t) {
    /* A page each: MPICH 4.0.2 over UCX natively puts into the wrong window when the memory of two
       live windows shares a page (UCX's registration cache; UCX_RCACHE_ENABLE=n avoids it). */
    if (posix_memalign((void**)&own_mem[t], 4096, 4096) != 0) return 1;
    own_mem[t][0] = own_mem[t][1] = -1;
    MPI_Win_create(own_mem[t], 4096, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &own_win[t]);
  }
  for (long t = 0; t < NT; ++t) pthread_create(&th[t], NULL, part2, (void*)t);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < NT; ++t) {
    SAY("part 2 window %d: %d %d, errors %d", t, own_mem[t][0], own_mem[t][1], errors[t]);
    CHECK(errors[t] == 0);
    MPI_Win_free(&own_win[t]);
    free(own_mem[t]);
  }

  for (int t = 0; t < NT; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  for (long t = 0; t < NT; ++t) pthread_create(&th[t], NULL, part4, (void*)t);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < NT; ++t) {
    SAY("part 4 thread %d errors %d", t, errors[t]);
    CHECK(errors[t] == 0);
    MPI_Comm_free(&comms[t]);
  }
  return cov_finish();
}

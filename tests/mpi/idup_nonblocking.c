/* Pending nonblocking duplications overlapped with nonblocking collectives (the shape of
   MPICH's threads/comm/idup_nb): for several intra- and intercommunicators, the main thread
   duplicates the communicator twice per thread with MPI_Comm_idup (a parent and a neighbour);
   each of THREADS threads then duplicates its parent IDUPS1 times, starts a scan (intra) or an
   allreduce (inter) on the parent, waits for the first child, duplicates that child IDUPS2
   times, and starts an allreduce and a barrier on the child, a broadcast on the parent and a
   scan or allreduce on the neighbour, all pending together; then completes everything and
   checks every result and communicator. One thread per rank starts late, so ranks start their
   duplications at different times.
   Usage: idup_nonblocking [info] [threads]. Needs at least 2 ranks. */
#include <unistd.h>

#include "idup_overlap_util.h"

#define IDUPS1 3
#define IDUPS2 3
#define MAX_THREADS 16

static MPI_Comm parents[MAX_THREADS], neighbours[MAX_THREADS];
static int is_left;  /* intercommunicators: whether this process is in the left group */

/* Sum 0 + 1 + ... + (n - 1). */
static int triangle(int n) { return n * (n - 1) / 2; }

static void* intra_kernel(void* arg) {
  int t = *(int*)arg, rank, size;
  MPI_Comm parent = parents[t], neighbour = neighbours[t];
  MPI_Comm_rank(parent, &rank);
  MPI_Comm_size(parent, &size);
  if (t == rank % MAX_THREADS) usleep(200 * 1000);

  MPI_Comm children[IDUPS1 + IDUPS2];
  MPI_Request requests[IDUPS1 + IDUPS2 + 8];
  int n = 0, scan = -1, reduced = -1, bcast = rank == 0 ? 199 : 111, nscan = -1;
  for (int j = 0; j < IDUPS1; ++j) start_idup(parent, &children[j], &requests[n++]);
  MPI_Iscan(&rank, &scan, 1, MPI_INT, MPI_SUM, parent, &requests[n++]);
  MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  CHECK(requests[0] == MPI_REQUEST_NULL, "first child: request not freed");
  for (int j = 0; j < IDUPS2; ++j) start_idup(children[0], &children[IDUPS1 + j], &requests[n++]);
  int child_rank = -1;
  MPI_Comm_rank(children[0], &child_rank);
  MPI_Iallreduce(&child_rank, &reduced, 1, MPI_INT, MPI_SUM, children[0], &requests[n++]);
  MPI_Ibcast(&bcast, 1, MPI_INT, 0, parent, &requests[n++]);
  MPI_Ibarrier(children[0], &requests[n++]);
  int neighbour_rank = -1;
  MPI_Comm_rank(neighbour, &neighbour_rank);
  MPI_Iscan(&neighbour_rank, &nscan, 1, MPI_INT, MPI_SUM, neighbour, &requests[n++]);
  MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);

  CHECK(scan == triangle(rank + 1), "thread %d: Iscan on the parent gave %d, expected %d", t, scan, triangle(rank + 1));
  CHECK(reduced == triangle(size), "thread %d: Iallreduce on the child gave %d, expected %d", t, reduced, triangle(size));
  CHECK(bcast == 199, "thread %d: Ibcast on the parent gave %d", t, bcast);
  CHECK(nscan == triangle(neighbour_rank + 1), "thread %d: Iscan on the neighbour gave %d, expected %d", t, nscan,
        triangle(neighbour_rank + 1));
  for (int j = 0; j < IDUPS1 + IDUPS2; ++j) {
    check_comm(children[j], 0, size, 0, "idup child");
    MPI_Comm_free(&children[j]);
  }
  return NULL;
}

static void* inter_kernel(void* arg) {
  int t = *(int*)arg, rank, size, remote;
  MPI_Comm parent = parents[t], neighbour = neighbours[t];
  MPI_Comm_rank(parent, &rank);
  MPI_Comm_size(parent, &size);
  MPI_Comm_remote_size(parent, &remote);
  if (t == rank % MAX_THREADS) usleep(200 * 1000);

  MPI_Comm children[IDUPS1 + IDUPS2];
  MPI_Request requests[IDUPS1 + IDUPS2 + 8];
  int n = 0, sum = -1, reduced = -1, nsum = -1;
  for (int j = 0; j < IDUPS1; ++j) start_idup(parent, &children[j], &requests[n++]);
  MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, parent, &requests[n++]);
  MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  for (int j = 0; j < IDUPS2; ++j) start_idup(children[0], &children[IDUPS1 + j], &requests[n++]);
  int child_rank = -1;
  MPI_Comm_rank(children[0], &child_rank);
  MPI_Iallreduce(&child_rank, &reduced, 1, MPI_INT, MPI_SUM, children[0], &requests[n++]);
  /* Broadcast from the left group's rank 0 to the right group; the other left processes pass
     MPI_PROC_NULL and keep their value. */
  int root = is_left ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  int bcast = is_left ? 199 : 111;
  MPI_Ibcast(&bcast, 1, MPI_INT, root, parent, &requests[n++]);
  MPI_Ibarrier(children[0], &requests[n++]);
  int neighbour_rank = -1, neighbour_remote = 0;
  MPI_Comm_rank(neighbour, &neighbour_rank);
  MPI_Comm_remote_size(neighbour, &neighbour_remote);
  MPI_Iallreduce(&neighbour_rank, &nsum, 1, MPI_INT, MPI_SUM, neighbour, &requests[n++]);
  MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);

  CHECK(sum == triangle(remote), "thread %d: Iallreduce on the parent gave %d, expected %d", t, sum, triangle(remote));
  CHECK(reduced == triangle(remote), "thread %d: Iallreduce on the child gave %d, expected %d", t, reduced,
        triangle(remote));
  CHECK(bcast == 199, "thread %d: Ibcast on the parent gave %d", t, bcast);
  CHECK(nsum == triangle(neighbour_remote), "thread %d: Iallreduce on the neighbour gave %d, expected %d", t, nsum,
        triangle(neighbour_remote));
  for (int j = 0; j < IDUPS1 + IDUPS2; ++j) {
    check_comm(children[j], 0, size, remote, "idup child (inter)");
    MPI_Comm_free(&children[j]);
  }
  return NULL;
}

/* The main thread's duplications of `base` for the threads, all pending at once; then the
   kernel in every thread. */
static void run_on(MPI_Comm base, int threads, thread_fn kernel) {
  MPI_Request requests[2 * MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    start_idup(base, &parents[t], &requests[2 * t]);
    start_idup(base, &neighbours[t], &requests[2 * t + 1]);
  }
  MPI_Waitall(2 * threads, requests, MPI_STATUSES_IGNORE);
  int index[MAX_THREADS];
  for (int t = 0; t < threads; ++t) index[t] = t;
  run_threads(threads, kernel, index, sizeof index[0]);
  for (int t = 0; t < threads; ++t) {
    MPI_Comm_free(&parents[t]);
    MPI_Comm_free(&neighbours[t]);
  }
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "idup_nonblocking");
  overlap_forms_from_args(argc, argv);
  int threads = argc > 2 ? atoi(argv[2]) : 3, rank, size;
  if (threads < 1 || threads > MAX_THREADS) threads = 3;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    printf("idup_nonblocking: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  /* Intracommunicators: the world, the world in reverse order, and each half by parity. */
  MPI_Comm comm;
  run_on(MPI_COMM_WORLD, threads, intra_kernel);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
  run_on(comm, threads, intra_kernel);
  MPI_Comm_free(&comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comm);
  run_on(comm, threads, intra_kernel);
  MPI_Comm_free(&comm);

  /* Intercommunicators: lower half against upper half, and rank 0 against the others. */
  for (int kind = 0; kind < 2; ++kind) {
    is_left = kind == 0 ? rank < size / 2 : rank == 0;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, is_left, rank, &local);
    int remote_leader = is_left ? (kind == 0 ? size / 2 : 1) : 0;
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 40 + kind, &inter);
    MPI_Comm_free(&local);
    run_on(inter, threads, inter_kernel);
    MPI_Comm_free(&inter);
  }
  overlap_forms_done();
  return test_finish();
}

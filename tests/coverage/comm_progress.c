/* Coverage: MPI_Comm_idup (and MPICH's MPI_Comm_idup_with_info) is nonblocking: it must return
   before the other ranks start theirs. Rank 0 starts the duplication and then sends to rank 1;
   rank 1 waits for that message before starting its own, at most WAIT_S seconds (then starts
   anyway, so a process whose MPI_Comm_idup waits for the others shows up as "arrived 0"
   instead of hanging). The same for blocking calls inside callbacks is tests/mpi/callback_progress.c. */
// ranks: 2
#include <unistd.h>

#include "coverage.h"

#define WAIT_S 4.0

static int rank;

/* Rank 1: receives tag `tag` from rank 0, giving up waiting after WAIT_S seconds; returns
   whether it arrived in time. The receive is completed later by finish_receive. */
static MPI_Request pending;
static int got;
static int receive_in_time(int tag) {
  got = -1;
  MPI_Irecv(&got, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &pending);
  double start = MPI_Wtime();
  int flag = 0;
  while (!flag && MPI_Wtime() - start < WAIT_S) {
    MPI_Test(&pending, &flag, MPI_STATUS_IGNORE);
    if (!flag) usleep(1000);
  }
  return flag;
}
static void finish_receive(void) {
  MPI_Wait(&pending, MPI_STATUS_IGNORE);
}

/* Rank 0 starts the duplication, then sends; rank 1 receives, then starts it. */
static void idup_scenario(int with_info) {
  MPI_Comm dup;
  MPI_Request req;
  int arrived = -1, tag = 20 + with_info, v = tag;
  if (rank == 0) {
#if defined(MPICH)
    if (with_info) MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup, &req);
    else
#endif
      MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req);
    MPI_Send(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
  } else {
    arrived = receive_in_time(tag);
#if defined(MPICH)
    if (with_info) MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup, &req);
    else
#endif
      MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req);
    finish_receive();
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  int size = -1;
  MPI_Comm_size(dup, &size);
  if (rank == 1)
    SAY("%s: message arrived before rank 1 started its own %d, value %d, size %d",
        with_info ? "Comm_idup_with_info" : "Comm_idup", arrived, got, size);
  MPI_Comm_free(&dup);
}

/* Two duplications in flight at once, then one completed by polling MPI_Test while the other
   is still in flight, each used afterwards. */
static void two_in_flight(void) {
  MPI_Comm a, b;
  MPI_Request reqs[2];
  MPI_Comm_idup(MPI_COMM_WORLD, &a, &reqs[0]);
  MPI_Comm_idup(MPI_COMM_WORLD, &b, &reqs[1]);
  int flag = 0, polls = 0;
  while (!flag) {
    MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
    ++polls;
  }
  int sum_a = 0, one = 1;
  MPI_Allreduce(&one, &sum_a, 1, MPI_INT, MPI_SUM, a);
  MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
  int sum_b = 0, cmp = -1;
  MPI_Allreduce(&rank, &sum_b, 1, MPI_INT, MPI_SUM, b);
  MPI_Comm_compare(a, b, &cmp);
  SAY("two in flight: first completed by MPI_Test %d, sums %d %d, congruent %d, request null %d", flag, sum_a, sum_b,
      cmp == MPI_CONGRUENT, reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "comm_progress");
  two_in_flight();
  idup_scenario(0);
#if defined(MPICH)
  idup_scenario(1);
#endif
  return cov_finish();
}

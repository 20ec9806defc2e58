/* Coverage: MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent, MPI_Comm_disconnect.
   The two ranks spawn copies of this program (argv[1] tells a copy what it is); a copy finds its
   parent with MPI_Comm_get_parent, exchanges values with it over the intercommunicator, sends the
   parent what it observed (the parents record it, so only the original rank 0 prints) and
   disconnects. The arguments significant only at the root are passed as NULL / 0 elsewhere.
   MPICH 4.0 (ch4:ucx) cannot spawn: MPI_Open_port, which spawning needs, fails natively with
   "MPIDI_UCX_get_local_upids: The function is currently not supported with ucx netmod", so there
   only MPI_Comm_get_parent is called. Spawned copies run under tsmpi too (tsmpirun's -x variables
   reach them), so a tsmpi run prints a statistics block for each of them as well. */
// ranks: 2
// processes (openmpi): 6 (the 2 ranks, then 2 copies from MPI_Comm_spawn and 2 from MPI_Comm_spawn_multiple)
// processes (openmpi-5): 2 (Open MPI 5.0.7's mpiexec crashes natively: see SPAWNS below)
#include <string.h>

#include "coverage.h"

#ifdef OPEN_MPI
/* What a spawned copy reports to its parent, one int each. */
enum { R_RANK, R_SIZE, R_REMOTE, R_APPNUM, R_ARGS, R_GOT, R_SUM, R_BCAST, R_SAME_PARENT, R_COUNT };

static int child_main(MPI_Comm parent, int argc, char** argv) {
  int rank, size, remote, res[R_COUNT];
  MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_remote_size(parent, &remote);
  res[R_RANK] = rank;
  res[R_SIZE] = size;
  res[R_REMOTE] = remote;
  int* appnum = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
  res[R_APPNUM] = flag ? *appnum : -1;
  /* spawned: "spawned" "x"; spawned by spawn_multiple: "multi" "<command index>" */
  int args = 0;
  if (argc == 3 && strcmp(argv[1], "spawned") == 0 && strcmp(argv[2], "x") == 0) args = 1;
  if (argc == 3 && strcmp(argv[1], "multi") == 0 && atoi(argv[2]) == res[R_APPNUM]) args = 2;
  res[R_ARGS] = args;
  /* The parent of the same rank sends 1000 + its rank * 10 + my rank. */
  int peer = rank % remote, got = -1;
  MPI_Recv(&got, 1, MPI_INT, peer, 1, parent, MPI_STATUS_IGNORE);
  res[R_GOT] = got;
  /* Intercommunicator reduction: every child gets the sum of the parents' contributions. */
  int mine = 7 + rank, sum = -1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent);
  res[R_SUM] = sum;
  /* Intercommunicator broadcast from the parent's rank 0. */
  int b = -1;
  MPI_Bcast(&b, 1, MPI_INT, 0, parent);
  res[R_BCAST] = b;
  MPI_Comm again = MPI_COMM_NULL;
  MPI_Comm_get_parent(&again);
  res[R_SAME_PARENT] = again == parent;
  MPI_Send(res, R_COUNT, MPI_INT, peer, 2, parent);
  int rc = MPI_Comm_disconnect(&parent);
  (void)rc;
  MPI_Finalize();
  return 0;
}

/* The parents' side of one spawned world of `nchildren`: send, reduce, broadcast, collect reports. */
static void talk_to_children(MPI_Comm inter, int rank, int nchildren, const char* what) {
  int remote = -1, isinter = 0;
  MPI_Comm_test_inter(inter, &isinter);
  MPI_Comm_remote_size(inter, &remote);
  SAY("%s: inter %d remote size %d", what, isinter, remote);
  for (int c = rank; c < nchildren; c += 2) {
    int v = 1000 + rank * 10 + c;
    MPI_Send(&v, 1, MPI_INT, c, 1, inter);
  }
  int mine = 100 * (rank + 1), sum = -1; /* what the parents get: the children's 7 + rank summed */
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
  SAY("%s: allreduce from children %d", what, sum);
  int b = 4242;
  MPI_Bcast(&b, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
  for (int c = rank; c < nchildren; c += 2) {
    int res[R_COUNT];
    MPI_Recv(res, R_COUNT, MPI_INT, c, 2, inter, MPI_STATUS_IGNORE);
    SAY("%s: child %d: rank %d size %d remote %d appnum %d args %d got %d sum %d bcast %d same_parent %d",
        what, c, res[R_RANK], res[R_SIZE], res[R_REMOTE], res[R_APPNUM], res[R_ARGS], res[R_GOT],
        res[R_SUM], res[R_BCAST], res[R_SAME_PARENT]);
    CHECK(res[R_GOT] == 1000 + rank * 10 + c && res[R_SUM] == 300 && res[R_BCAST] == 4242);
  }
  int rc = MPI_Comm_disconnect(&inter);
  SAY("%s: disconnect rc %d null %d", what, rc, inter == MPI_COMM_NULL);
}
#endif

/* Open MPI 5.0.7's mpiexec (prterun) dies of a segmentation fault natively when this program
   spawns, leaving the spawned copies spinning: there, as on MPICH, only MPI_Comm_get_parent. */
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#define SPAWNS 1
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "dyn_spawn");
  MPI_Comm parent = (MPI_Comm)-1;
  MPI_Comm_get_parent(&parent);
#ifdef OPEN_MPI
  if (parent != MPI_COMM_NULL) return child_main(parent, argc, argv);
#endif
  SAY("get_parent null %d", parent == MPI_COMM_NULL);
#ifdef SPAWNS
  /* MPI_Comm_spawn, root 0: command, argv, maxprocs and info are significant only there. */
  char* spawn_args[] = {"spawned", "x", NULL};
  MPI_Info info = MPI_INFO_NULL;
  if (rank == 0) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "tsmpi_coverage", "spawn"); /* a key the MPI ignores */
  }
  int errcodes[2] = {-1, -1};
  MPI_Comm inter = MPI_COMM_NULL;
  int rc = MPI_Comm_spawn(rank == 0 ? argv[0] : NULL, rank == 0 ? spawn_args : NULL, rank == 0 ? 2 : 0,
                          rank == 0 ? info : (MPI_Info)NULL, 0, MPI_COMM_WORLD, &inter,
                          rank == 0 ? errcodes : MPI_ERRCODES_IGNORE);
  SAY("spawn rc %d", rc);
  if (rank == 0) {
    SAY("spawn errcodes %d %d", errcodes[0], errcodes[1]);
    MPI_Info_free(&info);
  }
  if (rc == MPI_SUCCESS) talk_to_children(inter, rank, 2, "spawn");

  /* MPI_Comm_spawn_multiple, root 1: count and the four arrays are significant only there. */
  char* multi_args0[] = {"multi", "0", NULL};
  char* multi_args1[] = {"multi", "1", NULL};
  char* commands[2] = {argv[0], argv[0]};
  char** argvs[2] = {multi_args0, multi_args1};
  int maxprocs[2] = {1, 1};
  MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
  int multi_errcodes[2] = {-1, -1};
  inter = MPI_COMM_NULL;
  rc = MPI_Comm_spawn_multiple(rank == 1 ? 2 : 0, rank == 1 ? commands : NULL, rank == 1 ? argvs : NULL,
                               rank == 1 ? maxprocs : NULL, rank == 1 ? infos : NULL, 1, MPI_COMM_WORLD,
                               &inter, rank == 1 ? multi_errcodes : MPI_ERRCODES_IGNORE);
  SAY("spawn_multiple rc %d", rc);
  if (rank == 1) SAY("spawn_multiple errcodes %d %d", multi_errcodes[0], multi_errcodes[1]);
  if (rc == MPI_SUCCESS) talk_to_children(inter, rank, 2, "spawn_multiple");
#endif
  (void)rank;
  return cov_finish();
}

/* Coverage: MPI-IO from several threads at once on one file: 3 threads per rank do independent
   explicit-offset accesses on the same file handle concurrently (MPI_File_write_at,
   MPI_File_iwrite_at, MPI_File_read_at, MPI_File_iread_at); rank 0 then reads the whole file and
   checks every thread's blocks. (Concurrent collective I/O from several threads on distinct
   communicators hangs natively: MPICH 4.0.2 already in concurrent MPI_File_open / MPI_File_close on
   two dups of MPI_COMM_WORLD, Open MPI 4.1.4 in a mix of collective accesses, MPI_File_sync and
   barriers. io_threads_self has per-thread files on duplicates of MPI_COMM_SELF.) */
// ranks: 2
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"
#include "io_turns.h"

#define NT 3
#define ROUNDS 10
#define BLOCK 4

static int rank, size;
static char dir[256];
static MPI_File shared_fh;
static int errors[NT];

static int value(int r, int t, int round, int i) { return 100000 * r + 10000 * t + 100 * round + i; }


static void* part1(void* arg) {
  int t = (int)(long)arg;
  for (int round = 0; round < ROUNDS; ++round) {
    int out[BLOCK], in[BLOCK];
    for (int i = 0; i < BLOCK; ++i) out[i] = value(rank, t, round, i);
    /* slot (round, rank, t) */
    MPI_Offset off = (MPI_Offset)(((round * size + rank) * NT + t) * BLOCK * sizeof(int));
    MPI_Request req;
    take_turn();
    if (round % 2 == 0) {
      if (MPI_File_write_at(shared_fh, off, out, BLOCK, MPI_INT, MPI_STATUS_IGNORE) != MPI_SUCCESS) ++errors[t];
      memset(in, 0, sizeof in);
      MPI_File_iread_at(shared_fh, off, in, BLOCK, MPI_INT, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_File_iwrite_at(shared_fh, off, out, BLOCK, MPI_INT, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      memset(in, 0, sizeof in);
      if (MPI_File_read_at(shared_fh, off, in, BLOCK, MPI_INT, MPI_STATUS_IGNORE) != MPI_SUCCESS) ++errors[t];
    }
    end_turn();
    for (int i = 0; i < BLOCK; ++i)
      if (in[i] != out[i]) ++errors[t];
  }
  return NULL;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "io_threads");
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int provided;
  MPI_Query_thread(&provided);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);
  if (provided < MPI_THREAD_MULTIPLE) {
    SAY("no MPI_THREAD_MULTIPLE");
    if (rank == 0) rmdir(dir);
    return cov_finish();
  }
  pthread_t th[NT];

  char file[300];
  snprintf(file, sizeof file, "%s/shared", dir);
  MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &shared_fh);
  for (long t = 0; t < NT; ++t) pthread_create(&th[t], NULL, part1, (void*)t);
  for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);
  MPI_File_sync(shared_fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(shared_fh);
  if (rank == 0) {
    int n = ROUNDS * size * NT * BLOCK, *all = malloc(n * sizeof(int)), ok = 1;
    MPI_File_read_at(shared_fh, 0, all, n, MPI_INT, MPI_STATUS_IGNORE);
    for (int k = 0; k < n; ++k) {
      int i = k % BLOCK, slot = k / BLOCK, t = slot % NT, r = (slot / NT) % size, round = slot / NT / size;
      ok &= all[k] == value(r, t, round, i);
    }
    SAY("part 1 whole file ok %d", ok);
    CHECK(ok);
    free(all);
  }
  MPI_File_close(&shared_fh);
  for (int t = 0; t < NT; ++t) {
    SAY("part 1 thread %d errors %d", t, errors[t]);
    CHECK(errors[t] == 0);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_File_delete(file, MPI_INFO_NULL);
    SAY("rmdir %d", rmdir(dir));
  }
  return cov_finish();
}

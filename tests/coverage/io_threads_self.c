/* Coverage: MPI-IO from several threads at once on per-thread files: each of 3 threads per rank
   repeatedly opens its own file on its own duplicate of MPI_COMM_SELF and does individual-pointer,
   explicit-offset, nonblocking, collective and split-collective accesses, sync, get_position,
   get_size, set_size, close and delete at the same time as the others. (One duplicate per thread:
   MPI leaves it to the user to order concurrent collective calls on one communicator, even
   MPI_COMM_SELF, and TSMPI_CHECK reports two threads in MPI_File_open on MPI_COMM_SELF.) All data
   are read back and checked. */
// ranks: 2
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"
#include "io_turns.h"

#define NT 3
#define ROUNDS 10
#define BLOCK 4

static int rank;
static char dir[256];

static int errors[NT];
static MPI_Comm selfs[NT];

static int value(int r, int t, int round, int i) { return 100000 * r + 10000 * t + 100 * round + i; }

/* Each thread's own file on its own one-process communicator: concurrent collective I/O from
   several threads on multi-process communicators hangs natively (MPICH 4.0.2 already in concurrent
   MPI_File_open / MPI_File_close on two dups of MPI_COMM_WORLD; Open MPI 4.1.4 in a mix of
   collective accesses, MPI_File_sync and barriers). */
static void* run(void* arg) {
  int t = (int)(long)arg;
  char file[300];
  snprintf(file, sizeof file, "%s/rank%d.thread%d", dir, rank, t);
  for (int round = 0; round < ROUNDS; ++round) {
    MPI_File fh;
    take_turn();
    if (MPI_File_open(selfs[t], file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
      ++errors[t];
      end_turn();
      return NULL;
    }
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    int out[BLOCK], in[BLOCK];
    for (int i = 0; i < BLOCK; ++i) out[i] = value(rank, t, round, i);
    MPI_Status st;
    MPI_Request req;
    MPI_File_write(fh, out, BLOCK, MPI_INT, &st);                    /* block 0 */
    MPI_File_write_all(fh, out, BLOCK, MPI_INT, &st);                /* block 1 */
    MPI_File_iwrite_at(fh, 2 * BLOCK, out, BLOCK, MPI_INT, &req);    /* block 2 */
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_File_write_at_all_begin(fh, 3 * BLOCK, out, BLOCK, MPI_INT); /* block 3 */
    MPI_File_write_at_all_end(fh, out, &st);
    MPI_File_sync(fh);
    MPI_Offset pos = -1, fsize = -1;
    MPI_File_get_position(fh, &pos);
    MPI_File_get_size(fh, &fsize);
    if (pos != 2 * BLOCK || fsize != (MPI_Offset)(4 * BLOCK * sizeof(int))) ++errors[t];
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    for (int b = 0; b < 4; ++b) {
      memset(in, 0, sizeof in);
      if (b == 0) MPI_File_read(fh, in, BLOCK, MPI_INT, &st);
      if (b == 1) MPI_File_read_all(fh, in, BLOCK, MPI_INT, &st);
      if (b == 2) {
        MPI_File_iread_at(fh, 2 * BLOCK, in, BLOCK, MPI_INT, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
      }
      if (b == 3) {
        MPI_File_read_at_all_begin(fh, 3 * BLOCK, in, BLOCK, MPI_INT);
        MPI_File_read_at_all_end(fh, in, &st);
      }
      for (int i = 0; i < BLOCK; ++i)
        if (in[i] != out[i]) ++errors[t];
    }
    MPI_File_set_size(fh, 0);
    MPI_File_close(&fh);
    end_turn();
  }
  take_turn();
  if (MPI_File_delete(file, MPI_INFO_NULL) != MPI_SUCCESS) ++errors[t];
  end_turn();
  return NULL;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "io_threads_self");
  int provided;
  MPI_Query_thread(&provided);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);
  if (provided < MPI_THREAD_MULTIPLE) {
    SAY("no MPI_THREAD_MULTIPLE");
  } else {
    pthread_t th[NT];
    for (int t = 0; t < NT; ++t) MPI_Comm_dup(MPI_COMM_SELF, &selfs[t]);
    for (long t = 0; t < NT; ++t) pthread_create(&th[t], NULL, run, (void*)t);
    for (int t = 0; t < NT; ++t) pthread_join(th[t], NULL);
    for (int t = 0; t < NT; ++t) {
      SAY("thread %d errors %d", t, errors[t]);
      CHECK(errors[t] == 0);
      MPI_Comm_free(&selfs[t]);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) SAY("rmdir %d", rmdir(dir));
  return cov_finish();
}

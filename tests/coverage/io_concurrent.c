/* Coverage: collectives on a communicator, on a file opened on it and on a window created on it,
   from three threads at once (allowed: MPI-4.0 section 11.6.2, advice to users). Thread A does
   MPI_Allreduce on MPI_COMM_WORLD, thread B MPI_File_write_at_all / MPI_File_read_at_all /
   MPI_File_sync on the file, thread C MPI_Win_fence epochs with MPI_Put on the window. Every
   reduction, read and put is checked; the file is read back whole at the end. */
// ranks: 3
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"

#define ROUNDS 30

static int rank, size, errors[3];
static MPI_File fh;
static MPI_Win win;
static int* wmem;

static void* reduce_thread(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    int v = i + rank, sum = -1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * i + size * (size - 1) / 2) ++errors[0];
  }
  return NULL;
}

static void* file_thread(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; ++i) {
    int v = 100 * i + rank, r = -1;
    MPI_Offset off = (MPI_Offset)((i * size + rank) * sizeof(int));
    MPI_File_write_at_all(fh, off, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    if (i % 10 == 9) MPI_File_sync(fh);
    MPI_File_read_at_all(fh, off, &r, 1, MPI_INT, MPI_STATUS_IGNORE);
    if (r != v) ++errors[1];
  }
  return NULL;
}

static void* window_thread(void* arg) {
  (void)arg;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < ROUNDS; ++i) {
    int v = 1000 * i + rank;
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (wmem[0] != 1000 * i + left) ++errors[2];
  }
  return NULL;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "io_concurrent");
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int provided;
  MPI_Query_thread(&provided);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char dir[256], file[300];
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  snprintf(file, sizeof file, "%s/concurrent", dir);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);
  if (provided < MPI_THREAD_MULTIPLE) {
    SAY("no MPI_THREAD_MULTIPLE");
  } else {
    MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Win_allocate(4096, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wmem, &win);
    wmem[0] = -1;
    pthread_t th[3];
    pthread_create(&th[0], NULL, reduce_thread, NULL);
    pthread_create(&th[1], NULL, file_thread, NULL);
    pthread_create(&th[2], NULL, window_thread, NULL);
    for (int t = 0; t < 3; ++t) pthread_join(th[t], NULL);
    SAY("errors: allreduce %d file %d window %d", errors[0], errors[1], errors[2]);
    CHECK(errors[0] == 0 && errors[1] == 0 && errors[2] == 0);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int n = ROUNDS * size, *all = malloc(n * sizeof(int)), ok = 1;
    MPI_File_read_at_all(fh, 0, all, n, MPI_INT, MPI_STATUS_IGNORE);
    for (int k = 0; k < n; ++k) ok &= all[k] == 100 * (k / size) + k % size;
    SAY("whole file ok %d", ok);
    CHECK(ok);
    free(all);
    MPI_Win_free(&win);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_File_delete(file, MPI_INFO_NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) SAY("rmdir %d", rmdir(dir));
  return cov_finish();
}

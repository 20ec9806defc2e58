/* Coverage: the MPI-4 large-count MPI-IO functions (MPICH 4; Open MPI 4.1 has none, the program
   then only says so): every MPI_File_*_c read and write form (individual and shared pointer,
   explicit offset, ordered, blocking, nonblocking, collective, split collective) and
   MPI_File_get_type_extent_c, with MPI_Count counts and MPI_Get_count_c. Part A uses an
   interleaving view (rank r owns every size-th block of 2 doubles), one block per form; part B a
   common view for the shared-pointer and ordered forms. Everything written is read back. */
// ranks: 2
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"

#if MPI_VERSION >= 4
#define BLOCK 2
#define STEPS 10
static int rank, size;
static double expected(int r, int i) { return 100.0 * (r + 1) + i; }
static double out[STEPS * BLOCK];

static void check_block(const char* what, int step, const double* in, MPI_Status* st) {
  MPI_Count count = -1;
  MPI_Get_count_c(st, MPI_DOUBLE, &count);
  int ok = 1;
  for (int i = 0; i < BLOCK; ++i) ok &= in[i] == expected(rank, step * BLOCK + i);
  SAY("%s: count %lld ok %d", what, (long long)count, ok);
  CHECK(ok && count == BLOCK);
}

/* Shared-pointer records (rank, seq) read by the ranks: all different and well formed. */
static int records_ok(const double* rec, int seq) {
  double all[2 * 16];
  MPI_Allgather(rec, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  int seen = 0;
  for (int r = 0; r < size; ++r) {
    int who = (int)all[2 * r];
    if (who < 0 || who >= size || all[2 * r + 1] != seq || (seen >> who & 1)) return 0;
    seen |= 1 << who;
  }
  return seen == (1 << size) - 1;
}
#endif

int main(int argc, char** argv) {
#if MPI_VERSION >= 4
  rank = cov_init(&argc, &argv, "io_bigcount");
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char dir[256], file[300];
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  snprintf(file, sizeof file, "%s/bigcount", dir);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  MPI_Count ext = -1;
  SAY("get_type_extent_c rc %d", MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &ext));
  SAY("extent of double %lld", (long long)ext);

  /* Part A. */
  MPI_Datatype block, ftype;
  int disp = rank * BLOCK;
  MPI_Type_create_indexed_block(1, BLOCK, &disp, MPI_DOUBLE, &block);
  MPI_Type_create_resized(block, 0, (MPI_Aint)(size * BLOCK * sizeof(double)), &ftype);
  MPI_Type_free(&block);
  MPI_Type_commit(&ftype);
  MPI_File_set_view(fh, 0, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL);
  for (int i = 0; i < STEPS * BLOCK; ++i) out[i] = expected(rank, i);
  double in[BLOCK];
  MPI_Count n = BLOCK;
  MPI_Status st;
  MPI_Request req;
#define OFF(step) ((MPI_Offset)(step) * BLOCK)
#define CLEAR() (in[0] = in[1] = -1)

  SAY("write_c rc %d", MPI_File_write_c(fh, out + 0 * BLOCK, n, MPI_DOUBLE, &st));
  MPI_File_seek(fh, OFF(0), MPI_SEEK_SET);
  CLEAR();
  SAY("read_c rc %d", MPI_File_read_c(fh, in, n, MPI_DOUBLE, &st));
  check_block("read_c", 0, in, &st);

  SAY("write_at_c rc %d", MPI_File_write_at_c(fh, OFF(1), out + 1 * BLOCK, n, MPI_DOUBLE, &st));
  CLEAR();
  SAY("read_at_c rc %d", MPI_File_read_at_c(fh, OFF(1), in, n, MPI_DOUBLE, &st));
  check_block("read_at_c", 1, in, &st);

  MPI_File_seek(fh, OFF(2), MPI_SEEK_SET);
  SAY("iwrite_c rc %d", MPI_File_iwrite_c(fh, out + 2 * BLOCK, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  MPI_File_seek(fh, OFF(2), MPI_SEEK_SET);
  CLEAR();
  SAY("iread_c rc %d", MPI_File_iread_c(fh, in, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  check_block("iread_c", 2, in, &st);

  SAY("iwrite_at_c rc %d", MPI_File_iwrite_at_c(fh, OFF(3), out + 3 * BLOCK, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  CLEAR();
  SAY("iread_at_c rc %d", MPI_File_iread_at_c(fh, OFF(3), in, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  check_block("iread_at_c", 3, in, &st);

  MPI_File_seek(fh, OFF(4), MPI_SEEK_SET);
  SAY("write_all_c rc %d", MPI_File_write_all_c(fh, out + 4 * BLOCK, n, MPI_DOUBLE, &st));
  MPI_File_seek(fh, OFF(4), MPI_SEEK_SET);
  CLEAR();
  SAY("read_all_c rc %d", MPI_File_read_all_c(fh, in, n, MPI_DOUBLE, &st));
  check_block("read_all_c", 4, in, &st);

  SAY("write_at_all_c rc %d", MPI_File_write_at_all_c(fh, OFF(5), out + 5 * BLOCK, n, MPI_DOUBLE, &st));
  CLEAR();
  SAY("read_at_all_c rc %d", MPI_File_read_at_all_c(fh, OFF(5), in, n, MPI_DOUBLE, &st));
  check_block("read_at_all_c", 5, in, &st);

  MPI_File_seek(fh, OFF(6), MPI_SEEK_SET);
  SAY("iwrite_all_c rc %d", MPI_File_iwrite_all_c(fh, out + 6 * BLOCK, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  MPI_File_seek(fh, OFF(6), MPI_SEEK_SET);
  CLEAR();
  SAY("iread_all_c rc %d", MPI_File_iread_all_c(fh, in, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  check_block("iread_all_c", 6, in, &st);

  SAY("iwrite_at_all_c rc %d", MPI_File_iwrite_at_all_c(fh, OFF(7), out + 7 * BLOCK, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  CLEAR();
  SAY("iread_at_all_c rc %d", MPI_File_iread_at_all_c(fh, OFF(7), in, n, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  check_block("iread_at_all_c", 7, in, &st);

  MPI_File_seek(fh, OFF(8), MPI_SEEK_SET);
  SAY("write_all_begin_c rc %d", MPI_File_write_all_begin_c(fh, out + 8 * BLOCK, n, MPI_DOUBLE));
  MPI_File_write_all_end(fh, out + 8 * BLOCK, &st);
  MPI_File_seek(fh, OFF(8), MPI_SEEK_SET);
  CLEAR();
  SAY("read_all_begin_c rc %d", MPI_File_read_all_begin_c(fh, in, n, MPI_DOUBLE));
  MPI_File_read_all_end(fh, in, &st);
  check_block("read_all_begin_c", 8, in, &st);

  SAY("write_at_all_begin_c rc %d", MPI_File_write_at_all_begin_c(fh, OFF(9), out + 9 * BLOCK, n, MPI_DOUBLE));
  MPI_File_write_at_all_end(fh, out + 9 * BLOCK, &st);
  CLEAR();
  SAY("read_at_all_begin_c rc %d", MPI_File_read_at_all_begin_c(fh, OFF(9), in, n, MPI_DOUBLE));
  MPI_File_read_at_all_end(fh, in, &st);
  check_block("read_at_all_begin_c", 9, in, &st);

  /* Part B: a common view after part A's data. */
  MPI_Offset base = (MPI_Offset)(size * STEPS * BLOCK * sizeof(double));
  MPI_File_set_view(fh, base, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
  double ord[16], got[16];
  MPI_Count nord = rank + 1;
  for (int i = 0; i <= rank; ++i) ord[i] = expected(rank, i);
  SAY("write_ordered_c rc %d", MPI_File_write_ordered_c(fh, ord, nord, MPI_DOUBLE, &st));
  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
  memset(got, 0, sizeof got);
  SAY("read_ordered_c rc %d", MPI_File_read_ordered_c(fh, got, nord, MPI_DOUBLE, &st));
  int ok = 1;
  for (int i = 0; i <= rank; ++i) ok &= got[i] == expected(rank, i);
  SAY("read_ordered_c ok %d", ok);
  CHECK(ok);
  MPI_Offset after = size * (size + 1) / 2;
  for (int i = 0; i <= rank; ++i) ord[i] = -expected(rank, i);
  SAY("write_ordered_begin_c rc %d", MPI_File_write_ordered_begin_c(fh, ord, nord, MPI_DOUBLE));
  MPI_File_write_ordered_end(fh, ord, &st);
  MPI_File_seek_shared(fh, after, MPI_SEEK_SET);
  memset(got, 0, sizeof got);
  SAY("read_ordered_begin_c rc %d", MPI_File_read_ordered_begin_c(fh, got, nord, MPI_DOUBLE));
  MPI_File_read_ordered_end(fh, got, &st);
  ok = 1;
  for (int i = 0; i <= rank; ++i) ok &= got[i] == -expected(rank, i);
  SAY("read_ordered_begin_c ok %d", ok);
  CHECK(ok);

  MPI_Offset shared0 = 2 * after;
  MPI_File_seek_shared(fh, shared0, MPI_SEEK_SET);
  double rec[2] = {rank, 1}, rin[2];
  MPI_Count two = 2;
  SAY("write_shared_c rc %d", MPI_File_write_shared_c(fh, rec, two, MPI_DOUBLE, &st));
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_seek_shared(fh, shared0, MPI_SEEK_SET);
  rin[0] = rin[1] = -1;
  SAY("read_shared_c rc %d", MPI_File_read_shared_c(fh, rin, two, MPI_DOUBLE, &st));
  int rok = records_ok(rin, 1);
  SAY("read_shared_c records ok %d", rok);
  CHECK(rok);
  rec[1] = 2;
  SAY("iwrite_shared_c rc %d", MPI_File_iwrite_shared_c(fh, rec, two, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_seek_shared(fh, shared0 + 2 * size, MPI_SEEK_SET);
  rin[0] = rin[1] = -1;
  SAY("iread_shared_c rc %d", MPI_File_iread_shared_c(fh, rin, two, MPI_DOUBLE, &req));
  MPI_Wait(&req, &st);
  rok = records_ok(rin, 2);
  SAY("iread_shared_c records ok %d", rok);
  CHECK(rok);

  MPI_Type_free(&ftype);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_File_delete(file, MPI_INFO_NULL);
    SAY("rmdir %d", rmdir(dir));
  }
#else
  int rank = cov_init(&argc, &argv, "io_bigcount");
  SAY("MPI %d has no large-count MPI-IO functions", MPI_VERSION);
  (void)rank;
#endif
  return cov_finish();
}

/* Coverage: MPI-IO collective data access through an interleaving view: MPI_File_write_all /
   MPI_File_read_all, MPI_File_write_at_all / MPI_File_read_at_all, their nonblocking forms
   (MPI_File_iwrite_all, MPI_File_iread_all, MPI_File_iwrite_at_all, MPI_File_iread_at_all) and
   split-collective forms (MPI_File_write_all_begin / _end, MPI_File_read_all_begin / _end,
   MPI_File_write_at_all_begin / _end, MPI_File_read_at_all_begin / _end). Each step writes its own
   blocks, reads them back and checks them; at the end every rank reads the whole file through a
   byte view with MPI_File_read_at_all and checks the layout. */
// ranks: 3
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"

#define BLOCK 3
#define NBLOCKS 8 /* steps: 0-1 write_all, 2 write_at_all, 3 iwrite_all, 4 iwrite_at_all, 5-6 split, 7 split at */

static int rank, size;
static int expected(int r, int i) { return 10000 * (r + 1) + i; }

static int check_blocks(const int* in, int first, int n) {
  int ok = 1;
  for (int i = 0; i < n * BLOCK; ++i) ok &= in[i] == expected(rank, first * BLOCK + i);
  CHECK(ok);
  return ok;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "io_coll");
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char dir[256], file[300];
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  snprintf(file, sizeof file, "%s/coll", dir);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  /* rank r owns every size-th block of BLOCK ints, starting with block r */
  MPI_Datatype block, ftype;
  int disp = rank * BLOCK;
  MPI_Type_create_indexed_block(1, BLOCK, &disp, MPI_INT, &block);
  MPI_Type_create_resized(block, 0, (MPI_Aint)(size * BLOCK * sizeof(int)), &ftype);
  MPI_Type_free(&block);
  MPI_Type_commit(&ftype);
  MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL);

  int out[NBLOCKS * BLOCK], in[NBLOCKS * BLOCK], count;
  for (int i = 0; i < NBLOCKS * BLOCK; ++i) out[i] = expected(rank, i);
  MPI_Status st;
  MPI_Request req;
  MPI_Offset pos;

  /* Blocks 0-1: individual pointer. */
  SAY("write_all rc %d", MPI_File_write_all(fh, out, 2 * BLOCK, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_File_get_position(fh, &pos);
  SAY("write_all count %d position %lld", count, (long long)pos);
  MPI_File_seek(fh, 0, MPI_SEEK_SET);
  memset(in, 0, sizeof in);
  SAY("read_all rc %d", MPI_File_read_all(fh, in, 2 * BLOCK, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("read_all count %d ok %d", count, check_blocks(in, 0, 2));

  /* Block 2: explicit offset; rank 0 also does a zero-length collective read. */
  SAY("write_at_all rc %d", MPI_File_write_at_all(fh, 2 * BLOCK, out + 2 * BLOCK, BLOCK, MPI_INT, &st));
  memset(in, 0, sizeof in);
  SAY("read_at_all rc %d", MPI_File_read_at_all(fh, 2 * BLOCK, in, BLOCK, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("read_at_all count %d ok %d", count, check_blocks(in, 2, 1));
  MPI_File_read_at_all(fh, 0, in, rank == 0 ? 0 : BLOCK, MPI_INT, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("uneven read_at_all count %d", count);

  /* Block 3: nonblocking collective with the individual pointer (at block 2 after read_all). */
  MPI_File_seek(fh, 3 * BLOCK, MPI_SEEK_SET);
  SAY("iwrite_all rc %d", MPI_File_iwrite_all(fh, out + 3 * BLOCK, BLOCK, MPI_INT, &req));
  MPI_Wait(&req, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_File_get_position(fh, &pos);
  SAY("iwrite_all count %d position %lld", count, (long long)pos);
  MPI_File_seek(fh, 3 * BLOCK, MPI_SEEK_SET);
  memset(in, 0, sizeof in);
  SAY("iread_all rc %d", MPI_File_iread_all(fh, in, BLOCK, MPI_INT, &req));
  int flag = 0;
  while (!flag) MPI_Test(&req, &flag, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("iread_all count %d ok %d", count, check_blocks(in, 3, 1));

  /* Block 4: nonblocking collective at an explicit offset. */
  SAY("iwrite_at_all rc %d", MPI_File_iwrite_at_all(fh, 4 * BLOCK, out + 4 * BLOCK, BLOCK, MPI_INT, &req));
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  memset(in, 0, sizeof in);
  SAY("iread_at_all rc %d", MPI_File_iread_at_all(fh, 4 * BLOCK, in, BLOCK, MPI_INT, &req));
  MPI_Wait(&req, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("iread_at_all count %d ok %d", count, check_blocks(in, 4, 1));

  /* Blocks 5-6: split collective with the individual pointer. */
  MPI_File_seek(fh, 5 * BLOCK, MPI_SEEK_SET);
  SAY("write_all_begin rc %d", MPI_File_write_all_begin(fh, out + 5 * BLOCK, 2 * BLOCK, MPI_INT));
  SAY("write_all_end rc %d", MPI_File_write_all_end(fh, out + 5 * BLOCK, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_File_get_position(fh, &pos);
  SAY("write_all_end count %d position %lld", count, (long long)pos);
  MPI_File_seek(fh, 5 * BLOCK, MPI_SEEK_SET);
  memset(in, 0, sizeof in);
  SAY("read_all_begin rc %d", MPI_File_read_all_begin(fh, in, 2 * BLOCK, MPI_INT));
  SAY("read_all_end rc %d", MPI_File_read_all_end(fh, in, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("read_all_end count %d ok %d", count, check_blocks(in, 5, 2));

  /* Block 7: split collective at an explicit offset. */
  SAY("write_at_all_begin rc %d", MPI_File_write_at_all_begin(fh, 7 * BLOCK, out + 7 * BLOCK, BLOCK, MPI_INT));
  SAY("write_at_all_end rc %d", MPI_File_write_at_all_end(fh, out + 7 * BLOCK, &st));
  memset(in, 0, sizeof in);
  SAY("read_at_all_begin rc %d", MPI_File_read_at_all_begin(fh, 7 * BLOCK, in, BLOCK, MPI_INT));
  SAY("read_at_all_end rc %d", MPI_File_read_at_all_end(fh, in, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("read_at_all_end count %d ok %d", count, check_blocks(in, 7, 1));

  /* The whole file, at every rank (sync-barrier-sync makes the others' data visible). */
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  int n = size * NBLOCKS * BLOCK, *all = malloc(n * sizeof(int));
  MPI_File_read_at_all(fh, 0, all, n * (int)sizeof(int), MPI_BYTE, &st);
  MPI_Get_count(&st, MPI_BYTE, &count);
  int ok = 1;
  for (int k = 0; k < n; ++k) {
    int b = k / BLOCK, r = b % size, i = (b / size) * BLOCK + k % BLOCK;
    ok &= all[k] == expected(r, i);
  }
  SAY("whole file %d bytes ok %d", count, ok);
  CHECK(ok);
  free(all);
  MPI_Type_free(&ftype);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_File_delete(file, MPI_INFO_NULL);
    SAY("rmdir %d", rmdir(dir));
  }
  return cov_finish();
}

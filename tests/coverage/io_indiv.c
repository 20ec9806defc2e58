/* Coverage: MPI-IO independent data access through a file view: MPI_File_set_view /
   MPI_File_get_view (displacement, etype, an interleaving filetype per rank), individual file
   pointers (MPI_File_write / MPI_File_read, MPI_File_seek with SEEK_SET / SEEK_CUR / SEEK_END,
   MPI_File_get_position, MPI_File_get_byte_offset), explicit offsets (MPI_File_write_at /
   MPI_File_read_at) and their nonblocking forms (MPI_File_iwrite, MPI_File_iread,
   MPI_File_iwrite_at, MPI_File_iread_at) completed with MPI_Wait, MPI_Test and MPI_Waitall. Data are
   read back through the view and the whole file is checked byte by byte at rank 0. */
// ranks: 3
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"

#define BLOCK 2
#define NBLOCKS 8

static int expected(int r, int i) { return 1000 * r + i; } /* rank r's i-th int in its view */

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "io_indiv"), size, count;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char dir[256], file[300];
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  snprintf(file, sizeof file, "%s/indiv", dir);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_File fh;
  SAY("open rc %d", MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

  /* The view: a 16-byte header, then blocks of BLOCK ints, rank r owning every size-th block. */
  MPI_Datatype block, ftype;
  int disp = rank * BLOCK;
  MPI_Type_create_indexed_block(1, BLOCK, &disp, MPI_INT, &block);
  MPI_Type_create_resized(block, 0, (MPI_Aint)(size * BLOCK * sizeof(int)), &ftype);
  MPI_Type_commit(&ftype);
  MPI_Type_free(&block);
  SAY("set_view rc %d", MPI_File_set_view(fh, 16, MPI_INT, ftype, "native", MPI_INFO_NULL));
  MPI_Offset vdisp = -1;
  MPI_Datatype etype, vtype;
  char rep[MPI_MAX_DATAREP_STRING];
  SAY("get_view rc %d", MPI_File_get_view(fh, &vdisp, &etype, &vtype, rep));
  MPI_Aint lb, ext;
  int tsize;
  MPI_Type_get_extent(vtype, &lb, &ext);
  MPI_Type_size(vtype, &tsize);
  SAY("view disp %lld etype int %d datarep %s filetype extent %ld size %d", (long long)vdisp, etype == MPI_INT, rep,
      (long)ext, tsize);
  MPI_Type_free(&vtype);

  /* Individual file pointer: write 3 blocks, check position and byte offset, read back. */
  int out[NBLOCKS * BLOCK], in[NBLOCKS * BLOCK];
  for (int i = 0; i < NBLOCKS * BLOCK; ++i) out[i] = expected(rank, i);
  MPI_Status st;
  SAY("write rc %d", MPI_File_write(fh, out, 3 * BLOCK, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_Offset pos = -1, byte = -1;
  MPI_File_get_position(fh, &pos);
  MPI_File_get_byte_offset(fh, pos, &byte);
  SAY("wrote %d, position %lld byte offset %lld", count, (long long)pos, (long long)byte);
  SAY("seek set rc %d", MPI_File_seek(fh, 0, MPI_SEEK_SET));
  memset(in, 0, sizeof in);
  SAY("read rc %d", MPI_File_read(fh, in, 3 * BLOCK, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  int ok = 1;
  for (int i = 0; i < 3 * BLOCK; ++i) ok &= in[i] == expected(rank, i);
  SAY("read %d ok %d", count, ok);
  CHECK(ok && count == 3 * BLOCK);
  MPI_File_seek(fh, -1, MPI_SEEK_CUR);
  MPI_File_get_position(fh, &pos);
  int one = -1;
  MPI_File_read(fh, &one, 1, MPI_INT, MPI_STATUS_IGNORE);
  SAY("seek cur -1: position %lld value %d", (long long)pos, one);
  CHECK(one == expected(rank, 3 * BLOCK - 1));

  /* Explicit offsets: blocks 3 and 4. */
  SAY("write_at rc %d", MPI_File_write_at(fh, 3 * BLOCK, out + 3 * BLOCK, 2 * BLOCK, MPI_INT, &st));
  memset(in, 0, sizeof in);
  SAY("read_at rc %d", MPI_File_read_at(fh, 3 * BLOCK, in, 2 * BLOCK, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  ok = 1;
  for (int i = 0; i < 2 * BLOCK; ++i) ok &= in[i] == expected(rank, 3 * BLOCK + i);
  SAY("read_at %d ok %d", count, ok);
  CHECK(ok);
  MPI_File_get_position(fh, &pos);
  SAY("explicit offsets left the position at %lld", (long long)pos);

  /* Nonblocking individual pointer: block 5 (the pointer is at 3 blocks; seek to 5). */
  MPI_File_seek(fh, 5 * BLOCK, MPI_SEEK_SET);
  MPI_Request req[2];
  SAY("iwrite rc %d", MPI_File_iwrite(fh, out + 5 * BLOCK, BLOCK, MPI_INT, &req[0]));
  MPI_Wait(&req[0], &st);
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_File_get_position(fh, &pos);
  SAY("iwrite wrote %d, position %lld", count, (long long)pos);
  MPI_File_seek(fh, 5 * BLOCK, MPI_SEEK_SET);
  memset(in, 0, sizeof in);
  SAY("iread rc %d", MPI_File_iread(fh, in, BLOCK, MPI_INT, &req[0]));
  int flag = 0;
  while (!flag) MPI_Test(&req[0], &flag, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("iread %d: %d %d", count, in[0], in[1]);
  CHECK(in[0] == expected(rank, 5 * BLOCK) && in[1] == expected(rank, 5 * BLOCK + 1));

  /* Nonblocking explicit offsets: blocks 6 and 7 written by two requests, read back by two. */
  SAY("iwrite_at rc %d", MPI_File_iwrite_at(fh, 6 * BLOCK, out + 6 * BLOCK, BLOCK, MPI_INT, &req[0]));
  MPI_File_iwrite_at(fh, 7 * BLOCK, out + 7 * BLOCK, BLOCK, MPI_INT, &req[1]);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  memset(in, 0, sizeof in);
  SAY("iread_at rc %d", MPI_File_iread_at(fh, 6 * BLOCK, in, BLOCK, MPI_INT, &req[0]));
  MPI_File_iread_at(fh, 7 * BLOCK, in + BLOCK, BLOCK, MPI_INT, &req[1]);
  MPI_Status sts[2];
  MPI_Waitall(2, req, sts);
  MPI_Get_count(&sts[1], MPI_INT, &count);
  ok = 1;
  for (int i = 0; i < 2 * BLOCK; ++i) ok &= in[i] == expected(rank, 6 * BLOCK + i);
  SAY("iread_at ok %d count %d", ok, count);
  CHECK(ok);

  /* SEEK_END after everyone wrote: the end of the file in view units (Open MPI 4.1.4's ompio puts
     the pointer at 2 here, MPICH at 16). */
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_seek(fh, 0, MPI_SEEK_END);
  MPI_File_get_position(fh, &pos);
  MPI_File_get_byte_offset(fh, pos, &byte);
  MPI_Offset fsize;
  MPI_File_get_size(fh, &fsize);
  SAY("seek end: position %lld byte offset %lld, file size %lld", (long long)pos, (long long)byte,
      (long long)fsize);

  /* The whole file through a byte view at rank 0. */
  MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  if (rank == 0) {
    int n = size * NBLOCKS * BLOCK, *all = malloc(n * sizeof(int));
    MPI_File_read_at(fh, 16, all, n * (int)sizeof(int), MPI_BYTE, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    ok = 1;
    for (int k = 0; k < n; ++k) {
      int b = k / BLOCK, r = b % size, i = (b / size) * BLOCK + k % BLOCK;
      ok &= all[k] == expected(r, i);
    }
    SAY("whole file: %d bytes, interleaving ok %d", count, ok);
    CHECK(ok);
    free(all);
  }
  MPI_Type_free(&ftype);
  SAY("close rc %d", MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    SAY("delete rc %d", MPI_File_delete(file, MPI_INFO_NULL));
    SAY("rmdir %d", rmdir(dir));
  }
  return cov_finish();
}

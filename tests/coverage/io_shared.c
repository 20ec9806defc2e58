/* Coverage: MPI-IO shared file pointer and ordered access: MPI_File_write_shared /
   MPI_File_read_shared, MPI_File_iwrite_shared / MPI_File_iread_shared, MPI_File_seek_shared
   (SEEK_SET, SEEK_CUR, SEEK_END), MPI_File_get_position_shared, MPI_File_write_ordered /
   MPI_File_read_ordered and their split forms (_begin / _end). The order of shared-pointer
   accesses between ranks depends on timing: what is recorded is that every rank's record landed
   once and whole, and that reads return whole records, each exactly once; ordered accesses are
   checked value by value. */
// ranks: 3
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"

#define REC 4 /* ints per shared-pointer record: rank, seq, rank, seq */

static int rank, size;

/* Records in buf[0..n*REC) must be exactly one per rank of sequence seq; returns 1 if so. */
static int records_ok(const int* buf, int n, int seq) {
  int seen = 0;
  for (int k = 0; k < n; ++k) {
    const int* r = buf + k * REC;
    if (r[0] < 0 || r[0] >= size || r[1] != seq || r[2] != r[0] || r[3] != seq || (seen >> r[0] & 1)) {
      CHECK(!"well-formed records");
      return 0;
    }
    seen |= 1 << r[0];
  }
  CHECK(seen == (1 << n) - 1);
  return seen == (1 << n) - 1;
}

/* The records the ranks read (one each) are all different and well formed. */
static int reads_ok(const int* rec, int seq) {
  int* all = malloc(size * REC * sizeof(int));
  MPI_Allgather(rec, REC, MPI_INT, all, REC, MPI_INT, MPI_COMM_WORLD);
  int ok = records_ok(all, size, seq);
  free(all);
  return ok;
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "io_shared");
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char dir[256], file[300];
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  snprintf(file, sizeof file, "%s/shared", dir);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_File fh;
  SAY("open rc %d", MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  MPI_Offset pos = -1;
  MPI_File_get_position_shared(fh, &pos);
  SAY("initial shared position %lld", (long long)pos);
  MPI_Barrier(MPI_COMM_WORLD); /* nobody moves the shared pointer before all have read it */

  /* Blocking shared-pointer writes, then reads from the start. */
  int rec[REC] = {rank, 1, rank, 1}, in[REC], count;
  MPI_Status st;
  SAY("write_shared rc %d", MPI_File_write_shared(fh, rec, REC, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("write_shared count %d", count);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_get_position_shared(fh, &pos);
  SAY("shared position after write_shared %lld", (long long)pos);
  MPI_Barrier(MPI_COMM_WORLD); /* nobody moves the shared pointer before all have read it */
  int* all = malloc(4 * size * REC * sizeof(int));
  MPI_File_read_at(fh, 0, all, size * REC, MPI_INT, &st);
  SAY("file holds every rank's record once %d", records_ok(all, size, 1));
  SAY("seek_shared rc %d", MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  memset(in, -1, sizeof in);
  SAY("read_shared rc %d", MPI_File_read_shared(fh, in, REC, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("read_shared count %d, records distinct and whole %d", count, reads_ok(in, 1));

  /* Nonblocking shared-pointer writes after SEEK_END, then reads after SEEK_CUR. */
  MPI_File_seek_shared(fh, 0, MPI_SEEK_END);
  MPI_File_get_position_shared(fh, &pos);
  SAY("shared position after seek end %lld", (long long)pos);
  MPI_Barrier(MPI_COMM_WORLD); /* nobody moves the shared pointer before all have read it */
  int rec2[REC] = {rank, 2, rank, 2};
  MPI_Request req;
  SAY("iwrite_shared rc %d", MPI_File_iwrite_shared(fh, rec2, REC, MPI_INT, &req));
  MPI_Wait(&req, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("iwrite_shared count %d", count);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_read_at(fh, size * REC, all, size * REC, MPI_INT, &st);
  SAY("file holds every rank's second record once %d", records_ok(all, size, 2));
  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
  MPI_File_seek_shared(fh, size * REC, MPI_SEEK_CUR);
  MPI_File_get_position_shared(fh, &pos);
  SAY("shared position after seek cur %lld", (long long)pos);
  MPI_Barrier(MPI_COMM_WORLD); /* nobody moves the shared pointer before all have read it */
  memset(in, -1, sizeof in);
  SAY("iread_shared rc %d", MPI_File_iread_shared(fh, in, REC, MPI_INT, &req));
  int flag = 0;
  while (!flag) MPI_Test(&req, &flag, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("iread_shared count %d, records distinct and whole %d", count, reads_ok(in, 2));
  MPI_Barrier(MPI_COMM_WORLD);

  /* Ordered: rank r writes r+1 ints after the two shared-pointer rounds. */
  MPI_File_seek_shared(fh, 2 * size * REC, MPI_SEEK_SET);
  int ord[8], nord = rank + 1;
  for (int i = 0; i < nord; ++i) ord[i] = 100 * rank + i;
  SAY("write_ordered rc %d", MPI_File_write_ordered(fh, ord, nord, MPI_INT, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_File_get_position_shared(fh, &pos);
  SAY("write_ordered count %d, shared position %lld", count, (long long)pos);
  MPI_Barrier(MPI_COMM_WORLD); /* nobody moves the shared pointer before all have read it */
  MPI_File_seek_shared(fh, 2 * size * REC, MPI_SEEK_SET);
  int got[8];
  memset(got, -1, sizeof got);
  SAY("read_ordered rc %d", MPI_File_read_ordered(fh, got, nord, MPI_INT, &st));
  int ok = 1;
  for (int i = 0; i < nord; ++i) ok &= got[i] == 100 * rank + i;
  SAY("read_ordered ok %d", ok);
  CHECK(ok);

  /* Split ordered: the same again after the first ordered block. */
  MPI_Offset after = 2 * size * REC + size * (size + 1) / 2;
  MPI_File_seek_shared(fh, after, MPI_SEEK_SET);
  for (int i = 0; i < nord; ++i) ord[i] = 1000 + 100 * rank + i;
  SAY("write_ordered_begin rc %d", MPI_File_write_ordered_begin(fh, ord, nord, MPI_INT));
  SAY("write_ordered_end rc %d", MPI_File_write_ordered_end(fh, ord, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  SAY("write_ordered_end count %d", count);
  MPI_File_seek_shared(fh, after, MPI_SEEK_SET);
  memset(got, -1, sizeof got);
  SAY("read_ordered_begin rc %d", MPI_File_read_ordered_begin(fh, got, nord, MPI_INT));
  SAY("read_ordered_end rc %d", MPI_File_read_ordered_end(fh, got, &st));
  MPI_Get_count(&st, MPI_INT, &count);
  ok = 1;
  for (int i = 0; i < nord; ++i) ok &= got[i] == 1000 + 100 * rank + i;
  SAY("split read_ordered count %d ok %d", count, ok);
  CHECK(ok);

  MPI_File_sync(fh); /* sync-barrier-sync: the others' data visible to rank 0's read below */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_get_position_shared(fh, &pos);
  MPI_Offset fsize;
  MPI_File_get_size(fh, &fsize);
  MPI_Barrier(MPI_COMM_WORLD); /* nobody moves the shared pointer before all have read it */
  SAY("final shared position %lld, file size %lld", (long long)pos, (long long)fsize);
  if (rank == 0) {
    int n = (int)(fsize / sizeof(int));
    int* whole = malloc(fsize);
    MPI_File_read_at(fh, 0, whole, n, MPI_INT, &st);
    ok = records_ok(whole, size, 1) && records_ok(whole + size * REC, size, 2);
    int* o = whole + 2 * size * REC;
    for (int round = 0; round < 2; ++round)
      for (int r = 0; r < size; ++r)
        for (int i = 0; i <= r; ++i) ok &= *o++ == 1000 * round + 100 * r + i;
    SAY("whole file ok %d", ok);
    CHECK(ok);
    free(whole);
  }
  free(all);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_File_delete(file, MPI_INFO_NULL);
    SAY("rmdir %d", rmdir(dir));
  }
  return cov_finish();
}

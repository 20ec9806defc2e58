/* Coverage: MPI-IO file objects. MPI_File_open / MPI_File_close / MPI_File_delete, set/get size,
   preallocate, info, amode, group, atomicity, sync, type extent, Fortran handle conversion, error
   handlers (MPI_File_call_errhandler, an error raised by the MPI, the default handler on
   MPI_FILE_NULL), MPI_MODE_DELETE_ON_CLOSE, a file used after its communicator was freed. Files
   live in a per-run directory /tmp/tsmpi-cov-io-PID (PID of rank 0), removed at the end. Sizes,
   flags and error classes are recorded, and data written is read back. */
// ranks: 3
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"

static char dir[256];
static void make_dir(void) {
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);
}
static const char* path(const char* name) {
  static char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return p;
}
static int cls(int code) {
  int c = -1;
  MPI_Error_class(code, &c);
  return c;
}

static int handler_calls = 0, handler_class = -1;
static void file_handler(MPI_File* fh, int* code, ...) {
  (void)fh;
  ++handler_calls;
  handler_class = cls(*code);
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "io_file"), size, rc, flag;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  make_dir();

  /* Open with info; amode, group, info. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "access_style", "read_mostly");
  MPI_File fh;
  rc = MPI_File_open(MPI_COMM_WORLD, path("a"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
  SAY("open rc %d", rc);
  MPI_Info_free(&info);
  int amode = -1;
  MPI_File_get_amode(fh, &amode);
  SAY("amode is CREATE|RDWR %d", amode == (MPI_MODE_CREATE | MPI_MODE_RDWR));
  MPI_Group fgroup, wgroup;
  SAY("get_group rc %d", MPI_File_get_group(fh, &fgroup));
  MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
  int cmp = -1;
  MPI_Group_compare(fgroup, wgroup, &cmp);
  SAY("file group ident %d", cmp == MPI_IDENT);
  MPI_Group_free(&fgroup);
  MPI_Group_free(&wgroup);
  MPI_Info got;
  SAY("get_info rc %d", MPI_File_get_info(fh, &got));
  int nkeys = -1;
  MPI_Info_get_nkeys(got, &nkeys);
  CHECK(nkeys >= 0);
  MPI_Info_free(&got);
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", "1048576");
  SAY("set_info rc %d", MPI_File_set_info(fh, info));
  MPI_Info_free(&info);
  MPI_File_get_info(fh, &got);
  char value[MPI_MAX_INFO_VAL];
  MPI_Info_get(got, "cb_buffer_size", MPI_MAX_INFO_VAL - 1, value, &flag);
  SAY("cb_buffer_size flag %d value %s", flag, flag ? value : "-");
  MPI_Info_free(&got);

  /* Sizes. */
  MPI_Offset fsize = -1;
  /* a barrier after each query: the next collective may change the size at another rank first */
  MPI_File_get_size(fh, &fsize);
  SAY("new file size %lld", (long long)fsize);
  MPI_Barrier(MPI_COMM_WORLD);
  SAY("set_size rc %d", MPI_File_set_size(fh, 1000));
  MPI_File_get_size(fh, &fsize);
  SAY("size after set_size %lld", (long long)fsize);
  MPI_Barrier(MPI_COMM_WORLD);
  SAY("preallocate rc %d", MPI_File_preallocate(fh, 4000));
  MPI_File_get_size(fh, &fsize);
  SAY("size after preallocate %lld", (long long)fsize);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_set_size(fh, 64);
  MPI_File_get_size(fh, &fsize);
  SAY("size after shrinking %lld", (long long)fsize);

  /* Atomicity, sync, type extent. */
  flag = -1;
  MPI_File_get_atomicity(fh, &flag);
  SAY("atomicity %d", flag);
  SAY("set_atomicity rc %d", MPI_File_set_atomicity(fh, 1));
  MPI_File_get_atomicity(fh, &flag);
  SAY("atomicity now %d", flag);
  int val = 1000 + rank;
  MPI_File_write_at(fh, rank * sizeof(int), &val, 1, MPI_INT, MPI_STATUS_IGNORE);
  SAY("sync rc %d", MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  int back = -1;
  MPI_File_read_at(fh, ((rank + 1) % size) * sizeof(int), &back, 1, MPI_INT, MPI_STATUS_IGNORE);
  SAY("read neighbour's int %d", back);
  CHECK(back == 1000 + (rank + 1) % size);
  MPI_File_set_atomicity(fh, 0);
  MPI_Aint extent = -1;
  MPI_Datatype vec;
  MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  MPI_File_get_type_extent(fh, MPI_INT, &extent);
  SAY("type extent int %ld", (long)extent);
  MPI_File_get_type_extent(fh, vec, &extent);
  SAY("type extent vector %ld", (long)extent);
  MPI_Type_free(&vec);

  /* Fortran handles. */
  MPI_Fint ffh = MPI_File_c2f(fh);
  CHECK(MPI_File_f2c(ffh) == fh);

  /* Error handlers on the file. */
  MPI_Errhandler eh, cur;
  SAY("create_errhandler rc %d", MPI_File_create_errhandler(file_handler, &eh));
  MPI_File_get_errhandler(fh, &cur);
  SAY("default file errhandler is ERRORS_RETURN %d", cur == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&cur);
  SAY("set_errhandler rc %d", MPI_File_set_errhandler(fh, eh));
  SAY("get_errhandler rc %d", MPI_File_get_errhandler(fh, &cur));
  CHECK(cur == eh);
  MPI_Errhandler_free(&cur);
  rc = MPI_File_call_errhandler(fh, MPI_ERR_IO);
  SAY("call_errhandler rc %d, handler calls %d class is ERR_IO %d", rc, handler_calls, handler_class == MPI_ERR_IO);
  MPI_File_close(&fh);
  CHECK(fh == MPI_FILE_NULL);

  /* A read-only open: writing is an error raised through the file's handler. */
  MPI_File_open(MPI_COMM_WORLD, path("a"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  MPI_File_set_errhandler(fh, eh);
  rc = MPI_File_write_at(fh, 0, &val, 1, MPI_INT, MPI_STATUS_IGNORE);
  SAY("write on a read-only file: class ERR_READ_ONLY or ERR_ACCESS %d, handler calls %d same class %d",
      cls(rc) == MPI_ERR_READ_ONLY || cls(rc) == MPI_ERR_ACCESS, handler_calls, handler_class == cls(rc));
  MPI_File_close(&fh);

  /* The default handler (MPI_FILE_NULL's) sees errors of MPI_File_open. */
  MPI_File_set_errhandler(MPI_FILE_NULL, eh);
  rc = MPI_File_open(MPI_COMM_WORLD, path("missing"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  SAY("open of a missing file: class NO_SUCH_FILE %d, handler calls %d same class %d",
      cls(rc) == MPI_ERR_NO_SUCH_FILE, handler_calls, handler_class == cls(rc));
  MPI_File_get_errhandler(MPI_FILE_NULL, &cur);
  SAY("MPI_FILE_NULL's handler is ours %d", cur == eh);
  MPI_Errhandler_free(&cur);
  MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);
  CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);

  /* A file outlives the communicator it was opened on. */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  rc = MPI_File_open(dup, path("c"), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
  MPI_Comm_free(&dup);
  val = 2000 + rank;
  MPI_File_write_at_all(fh, rank * sizeof(int), &val, 1, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  int all[8] = {0};
  MPI_File_read_at_all(fh, 0, all, size, MPI_INT, MPI_STATUS_IGNORE);
  int gsize = -1;
  MPI_File_get_group(fh, &fgroup);
  MPI_Group_size(fgroup, &gsize);
  MPI_Group_free(&fgroup);
  SAY("file on a freed communicator: open rc %d, read %d %d %d, group size %d", rc, all[0], all[1], all[2], gsize);
  for (int r = 0; r < size; ++r) CHECK(all[r] == 2000 + r);
  SAY("close rc %d", MPI_File_close(&fh));

  /* MPI_MODE_DELETE_ON_CLOSE and MPI_File_delete. */
  MPI_File_open(MPI_COMM_WORLD, path("b"), MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                MPI_INFO_NULL, &fh);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  SAY("b exists after close %d", access(path("b"), F_OK) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    SAY("delete rc %d", MPI_File_delete(path("a"), MPI_INFO_NULL));
    rc = MPI_File_delete(path("a"), MPI_INFO_NULL);
    SAY("second delete class NO_SUCH_FILE %d", cls(rc) == MPI_ERR_NO_SUCH_FILE);
    SAY("rmdir %d", rmdir(dir));
  }
  return cov_finish();
}

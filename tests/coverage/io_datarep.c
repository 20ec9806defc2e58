/* Coverage: MPI_Register_datarep (and MPI_Register_datarep_c on MPI 4). What the MPIs support
   natively: MPICH 4.0.2 (ROMIO) registers a representation without conversion functions
   (MPI_CONVERSION_FN_NULL), refuses conversion functions with MPI_ERR_CONVERSION and a second
   registration of a name with MPI_ERR_DUP_DATAREP, and accepts no representation but "native" in
   MPI_File_set_view (MPI_ERR_UNSUPPORTED_DATAREP). Open MPI 4.1.4 (ompio) registers nothing
   (MPI_ERR_OTHER without conversion functions, MPI_ERR_CONVERSION with them). The error classes
   are recorded; the file written through "native" is read back. */
// ranks: 2
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"

static const char* class_name(int code) {
  int c = -1;
  MPI_Error_class(code, &c);
  switch (c) {
    case MPI_SUCCESS: return "SUCCESS";
    case MPI_ERR_OTHER: return "ERR_OTHER";
    case MPI_ERR_CONVERSION: return "ERR_CONVERSION";
    case MPI_ERR_DUP_DATAREP: return "ERR_DUP_DATAREP";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "ERR_UNSUPPORTED_DATAREP";
    case MPI_ERR_ARG: return "ERR_ARG";
    default: return "another class";
  }
}

static int extent_calls = 0;
static int extent_fn(MPI_Datatype type, MPI_Aint* extent, void* extra) {
  (void)extra;
  ++extent_calls;
  MPI_Aint lb;
  return MPI_Type_get_extent(type, &lb, extent);
}
static int convert(void* userbuf, MPI_Datatype type, int count, void* filebuf, MPI_Offset position, void* extra) {
  (void)type, (void)extra;
  memcpy((int*)userbuf + position, filebuf, (size_t)count * sizeof(int));
  return MPI_SUCCESS;
}
#if MPI_VERSION >= 4
static int extent_fn_c(MPI_Datatype type, MPI_Aint* extent, void* extra) {
  (void)extra;
  ++extent_calls;
  MPI_Aint lb;
  return MPI_Type_get_extent(type, &lb, extent);
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "io_datarep");
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char dir[256], file[300];
  snprintf(dir, sizeof dir, "/tmp/tsmpi-cov-io-%d", pid);
  snprintf(file, sizeof file, "%s/datarep", dir);
  if (rank == 0) mkdir(dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);

  int rc = MPI_Register_datarep("cov_rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_fn, NULL);
  SAY("register without conversions: %s", class_name(rc));
  rc = MPI_Register_datarep("cov_rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_fn, NULL);
  SAY("register again: %s", class_name(rc));
  rc = MPI_Register_datarep("cov_rep_conv", convert, convert, extent_fn, NULL);
  SAY("register with conversions: %s", class_name(rc));
#if MPI_VERSION >= 4
  rc = MPI_Register_datarep_c("cov_rep_c", MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C, extent_fn_c, NULL);
  SAY("register_c without conversions: %s", class_name(rc));
#endif

  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                &fh);
  rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "cov_rep", MPI_INFO_NULL);
  SAY("set_view with cov_rep: %s", class_name(rc));
  MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  int v[2] = {10 + rank, 20 + rank}, r[4] = {-1, -1, -1, -1};
  MPI_File_write_at_all(fh, 2 * rank, v, 2, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_sync(fh); /* sync-barrier-sync: the others' data visible (MPI consistency semantics) */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  MPI_File_read_at_all(fh, 0, r, 4, MPI_INT, MPI_STATUS_IGNORE);
  SAY("read back %d %d %d %d", r[0], r[1], r[2], r[3]);
  CHECK(r[0] == 10 && r[1] == 20 && r[2] == 11 && r[3] == 21);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) SAY("rmdir %d", rmdir(dir));
  return cov_finish();
}

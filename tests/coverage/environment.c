/* Coverage: inquiry and environment functions. Values that depend on the machine or the run
   (processor name, times) are checked, not printed. */
// ranks: 2
#include <string.h>

#include "coverage.h"

int main(int argc, char** argv) {
  int flag = -1, provided = -1, len = 0;
  MPI_Initialized(&flag);
  int initialized_before = flag;
  int rank = cov_init(&argc, &argv, "environment");
  SAY("initialized before MPI_Init %d", initialized_before);
  MPI_Initialized(&flag);
  SAY("initialized %d", flag);
  MPI_Query_thread(&provided);
  SAY("query_thread %d", provided);
  MPI_Is_thread_main(&flag);
  SAY("is_thread_main %d", flag);

  int version, subversion;
  MPI_Get_version(&version, &subversion);
  SAY("version %d.%d", version, subversion);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Get_library_version(library, &len);
  CHECK(len > 0 && library[0] != 0); /* Open MPI counts the terminating null */
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(name, &len);
  CHECK(len > 0 && (int)strlen(name) == len);

  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  CHECK(MPI_Wtime() >= t0 && tick > 0 && tick < 1);
  SAY("pcontrol rc %d", MPI_Pcontrol(1));

  void* mem = NULL;
  int rc = MPI_Alloc_mem(4096, MPI_INFO_NULL, &mem);
  memset(mem, 7, 4096);
  SAY("alloc_mem rc %d free_mem rc %d", rc, MPI_Free_mem(mem));

  char text[MPI_MAX_ERROR_STRING];
  int cls = -1;
  MPI_Error_class(MPI_ERR_TAG, &cls);
  MPI_Error_string(MPI_ERR_TAG, text, &len);
  SAY("error class of MPI_ERR_TAG is itself %d, string non-empty %d", cls == MPI_ERR_TAG, len > 0);
  (void)rank;
  return cov_finish();
}

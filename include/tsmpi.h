/* tsmpi's own C interface: introspection for tests and tools. Programs need not use it; an
   unmodified binary gets every protection through LD_PRELOAD alone. Look these up with
   dlsym(RTLD_DEFAULT, ...) so the program still runs without tsmpi. */
#ifndef TSMPI_H
#define TSMPI_H
#include <mpi.h>
#ifdef __cplusplus
extern "C" {
#endif

/* "tsmpi <version> (<mpi>)". */
const char* tsmpi_version(void);
/* How many hooked MPI calls the calling thread is inside (0 outside MPI). */
int tsmpi_call_depth(void);
/* Calls counted so far in a category ("CommIO", "AccessOnly", ...) over all threads of this
   process when TSMPI_STATS=1; -1 for an unknown category name. */
long long tsmpi_category_calls(const char* category);

/* Threads as MPI ranks (docs/threads-as-ranks.md), source-compatible with MPICH 4.2's
   experimental threadcomm API. A program using them links -ltsmpi and runs under tsmpirun.
   MPIX_Threadcomm_init: collective over comm, outside any threaded region; num_threads may
   differ between processes. MPIX_Threadcomm_start/finish: called by each of the process's
   num_threads threads on entering and leaving the region (the thread's rank is its process's
   offset plus its arrival index). MPIX_Threadcomm_free: outside the region. */
#ifndef TSMPI_NO_THREADCOMM_DECLARATIONS
int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm* newthreadcomm);
int MPIX_Threadcomm_free(MPI_Comm* threadcomm);
int MPIX_Threadcomm_start(MPI_Comm threadcomm);
int MPIX_Threadcomm_finish(MPI_Comm threadcomm);
#endif

#ifdef __cplusplus
}
#endif
#endif

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

/* Checking mode's happens-before (docs/checking.md) sees threads, mutexes, condition variables,
   barriers, semaphores and OpenMP; a program that orders its threads otherwise (atomic flags,
   lock-free queues) says so with these, as with ThreadSanitizer's annotations: everything the
   calling thread did before tsmpi_happens_before(key) happens before what a thread does after
   a later tsmpi_happens_after(key) with the same key (any address). Cheap no-ops outside
   checking mode. */
void tsmpi_happens_before(const void* key);
void tsmpi_happens_after(const void* key);

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

/* Several MPI processes in one address space (the MPI Forum draft of ticket 310; docs/
   threads-as-ranks.md#address-spaces). `tsmpirun -asp K -n N prog` runs N MPI processes, K per
   OS process (address space p holds MPI_COMM_WORLD ranks p*K ... p*K+K-1).
   MPI_Init_thread(..., MPIX_THREAD_ATTACH or MPIX_THREAD_REATTACH, &provided) is called once per
   OS process; then each thread calls MPIX_Thread_attach(index), 0 <= index < K (K is the value
   of the key "asp" of MPI_INFO_ENV), and is a thread of that MPI process from then on: its
   MPI_COMM_WORLD and MPI_COMM_SELF are that process's. At MPIX_THREAD_REATTACH a thread may
   attach again, to another index. Each MPI process calls MPI_Finalize (or the thread that
   initialized MPI finalizes the processes that have not); the MPI underneath is finalized
   with the last one. MPI_Comm_split_type(..., MPIX_COMM_TYPE_ADDRESS_SPACE, ...) groups the MPI
   processes of one address space. */
#ifndef MPIX_THREAD_ATTACH
#define MPIX_THREAD_ATTACH (MPI_THREAD_MULTIPLE + 1)
#endif
#ifndef MPIX_THREAD_REATTACH
#define MPIX_THREAD_REATTACH (MPI_THREAD_MULTIPLE + 2)
#endif
#ifndef MPIX_COMM_TYPE_ADDRESS_SPACE
#define MPIX_COMM_TYPE_ADDRESS_SPACE 310 /* ticket 310; no MPI uses this split type */
#endif
#ifndef TSMPI_NO_THREAD_ATTACH_DECLARATIONS
int MPIX_Thread_attach(int index);
#endif

#ifdef __cplusplus
}
#endif
#endif

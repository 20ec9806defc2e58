/* The MPI-IO coverage programs with threads (io_threads.c, io_threads_self.c): Open MPI 5.0's
   MPI-IO is not safe for threads (5.0.7, natively: ompio corrupts its heap with threads on files
   of their own, in mca_common_ompio_set_view among others, and a shared file's accesses hung;
   ROMIO fails too; open-mpi/ompi#1765 documents MPI_FILE operations as not
   MPI_THREAD_MULTIPLE safe). There the threads take turns, a round of file calls each: every
   call still comes from several threads. */
#pragma once
#include <pthread.h>

#include <mpi.h>

#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5
#define IO_TURNS 1
#else
#define IO_TURNS 0
#endif
static pthread_mutex_t io_turns = PTHREAD_MUTEX_INITIALIZER;
static inline void take_turn(void) {
  if (IO_TURNS) pthread_mutex_lock(&io_turns);
}
static inline void end_turn(void) {
  if (IO_TURNS) pthread_mutex_unlock(&io_turns);
}

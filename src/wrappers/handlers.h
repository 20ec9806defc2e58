// Hand-written wrappers for the families the generator does not template (codegen/README.md):
// init, finalize and threadlevel. Same prototypes as mpi.h.
#pragma once
#include "runtime/mpi_version.h"
#include <mpi.h>

namespace tsmpi::handlers {

int MPI_Init(int* argc, char*** argv);
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MPI_Finalize();
int MPI_Query_thread(int* provided);
int MPI_Is_thread_main(int* flag);
int MPI_Initialized(int* flag);
int MPI_Finalized(int* flag);
#if TSMPI_HAVE_SESSIONS
int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session);
int MPI_Session_finalize(MPI_Session* session);
// The MPI's MPI_Info_create_env, whose "thread_level" is the level tsmpi gave the application
// (serialize mode asks the MPI for less), as MPI_Query_thread's is. Called by the generated
// wrapper instead of PMPI_Info_create_env (codegen's NATIVE_CALLS).
int info_create_env(int argc, char* argv[], MPI_Info* info);
#endif

}  // namespace tsmpi::handlers

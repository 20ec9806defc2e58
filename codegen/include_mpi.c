/* Parsed by clang at build time to read the MPI prototypes (cmake/TsmpiCodegen.cmake).
   Open MPI declares its MPIX_ extensions (persistent collectives) in mpi-ext.h. */
#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

// Which MPI standard the MPI's mpi.h declares: code for functions newer than both MPIs tsmpi is
// built on here is compiled only against an MPI that declares them (the tests compile it with
// the declarations supplied, tests/unit/mpi41_compile.cpp).
#pragma once
#include <mpi.h>

#ifndef TSMPI_HAVE_MPI_4_1
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define TSMPI_HAVE_MPI_4_1 1
#else
#define TSMPI_HAVE_MPI_4_1 0
#endif
#endif

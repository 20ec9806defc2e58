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

// What the MPI has beyond MPI-3.1, where its MPI_VERSION does not say it: Open MPI 5.0 reports
// 3.1 but has sessions, MPI_ERRORS_ABORT and MPI-4's error semantics, without the large-count
// (_c) functions; MPICH 4.x reports 4.x and has all of them. Code that depends on one of these
// tests its macro, never MPI_VERSION.
#if MPI_VERSION >= 4
#define TSMPI_HAVE_LARGE_COUNT 1
#else
#define TSMPI_HAVE_LARGE_COUNT 0
#endif
#if MPI_VERSION >= 4 || defined(MPI_SESSION_NULL)
#define TSMPI_HAVE_SESSIONS 1
#else
#define TSMPI_HAVE_SESSIONS 0
#endif
#if MPI_VERSION >= 4 || defined(MPI_ERRORS_ABORT)
#define TSMPI_HAVE_ERRORS_ABORT 1
#else
#define TSMPI_HAVE_ERRORS_ABORT 0
#endif
// Errors that belong to no object go to MPI_COMM_SELF's handler (MPI-4.0 §9.3), before to
// MPI_COMM_WORLD's.
#define TSMPI_MPI4_ERROR_SEMANTICS TSMPI_HAVE_SESSIONS
// MPICH's streams (MPIX_Stream), from MPICH 4.1.
#if defined(MPIX_STREAM_NULL)
#define TSMPI_HAVE_STREAMS 1
#else
#define TSMPI_HAVE_STREAMS 0
#endif
// MPICH's own threads-as-ranks communicators (MPIX_Threadcomm_*), from MPICH 4.2
// (TSMPI_THREADCOMM=native).
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
#define TSMPI_HAVE_NATIVE_THREADCOMM 1
#else
#define TSMPI_HAVE_NATIVE_THREADCOMM 0
#endif
// Open MPI's ULFM (MPIX_Comm_revoke, _agree, _shrink...), declared by its mpi-ext.h.
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
#define TSMPI_HAVE_ULFM 1
#else
#define TSMPI_HAVE_ULFM 0
#endif
// MPI_Test raises a request's errors on MPI_COMM_WORLD's handler, not its communicator's
// (MPICH 4.0; MPICH 4.2 and Open MPI raise them on the communicator): serialize mode, which
// completes blocking receives by tests, raises them where the blocking call would
// (src/locking/completion_errors.h).
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
#define TSMPI_TEST_RAISES_ON_WORLD 1
#else
#define TSMPI_TEST_RAISES_ON_WORLD 0
#endif
// MPICH raises the errors of its completions of several requests (MPI_Testall, MPI_Waitall, ...)
// on MPI_COMM_WORLD's handler, 4.0 and 4.2 alike, and 4.2 its MPI_Mrecv's too while its MPI_Test
// raises on the request's communicator (4.2.1 measured, tests/coverage/p2p_errors.c). Open MPI
// raises them on the communicator.
#if defined(MPICH)
#define TSMPI_MULTI_COMPLETION_RAISES_ON_WORLD 1
#else
#define TSMPI_MULTI_COMPLETION_RAISES_ON_WORLD 0
#endif
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
#define TSMPI_MRECV_RAISES_ON_WORLD 1
#else
#define TSMPI_MRECV_RAISES_ON_WORLD 0
#endif
// Whether the MPI makes MPI_{Comm,Type,Win}_set_name and _get_name of one object atomic with each
// other. MPICH 4.2 calls them without its global lock (4.2.1 measured: a name read while another
// thread sets it comes back torn); Open MPI and MPICH 4.0 lock (src/locking/object_names.h).
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
#define TSMPI_MPI_LOCKS_NAMES 0
#else
#define TSMPI_MPI_LOCKS_NAMES 1
#endif
// Open MPI 4.1's osc/rdma segfaults in an MPI atomic to the calling process itself (btl vader's
// emulated atomics have no endpoint to self): serialize mode's lock words change the process's
// own word with the processor's atomics there (src/locking/rma_sync.cpp). Open MPI 5.0's MPI
// atomics to self work, and are not atomic with the processor's (5.0.7 measured: lost updates
// hung tests/mpi/rma_dependency.c's mixed mode): every word goes through the MPI.
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#define TSMPI_RMA_ATOMICS_TO_SELF_BROKEN 1
#else
#define TSMPI_RMA_ATOMICS_TO_SELF_BROKEN 0
#endif

/* The persistent collectives under their MPI-4 names (MPI_X_init): MPICH 4 and Open MPI 5 have
   them; Open MPI 4.1 has them as MPIX_X_init (its pcollreq extension, mpi-ext.h), which the
   MPI-4 names stand for here. HAVE_PCOLL says whether this MPI has them. */
#ifndef TSMPI_TESTS_PERSISTENT_COLLECTIVES_H
#define TSMPI_TESTS_PERSISTENT_COLLECTIVES_H
#include <mpi.h>

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PCOLL 1
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define HAVE_PCOLL 1
#define MPI_Barrier_init MPIX_Barrier_init
#define MPI_Bcast_init MPIX_Bcast_init
#define MPI_Gather_init MPIX_Gather_init
#define MPI_Gatherv_init MPIX_Gatherv_init
#define MPI_Scatter_init MPIX_Scatter_init
#define MPI_Scatterv_init MPIX_Scatterv_init
#define MPI_Allgather_init MPIX_Allgather_init
#define MPI_Allgatherv_init MPIX_Allgatherv_init
#define MPI_Alltoall_init MPIX_Alltoall_init
#define MPI_Alltoallv_init MPIX_Alltoallv_init
#define MPI_Alltoallw_init MPIX_Alltoallw_init
#define MPI_Reduce_init MPIX_Reduce_init
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Reduce_scatter_init MPIX_Reduce_scatter_init
#define MPI_Reduce_scatter_block_init MPIX_Reduce_scatter_block_init
#define MPI_Scan_init MPIX_Scan_init
#define MPI_Exscan_init MPIX_Exscan_init
#define MPI_Neighbor_allgather_init MPIX_Neighbor_allgather_init
#define MPI_Neighbor_allgatherv_init MPIX_Neighbor_allgatherv_init
#define MPI_Neighbor_alltoall_init MPIX_Neighbor_alltoall_init
#define MPI_Neighbor_alltoallv_init MPIX_Neighbor_alltoallv_init
#define MPI_Neighbor_alltoallw_init MPIX_Neighbor_alltoallw_init
#endif
#endif
#ifndef HAVE_PCOLL
#define HAVE_PCOLL 0
#endif

#endif

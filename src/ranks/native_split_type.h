// MPI_Comm_split_type on the MPI's own communicators (the generated wrapper calls this instead
// of PMPI_Comm_split_type): MPIX_COMM_TYPE_ADDRESS_SPACE there means one MPI process per OS
// process, so every process gets a communicator of its own; other types go to the MPI.
#pragma once
#include <mpi.h>

namespace tsmpi::ranks {
int native_comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm);
}

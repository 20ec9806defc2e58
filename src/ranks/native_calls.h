// MPI functions whose generated wrapper calls tsmpi instead of PMPI_<name> (codegen/generate.py,
// NATIVE_CALLS): what they add is something no MPI has.
#pragma once
#include <mpi.h>

namespace tsmpi::ranks {
// MPI_Comm_split_type on the MPI's own communicators: MPIX_COMM_TYPE_ADDRESS_SPACE there means
// one MPI process per OS process, so every process gets a communicator of its own; other types
// go to the MPI.
int native_comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm);
// MPI_Error_string, which knows the texts of the codes tsmpi made (errors.h: MPICH 4.0 loses
// the string of a code added to a predefined class), else the MPI's.
int error_string(int code, char* string, int* resultlen);
// MPI_Comm_f2c, MPI_Group_f2c, MPI_Message_f2c: the integers MPI_X_c2f gave the engine's handles
// (fortran_handles.cpp) convert back to them, others go to the MPI. Open MPI's Fortran bindings
// call these (their PMPI_ slots are redirected) on every handle a Fortran program passes.
MPI_Comm comm_f2c(MPI_Fint f);
MPI_Group group_f2c(MPI_Fint f);
MPI_Message message_f2c(MPI_Fint f);
}  // namespace tsmpi::ranks

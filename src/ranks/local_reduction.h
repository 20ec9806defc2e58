// A reduction of predefined operation and datatype done here instead of by the MPI: a small
// Allreduce among T thread-ranks folds T contributions on every member, T^2 calls in all, and
// Open MPI's MPI_Reduce_local costs more than the addition it does.
#pragma once
#include <mpi.h>

namespace tsmpi::ranks {

// inout[i] = in[i] op inout[i] for MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN on the common integer
// and floating-point types, evaluated as the MPIs do (same order of operands); false, touching
// nothing, for any other operation or datatype (the caller asks the MPI).
bool reduce_predefined(const void* in, void* inout, MPI_Count count, MPI_Datatype type, MPI_Op op);

}  // namespace tsmpi::ranks

// Serialize mode's handle conversions (MPI_X_c2f, MPI_X_f2c) where the caller is not a program's
// C call: the MPI's Fortran bindings (Open MPI's convert every handle argument with PMPI_X_f2c
// and every new handle with PMPI_X_c2f, around the C call and outside it) and tsmpi's Fortran
// entry points.
//
// Why: Open MPI keeps a table per handle kind for the Fortran integers (opal_pointer_array), and
// its first MPI_Request_c2f of a request appends to it; the table takes its own lock only at
// MPI_THREAD_MULTIPLE. Below it, two threads converting new requests at once can be handed the
// same integer (one program's MPI_Waitall then waits on another thread's request: a hang seen
// in CI, f_idup on Open MPI 5.0), and a conversion that reads the table while another thread's
// call grows it reads freed memory. So a conversion takes the serialize lock, unless its thread
// holds it already (the binding of a Fortran routine run inside a locked call). A program's own
// C conversions take the lock through their strategy (kLocked, codegen/generate.py). Outside
// serialize mode this costs a load and a branch.
#pragma once
#include "locking/serialize_lock.h"

namespace tsmpi::serial {

// convert(), one conversion wrapped in a lambda (MPICH's PMPI_X_c2f and PMPI_X_f2c are macros),
// under the lock in serialize mode. codegen/fortran.py generates the calls.
template <class Convert>
auto locked_conversion(Convert&& convert) {
  return locked(convert);
}

}  // namespace tsmpi::serial

// Fortran handles of the engine's communicators, groups and matched messages. A Fortran
// program reaches a thread-rank communicator through the MPI's own binding, which converts
// each INTEGER handle with MPI_X_f2c and each handle it returns with MPI_X_c2f: on MPICH those
// are casts and the engine's handles pass through; on Open MPI they are table lookups that know
// nothing of the engine, so tsmpi answers them (handle_space.h: handle_to_fortran, handle_from_fortran).
#include <mpi.h>

#include "ranks/api.h"
#include "ranks/handle_space.h"
#include "ranks/native_calls.h"
#include "ranks/route.h"
#include "runtime/function_table.h"
#include "runtime/handles.h"

namespace tsmpi::ranks {

namespace {
// The MPI's conversions are passed as lambdas: MPICH's are macros.
template <class H, class MpiC2f>
MPI_Fint engine_c2f(H handle, MpiC2f mpi_c2f) {
  const std::uintptr_t bits = handle_bits(handle);
  // Live or freed, an engine handle has its integer; MPI_COMM_WORLD of an address space is the MPI's.
  return in_space(bits) ? static_cast<MPI_Fint>(handle_to_fortran(bits)) : mpi_c2f(handle);
}

template <class H, class MpiF2c>
H engine_f2c(MPI_Fint f, MpiF2c mpi_f2c) {
  const std::uintptr_t bits = handle_from_fortran(static_cast<int>(f));
  return bits && in_space(bits) ? handle_from_bits<H>(bits) : mpi_f2c(f);
}
}  // namespace

namespace api {
MPI_Fint comm_c2f(MPI_Comm comm) { return engine_c2f(comm, [](MPI_Comm h) { return PMPI_Comm_c2f(h); }); }
MPI_Fint group_c2f(MPI_Group group) { return engine_c2f(group, [](MPI_Group h) { return PMPI_Group_c2f(h); }); }
MPI_Fint message_c2f(MPI_Message message) { return engine_c2f(message, [](MPI_Message h) { return PMPI_Message_c2f(h); }); }
}  // namespace api

MPI_Comm comm_f2c(MPI_Fint f) { return engine_f2c<MPI_Comm>(f, [](MPI_Fint x) { return PMPI_Comm_f2c(x); }); }
MPI_Group group_f2c(MPI_Fint f) { return engine_f2c<MPI_Group>(f, [](MPI_Fint x) { return PMPI_Group_f2c(x); }); }
MPI_Message message_f2c(MPI_Fint f) { return engine_f2c<MPI_Message>(f, [](MPI_Fint x) { return PMPI_Message_f2c(x); }); }

bool attributes_in_fortran(fn::Id id, MPI_Comm* comm, int keyval, int* rc) {
  if (!live() || !in_space(handle_bits(*comm))) return false;
  *rc = api::attribute_comm(*comm, keyval, comm, kFunctions[id].name);
  return true;
}

}  // namespace tsmpi::ranks

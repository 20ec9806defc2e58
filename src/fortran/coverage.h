// How the MPI's exported Fortran routines reach tsmpi, per binding (tsmpi-info, TSMPI_VERBOSE=2).
#pragma once
#include <cstdio>
#include <string>

namespace tsmpi::fortran {

// "mpif.h / use mpi: 1616 routines, 1548 redirected, 0 through C, 36 entry points, 32 nothing
// to protect; use mpi_f08: ..."
std::string coverage_line();
// One line per routine: name, binding, function, path.
void print_routines(std::FILE* out);
// How the MPI's Fortran routines of one C function reach tsmpi, grouped by path (tsmpi-info --function).
std::string routines_of(const char* function);

}  // namespace tsmpi::fortran

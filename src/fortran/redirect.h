// Fortran calls into tsmpi's wrappers. The MPI's Fortran libraries convert a call's arguments
// and call the C layer; where they call PMPI_X (Open MPI's mpif.h/use mpi binding, MPICH's
// mpi_f08 one) tsmpi points their PMPI_X slots at its own MPI_X at load time, so the call takes
// the same hooked path as a C call, once. codegen/fortran.py decides, per routine, how it
// reaches tsmpi and generates the tables below (generated/fortran_*.cpp).
#pragma once
#include <cstddef>

namespace tsmpi::fortran {

struct Redirect {
  const char* symbol;  // PMPI_X, imported by a Fortran library
  void* target;        // tsmpi's MPI_X
};
extern const Redirect kRedirects[];
extern const std::size_t kRedirectCount;
extern const char* const kLibraries[];  // sonames of the MPI's Fortran libraries
extern const std::size_t kLibraryCount;

// How each exported Fortran routine reaches tsmpi (tsmpi-info --fortran).
enum class Binding { kMpifh, kF08 };
// kUnprotected: no path found, built anyway (-DTSMPI_UNKNOWN_FUNCTIONS=warn): the MPI's own routine.
enum class Path { kC, kRedirected, kEntry, kNone, kUnprotected };
struct Routine {
  const char* name;      // as exported: mpi_recv_, MPI_RECV, mpi_recv_f08_, ...
  const char* function;  // the table's function, or "-" for a Fortran-only routine
  Binding binding;
  Path path;
  bool request_copy;     // hands the C function a copy of the program's request variable:
                         // tsmpi's entry point of the same name names the variable for checking
                         // mode (fortran/request_variables.h)
};
extern const Routine kRoutines[];
extern const std::size_t kRoutineCount;

// Points the PMPI_ slots of every loaded Fortran library at tsmpi's wrappers (idempotent).
void redirect_loaded_libraries();

}  // namespace tsmpi::fortran

// Object names: MPI_{Comm,Type,Win}_set_name and _get_name made atomic with each other where the
// MPI does not make them so (TSMPI_MPI_LOCKS_NAMES, runtime/mpi_version.h), in every mode: a
// thread reading a communicator's name while another renames it gets the old or the new name,
// never a mix. The generated wrappers call these instead of the PMPI functions (codegen's
// NATIVE_CALLS). Names are set and read rarely: one process-wide mutex, held only for the copy.
#pragma once
#include <mpi.h>

#include <mutex>
#include <string_view>

#include "runtime/mpi_version.h"

namespace tsmpi::object_names {

inline std::mutex& names_mutex() {
  static std::mutex m;
  return m;
}

// Whether FUNCTION is one of the six (tsmpi-info --function).
constexpr bool covers(std::string_view function) {
  for (std::string_view kind : {"MPI_Comm_", "MPI_Type_", "MPI_Win_"})
    for (std::string_view op : {"set_name", "get_name"})
      if (function.size() == kind.size() + op.size() && function.starts_with(kind) && function.ends_with(op)) return true;
  return false;
}

template <class Call>
int exclusive(Call&& call) {
  if constexpr (TSMPI_MPI_LOCKS_NAMES) {
    return call();
  } else {
    std::lock_guard hold(names_mutex());
    return call();
  }
}

inline int comm_set_name(MPI_Comm c, const char* n) { return exclusive([&] { return PMPI_Comm_set_name(c, n); }); }
inline int comm_get_name(MPI_Comm c, char* n, int* l) { return exclusive([&] { return PMPI_Comm_get_name(c, n, l); }); }
inline int type_set_name(MPI_Datatype t, const char* n) { return exclusive([&] { return PMPI_Type_set_name(t, n); }); }
inline int type_get_name(MPI_Datatype t, char* n, int* l) { return exclusive([&] { return PMPI_Type_get_name(t, n, l); }); }
inline int win_set_name(MPI_Win w, const char* n) { return exclusive([&] { return PMPI_Win_set_name(w, n); }); }
inline int win_get_name(MPI_Win w, char* n, int* l) { return exclusive([&] { return PMPI_Win_get_name(w, n, l); }); }

}  // namespace tsmpi::object_names

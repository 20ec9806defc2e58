#include "fortran/coverage.h"

#include "fortran/redirect.h"

#include <string_view>

namespace tsmpi::fortran {
namespace {

const char* binding_name(Binding b) { return b == Binding::kF08 ? "use mpi_f08" : "mpif.h / use mpi"; }

const char* path_name(Path p) {
  switch (p) {
    case Path::kC: return "through C";
    case Path::kRedirected: return "redirected";
    case Path::kEntry: return "entry point";
    case Path::kNone: return "nothing to protect";
    case Path::kUnprotected: return "UNPROTECTED (no path to tsmpi)";
  }
  return "?";
}

}  // namespace

std::string coverage_line() {
  std::string text;
  for (Binding b : {Binding::kMpifh, Binding::kF08}) {
    int total = 0, per_path[5] = {}, copies = 0;
    for (std::size_t i = 0; i < kRoutineCount; ++i) {
      if (kRoutines[i].binding != b) continue;
      ++total;
      ++per_path[static_cast<int>(kRoutines[i].path)];
      copies += kRoutines[i].request_copy;
    }
    if (!text.empty()) text += "; ";
    text += std::string(binding_name(b)) + ": " + std::to_string(total) + " routines, " +
            std::to_string(per_path[static_cast<int>(Path::kRedirected)]) + " redirected" +
            (copies ? " (" + std::to_string(copies) + " with their request variable followed)" : std::string()) + ", " +
            std::to_string(per_path[static_cast<int>(Path::kC)]) + " through C, " +
            std::to_string(per_path[static_cast<int>(Path::kEntry)]) + " entry points, " +
            std::to_string(per_path[static_cast<int>(Path::kNone)]) + " nothing to protect" +
            (per_path[static_cast<int>(Path::kUnprotected)]
                 ? ", " + std::to_string(per_path[static_cast<int>(Path::kUnprotected)]) + " UNPROTECTED"
                 : std::string());
  }
  return text;
}

void print_routines(std::FILE* out) {
  std::fprintf(out, "%-40s %-17s %-32s %s\n", "# routine", "binding", "function", "reaches tsmpi");
  for (std::size_t i = 0; i < kRoutineCount; ++i) {
    const Routine& r = kRoutines[i];
    std::fprintf(out, "%-40s %-17s %-32s %s\n", r.name, r.binding == Binding::kF08 ? "mpi_f08" : "mpif.h/use_mpi",
                 r.function, r.request_copy ? "redirected, request variable followed" : path_name(r.path));
  }
}

std::string routines_of(const char* function) {
  std::string text;
  for (Path p : {Path::kUnprotected, Path::kRedirected, Path::kC, Path::kEntry, Path::kNone}) {
    std::string names;
    for (std::size_t i = 0; i < kRoutineCount; ++i)
      if (kRoutines[i].path == p && std::string_view(kRoutines[i].function) == function)
        names += (names.empty() ? "" : " ") + std::string(kRoutines[i].name);
    if (!names.empty()) text += (text.empty() ? "" : "; ") + std::string(path_name(p)) + ": " + names;
  }
  return text.empty() ? "no Fortran routine of this MPI binds it" : text;
}

}  // namespace tsmpi::fortran

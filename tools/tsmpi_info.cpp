// tsmpi-info: version, the MPI this build is for, the options in effect and the
// classification table. `tsmpi-info --check` only validates the TSMPI_* environment.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "fn_ids.h"
#include "fortran/coverage.h"
#include "runtime/describe.h"
#include "runtime/function_table.h"
#include "runtime/options.h"
#include "version.h"

namespace {

void usage() {
  std::puts("usage: tsmpi-info [--check | --options | --table | --fortran | --function MPI_X | --help]\n"
            "  (no argument)  version, MPI, Fortran coverage, options and the classification table\n"
            "  --check        exit 2 with one line if the TSMPI_* environment is invalid\n"
            "  --options      the options table with the values in effect\n"
            "  --table        the classification of every wrapped MPI function\n"
            "  --fortran      how each Fortran routine the MPI exports reaches tsmpi (docs/fortran.md)\n"
            "  --function MPI_X  the function's table row and every protection tsmpi applies to it under\n"
            "                 the TSMPI_* settings of the environment");
}

void print_version() {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  PMPI_Get_library_version(lib, &len);  // allowed before MPI_Init
  std::string first(lib);
  first = first.substr(0, first.find('\n'));
  std::printf("tsmpi %s, built for %s (%d wrapped functions)\nMPI: %s\nmpiexec: %s\n", TSMPI_VERSION,
              TSMPI_MPI_NAME, static_cast<int>(tsmpi::fn::kCount), first.c_str(), TSMPI_MPIEXEC);
  std::printf("Fortran: %s\n", tsmpi::fortran::coverage_line().c_str());
  std::string derived;
  int n = 0;
  for (const auto& f : tsmpi::kFunctions)
    if (*f.derived) derived += (n++ ? ", " : "") + std::string(f.name);
  if (n)
    std::printf("not in the table, classified by rule at build time (TSMPI_UNKNOWN_FUNCTIONS=warn): %d: %s\n", n,
                derived.c_str());
}

int print_options() {
  tsmpi::ParseResult r = tsmpi::parse_options(tsmpi::tsmpi_environment());
  std::printf("\n%-24s %-10s %-28s %-9s %s\n", "option", "value", "allowed", "default", "meaning");
  for (const auto& s : tsmpi::option_specs()) {
    std::string value = r.error ? "?" : tsmpi::option_value(r.options, s.name);
    std::string allowed = s.allowed;
    if (*s.not_built) allowed += " (not built: " + std::string(s.not_built) + ")";
    std::printf("%-24s %-10s %-28s %-9s %s\n", s.name, value.c_str(), allowed.c_str(), s.default_value, s.help);
  }
  if (r.error) std::printf("environment: %s\n", r.error->c_str());
  return r.error ? 2 : 0;
}

void print_table() {
  std::printf("\n%-36s %-11s %-5s %-28s %-11s %-24s %-40s %-20s %-12s %-10s %s\n", "function", "category", "block",
              "nonblocking", "family", "objects", "handles", "serialize-mode", "probe-policy", "threadcomm",
              "ignored");
  for (const auto& f : tsmpi::kFunctions)
    std::printf("%-36s %-11s %-5s %-28s %-11s %-24s %-40s %-20s %-12s %-10s %s\n", f.name,
                tsmpi::category_name(f.category), f.blocking ? "yes" : "no", f.nonblocking_name,
                tsmpi::family_name(f.family), f.objects, f.handles, tsmpi::strategy_name(f.serial),
                f.matched ? "matched" : "-", tsmpi::thread_ranks_name(f.threadcomm),
                (std::string(f.ignored) + (*f.derived ? std::string("  [not in the table: ") + f.derived + "]" : "")).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const char* arg = argc > 1 ? argv[1] : "";
  if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
    usage();
    return 0;
  }
  if (!std::strcmp(arg, "--check")) {
    tsmpi::ParseResult r = tsmpi::parse_options(tsmpi::tsmpi_environment());
    if (r.error) std::fprintf(stderr, "%s\n", r.error->c_str());
    return r.error ? 2 : 0;
  }
  if (!std::strcmp(arg, "--options")) return print_options();
  if (!std::strcmp(arg, "--fortran")) {
    std::printf("Fortran: %s\n", tsmpi::fortran::coverage_line().c_str());
    tsmpi::fortran::print_routines(stdout);
    return 0;
  }
  if (!std::strcmp(arg, "--table")) {
    print_table();
    return 0;
  }
  if (!std::strcmp(arg, "--function")) {
    if (argc < 3) {
      std::fprintf(stderr, "tsmpi-info: --function needs a function name (MPI_Recv, MPI_Comm_dup, ...)\n");
      return 1;
    }
    tsmpi::ParseResult r = tsmpi::parse_options(tsmpi::tsmpi_environment());
    if (r.error) {
      std::fprintf(stderr, "%s\n", r.error->c_str());
      return 2;
    }
    int status = 0;
    for (int a = 2; a < argc; ++a) {
      const int i = tsmpi::find_function(argv[a]);
      if (i < 0) {
        std::fprintf(stderr, "tsmpi-info: %s is not a function this build wraps (%s exports no PMPI_ form of it; "
                             "tsmpi-info --table lists them)\n", argv[a], TSMPI_MPI_NAME);
        status = 1;
        continue;
      }
      std::fputs(tsmpi::describe_function(i, r.options).c_str(), stdout);
    }
    return status;
  }
  if (*arg) {
    usage();
    return 1;
  }
  print_version();
  int rc = print_options();
  print_table();
  return rc;
}

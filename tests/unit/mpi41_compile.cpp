// Compiles tsmpi's code for MPI 4.1's functions against this MPI's mpi.h plus MPI 4.1's
// declarations (fixtures/mpi41/mpi41_decls.h): the probe policies' look-through for
// MPI_Request_get_status_all/any/some (matching/handlers.h) and the thread-rank engine's
// (ranks/completion.cpp, ranks/calls.h), which an MPI >= 4.1 compiles in and the MPIs here do
// not. An object library, never linked: the build fails if this code does not compile.
#define TSMPI_HAVE_MPI_4_1 1
#include "mpi41_decls.h"

#include "wrappers/wrapper_prelude.h"  // what every generated wrapper file includes
#include "../../src/ranks/completion.cpp"

namespace tsmpi::test {

// Every template the generated wrappers would instantiate, with the argument types of the
// prototypes.
int instantiate(int n, const MPI_Request* requests, int* index, int* flag, int* outcount, int* indices,
                MPI_Status* statuses) {
  auto original = [] { return MPI_SUCCESS; };
  int rc = matching::Request_get_status_any(original, n, requests, index, flag, statuses);
  rc |= matching::Request_get_status_all(original, n, requests, flag, statuses);
  rc |= matching::Request_get_status_some(original, n, requests, outcount, indices, statuses);
  rc |= ranks::on::Request_get_status_any(n, requests, index, flag, statuses);
  rc |= ranks::on::Request_get_status_all(n, requests, flag, statuses);
  rc |= ranks::on::Request_get_status_some(n, requests, outcount, indices, statuses);
  return rc;
}

}  // namespace tsmpi::test

#include "matching/comm_table.h"

#include <vector>

#include "matching/policies.h"

namespace tsmpi::matching {

std::atomic<std::uint64_t> g_comm_epoch{1};

namespace {

int g_keyval = MPI_KEYVAL_INVALID;

// Runs inside MPI_Comm_free (and at MPI_Finalize for the predefined communicators), so it
// calls no MPI function and takes no lock serialize mode might hold.
int retire_on_free(MPI_Comm comm, int, void*, void*) {
  retire_comm(handle_bits(comm));
  g_comm_epoch.fetch_add(1, std::memory_order_acq_rel);
  return MPI_SUCCESS;
}

}  // namespace

void comm_keyval_init() {
  mpi::locked([&] { return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, retire_on_free, &g_keyval, nullptr); });
}

void comm_keyval_free() {
  if (g_keyval != MPI_KEYVAL_INVALID) mpi::locked([&] { return PMPI_Comm_free_keyval(&g_keyval); });
}

void watch_comm_free(MPI_Comm comm) {
  mpi::locked([&] { return PMPI_Comm_set_attr(comm, g_keyval, nullptr); });
}

}  // namespace tsmpi::matching

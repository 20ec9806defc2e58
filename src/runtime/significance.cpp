// Arguments the standard says are not significant (the table's `ignored` column): at non-root
// processes of rooted collectives, in the root's group of an intercommunicator, with MPI_IN_PLACE.
#include "locking/serialize_lock.h"
#include "runtime/handles.h"

namespace tsmpi {

namespace {
// Whether this process is the root: root == MPI_ROOT on an intercommunicator, its rank on an
// intracommunicator. A leaf of an intercommunicator (root names a remote rank) is not.
// `take_lock`: false when the caller holds serialize mode's lock already.
bool is_root(const CallArgs& args, bool take_lock) {
  if (args.root == MPI_ROOT) return true;
  if (args.root == MPI_PROC_NULL || args.root < 0 || args.root_comm == MPI_COMM_NULL) return false;
  int inter = 0, rank = -1;
  auto query = [&] {
    int r = PMPI_Comm_test_inter(args.root_comm, &inter);
    return r == MPI_SUCCESS && !inter ? PMPI_Comm_rank(args.root_comm, &rank) : r;
  };
  int rc = take_lock ? serial::locked(query) : query();
  // An invalid communicator: the MPI will refuse the call; nothing conditional is read before.
  return rc == MPI_SUCCESS && !inter && rank == args.root;
}
}  // namespace

bool significant(const CallArgs& args, const HandleArg& h, bool take_lock) {
  if (h.ignored == 0) return true;
  if ((h.ignored & Ignored::kInPlace) && h.in_place == MPI_IN_PLACE) return false;
  if ((h.ignored & Ignored::kProcNull) && args.root == MPI_PROC_NULL) return false;
  if ((h.ignored & Ignored::kNonLeaf) && (args.root == MPI_ROOT || args.root == MPI_PROC_NULL)) return false;
  if ((h.ignored & Ignored::kNonRoot) && !is_root(args, take_lock)) return false;
  return true;
}

}  // namespace tsmpi

#include "locking/creation_in_flight.h"

#include <vector>

#include "locking/admission.h"
#include "locking/backoff.h"
#include "locking/object_registry.h"
#include "locking/serialize_lock.h"

namespace tsmpi::serial {

int g_creations_in_flight = 0;

namespace {

// The application's request: a generalized request whose outcome is the creation's.
struct Outcome {
  int rc = MPI_SUCCESS;
};
// Callbacks run inside the MPI (nesting depth > 0), so they call PMPI directly.
int query_outcome(void* state, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return static_cast<Outcome*>(state)->rc;
}
int free_outcome(void* state) {
  delete static_cast<Outcome*>(state);
  return MPI_SUCCESS;
}
int cancel_nothing(void*, int) { return MPI_SUCCESS; }  // a collective cannot be cancelled

struct Creation {
  MPI_Request inner;  // the MPI's request
  MPI_Request outer;  // the application's
  Outcome* outcome;   // freed by the MPI with `outer`
};
std::vector<Creation>& creations() {  // under the lock
  static auto* v = new std::vector<Creation>;
  return *v;
}

}  // namespace

void progress_creations() {
  auto& list = creations();
  for (std::size_t i = 0; i < list.size();) {
    Creation& c = list[i];
    int flag = 0;
    int rc = PMPI_Test(&c.inner, &flag, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !flag) {
      ++i;
      continue;
    }
    c.outcome->rc = rc;
    PMPI_Grequest_complete(c.outer);
    list[i] = list.back();
    list.pop_back();
    --g_creations_in_flight;
  }
}

int start_creation(fn::Id id, const Objects& objects, MPI_Request* request, int (*start)(void*), void* context) {
  Backoff backoff;
  while (true) {
    {
      Guard g;
      if (!right_to_enter_taken()) {
        int rc = start(context);
        if (rc != MPI_SUCCESS) return rc;
        // Both MPIs set the new handle when the creation starts; its tsmpi id is derived from
        // the parent's creations in call order, the same on every rank.
        if (tracks_objects(id)) after_call(id, objects, rc);
        auto* outcome = new Outcome;
        MPI_Request outer = MPI_REQUEST_NULL;
        PMPI_Grequest_start(query_outcome, free_outcome, cancel_nothing, outcome, &outer);
        creations().push_back({*request, outer, outcome});
        ++g_creations_in_flight;
        *request = outer;
        return MPI_SUCCESS;
      }
    }
    backoff.pause();  // a blocking creation is being admitted or made; it ends without us
  }
}

}  // namespace tsmpi::serial

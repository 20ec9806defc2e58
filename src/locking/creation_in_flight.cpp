#include "locking/creation_in_flight.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "fortran/request_variables.h"
#include "locking/admission.h"
#include "locking/comm_agreement.h"
#include "locking/object_lifetime.h"
#include "locking/object_registry.h"
#include "locking/serialize_lock.h"
#include "runtime/function_table.h"
#include "runtime/os.h"

namespace tsmpi::serial {

namespace {

// The program's INTEGER newcomm where the MPI's Fortran binding gave the C call a local copy of
// it (Open MPI; fortran/request_variables.h): written once the MPI has made the communicator and
// the binding has returned, whichever comes last.
struct FortranNewcomm {
  MPI_Fint* variable;
  MPI_Comm made = MPI_COMM_NULL;
  bool returned = false;
};
std::vector<std::shared_ptr<FortranNewcomm>>& awaiting_return() {  // under the lock
  static auto* v = new std::vector<std::shared_ptr<FortranNewcomm>>;
  return *v;
}

// Run by the Fortran entry point once the MPI's binding returned (it wrote MPI_COMM_NULL).
void binding_returned(MPI_Fint* variable) {
  Guard g;
  auto& list = awaiting_return();
  for (auto it = list.begin(); it != list.end(); ++it) {
    if ((*it)->variable != variable) continue;
    (*it)->returned = true;
    if ((*it)->made != MPI_COMM_NULL) *variable = PMPI_Comm_c2f((*it)->made);
    list.erase(it);
    return;
  }
}

class PendingConstructor final : public Pending {
 public:
  PendingConstructor(fn::Id id, MPI_Comm parent, std::uint64_t parent_id, CreationStart start, MPI_Comm* newcomm,
                     MPI_Request* request)
      : id_(id), parent_(parent), parent_id_(parent_id), start_(std::move(start)), newcomm_(newcomm), done_(request) {
    *newcomm = MPI_COMM_NULL;
    const fortran::RequestVariable& f = fortran::t_request_variable;
    if (f.fn == id && f.handle_out) {
      fortran_ = std::make_shared<FortranNewcomm>(FortranNewcomm{f.handle_out});
      awaiting_return().push_back(fortran_);
      fortran::t_request_variable.on_return = binding_returned;
    }
  }
  Held& held() { return done_.held(); }

  // Presence: every member has called it.
  Step begin() override {
    int rc = agreement_.start(parent_, true);
    if (rc != MPI_SUCCESS) {
      done_.finish(rc);
      return Step::kDone;
    }
    return Step::kHolds;
  }

  bool progress() override {
    int rc = step();
    if (rc == kPending) return false;
    if (phase_ != Phase::kPresence) abandon(parent_id_, claimed_);  // the right, claimed or held
    done_.finish(rc);
    return true;
  }

  std::string describe() const override {
    const std::string name = kFunctions[id_].name;
    switch (phase_) {
      case Phase::kPresence: return name + " waits for every member to call it (presence)";
      case Phase::kVote: return name + " waits for the process's right to create, agreed with the other members";
      case Phase::kInMpi: break;
    }
    return name + " is in the MPI";
  }

 private:
  enum class Phase { kPresence, kVote, kInMpi };
  static constexpr int kPending = -1;

  // One step of the admission protocol (admission.h) and the MPI's call: MPI_SUCCESS when
  // done, kPending, or the error that ends it.
  int step() {
    bool done = false, all = false;
    int rc = MPI_SUCCESS, flag = 0;
    switch (phase_) {
      case Phase::kPresence:
        if ((rc = agreement_.test(&done, &all)) != MPI_SUCCESS) return rc;
        if (!done) return kPending;
        phase_ = Phase::kVote;
        return start_vote();
      case Phase::kVote:
        if (voting_) {
          if ((rc = agreement_.test(&done, &all)) != MPI_SUCCESS) return rc;
          if (!done) return kPending;
          voting_ = false;
          vote_result(claimed_, all);
          if (all) return give_to_mpi();
          claimed_ = false;
          retry_after_ns_ = monotonic_ns() + backoff_ns_;  // as admission's waiting thread backs off
          backoff_ns_ = std::min<std::int64_t>(backoff_ns_ * 2, kMaxBackoffNs);
          return kPending;
        }
        return monotonic_ns() < retry_after_ns_ ? kPending : start_vote();
      case Phase::kInMpi:
        if ((rc = PMPI_Test(&inner_, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) return rc;
        return flag ? MPI_SUCCESS : kPending;
    }
    return kPending;
  }

  // Claims the process's right to create and agrees on the claims with the other members.
  int start_vote() {
    claimed_ = claim(parent_id_);
    int rc = agreement_.start(parent_, claimed_);
    if (rc != MPI_SUCCESS) return rc;
    voting_ = true;
    return kPending;
  }

  // Every member holds its process's right to create: the MPI gets the call, which holds the
  // right until it completes.
  int give_to_mpi() {
    MPI_Comm made = MPI_COMM_NULL;
    int rc = start_(done_.held(), &made, &inner_);
    if (rc != MPI_SUCCESS) return rc;
    phase_ = Phase::kInMpi;
    // Both MPIs set the new handle when the creation starts; its tsmpi id is derived from the
    // parent's creations in call order, which the sequence keeps the same on every process.
    after_call(id_, Objects{HandleRef{Kind::Comm, handle_bits(parent_)}, out<Kind::Comm>(&made)}, MPI_SUCCESS);
    lifetime::adopt_created(Kind::Comm, handle_bits(made));
    if (!fortran_) {
      *newcomm_ = made;
    } else {
      fortran_->made = made;
      if (fortran_->returned) *fortran_->variable = PMPI_Comm_c2f(made);
    }
    return kPending;
  }

  static constexpr std::int64_t kMaxBackoffNs = 1'000'000;
  fn::Id id_;
  MPI_Comm parent_;
  std::uint64_t parent_id_;  // tsmpi's id of the parent: the vote's priority
  CreationStart start_;
  MPI_Comm* newcomm_;  // the C caller's variable: the application's, or MPICH's Fortran INTEGER
  Completion done_;
  std::shared_ptr<FortranNewcomm> fortran_;
  Phase phase_ = Phase::kPresence;
  CommAgreement agreement_;
  bool voting_ = false, claimed_ = false;
  std::int64_t retry_after_ns_ = 0, backoff_ns_ = 20'000;
  MPI_Request inner_ = MPI_REQUEST_NULL;
};

}  // namespace

int start_creation(fn::Id id, const Objects& objects, const CallArgs& args, const std::array<std::int8_t, 4>& held,
                   int held_count, CreationStart start, MPI_Comm* newcomm, MPI_Request* request) {
  const MPI_Comm parent = handle_from_bits<MPI_Comm>(objects.in.bits);
  Guard g;
  if (sequences_active()) progress_sequences();
  // An invalid parent is refused at once, with the class and handler the MPI's own call uses.
  int inter = 0;
  if (int rc = PMPI_Comm_test_inter(parent, &inter); rc != MPI_SUCCESS) return rc;
  MPI_Comm target = MPI_COMM_NULL;
  std::uint64_t parent_id = 0;
  admission_target(objects.in, &target, &parent_id);
  auto* op = new PendingConstructor(id, parent, parent_id, std::move(start), newcomm, request);
  op->held().copy(args, held, held_count);
  enqueue(parent, op);
  return MPI_SUCCESS;
}

}  // namespace tsmpi::serial

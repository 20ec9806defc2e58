#include "locking/collective_sequence.h"

#include <deque>
#include <memory>
#include <unordered_map>

#include "locking/object_registry.h"
#include "locking/progress.h"
#include "runtime/function_table.h"

namespace tsmpi::serial {

std::atomic<int> g_sequenced{0};

namespace {

// A communicator's operations not yet given to the MPI, in call order, and the constructor
// that holds it. Only communicators that are not idle have one.
struct Sequence {
  std::deque<std::unique_ptr<Pending>> waiting;
  std::unique_ptr<Pending> holder;
  bool idle() const { return !holder && waiting.empty(); }
};
std::unordered_map<std::uintptr_t, Sequence>& sequences() {
  static auto* m = new std::unordered_map<std::uintptr_t, Sequence>;
  return *m;
}
// Given to the MPI and completing on their own (nonblocking collectives that waited).
std::vector<std::unique_ptr<Pending>>& started() {
  static auto* v = new std::vector<std::unique_ptr<Pending>>;
  return *v;
}
bool g_progressing = false;  // progress_sequences is not re-entered (a free it begins, ...)
std::uint64_t g_deferred = 0;

void finished_one() { g_sequenced.fetch_sub(1, std::memory_order_relaxed); }

// Gives the MPI what may go next on this communicator: everything up to the next constructor.
void advance(Sequence& s) {
  while (!s.holder && !s.waiting.empty()) {
    std::unique_ptr<Pending> op = std::move(s.waiting.front());
    s.waiting.pop_front();
    switch (op->begin()) {
      case Pending::Step::kDone: finished_one(); break;
      case Pending::Step::kStarted: started().push_back(std::move(op)); break;
      case Pending::Step::kHolds: s.holder = std::move(op); break;
    }
  }
}

// A nonblocking collective that waited: started when it reaches the front, then tested.
class PendingCollective final : public Pending {
 public:
  PendingCollective(fn::Id id, MPI_Comm comm, CollectiveStart start, MPI_Request* request)
      : id_(id), comm_(comm), start_(std::move(start)), done_(request) {}
  MPI_Comm comm() const { return comm_; }
  Held& held() { return done_.held(); }
  Step begin() override {
    int rc = start_(done_.held(), &inner_);
    if (rc != MPI_SUCCESS) {
      done_.finish(rc);
      return Step::kDone;
    }
    return Step::kStarted;
  }
  bool progress() override {
    int flag = 0;
    int rc = PMPI_Test(&inner_, &flag, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !flag) return false;
    done_.finish(rc);
    return true;
  }
  std::string describe() const override { return kFunctions[id_].name; }

 private:
  fn::Id id_;
  MPI_Comm comm_;
  CollectiveStart start_;
  Completion done_;
  MPI_Request inner_ = MPI_REQUEST_NULL;
};

int free_now(MPI_Comm* comm) {
  const std::uintptr_t bits = handle_bits(*comm);
  int rc = PMPI_Comm_free(comm);
  after_call(fn::MPI_Comm_free, Objects{HandleRef{Kind::Comm, bits}, {}}, rc);
  return rc;
}

// MPI_Comm_free of a communicator whose operations still wait: made once they were given to
// the MPI (which completes what it was given on a freed communicator normally).
class PendingFree final : public Pending {
 public:
  explicit PendingFree(MPI_Comm comm) : comm_(comm) {}
  Step begin() override {
    free_now(&comm_);  // the application's call returned long ago: an error has no one to go to
    return Step::kDone;
  }
  bool progress() override { return true; }
  std::string describe() const override { return "MPI_Comm_free"; }

 private:
  MPI_Comm comm_;
};

}  // namespace

void Held::copy(const CallArgs& args, const std::array<std::int8_t, 4>& indices, int count) {
  for (int i = 0; i < count; ++i) {
    const HandleArg& h = args.handles[indices[i]];
    Copy c{h.kind, 0};
    const std::uintptr_t bits = read_handle(h.kind, h.where, 0);
    if (bits != null_handle(h.kind) && significant(args, h, /*take_lock=*/false)) {
      if (h.kind == Kind::Datatype) {
        // A predefined datatype is never freed; a copy of it would be a derived one, which the
        // predefined reduction operations refuse.
        const MPI_Datatype type = handle_from_bits<MPI_Datatype>(bits);
        int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
        MPI_Datatype copy = MPI_DATATYPE_NULL;
        if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS && combiner != MPI_COMBINER_NAMED &&
            PMPI_Type_dup(type, &copy) == MPI_SUCCESS)
          c.bits = handle_bits(copy);
      } else if (h.kind == Kind::Info) {
        MPI_Info copy = MPI_INFO_NULL;
        if (PMPI_Info_dup(handle_from_bits<MPI_Info>(bits), &copy) == MPI_SUCCESS) c.bits = handle_bits(copy);
      }
    }
    copies_.push_back(c);
  }
}

void Held::release() {
  for (Copy& c : copies_) {
    if (!c.bits) continue;
    if (c.kind == Kind::Datatype) {
      MPI_Datatype t = handle_from_bits<MPI_Datatype>(c.bits);
      PMPI_Type_free(&t);
    } else if (c.kind == Kind::Info) {
      MPI_Info info = handle_from_bits<MPI_Info>(c.bits);
      PMPI_Info_free(&info);
    }
    c.bits = 0;
  }
}

// The callbacks run inside the MPI, so they call PMPI directly.
int Completion::query(void* state, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return static_cast<Outcome*>(state)->rc;
}
int Completion::free(void* state) {
  delete static_cast<Outcome*>(state);
  return MPI_SUCCESS;
}
int Completion::cancel(void*, int) { return MPI_SUCCESS; }  // a collective cannot be cancelled

Completion::Completion(MPI_Request* request) : outcome_(new Outcome) {
  PMPI_Grequest_start(query, free, cancel, outcome_, &request_);
  *request = request_;
}

void Completion::finish(int rc) {
  held_.release();
  outcome_->rc = rc;
  PMPI_Grequest_complete(request_);
}

void progress_sequences() {
  if (g_progressing) return;
  g_progressing = true;
  auto& running = started();
  for (std::size_t i = 0; i < running.size();) {
    if (running[i]->progress()) {
      running[i] = std::move(running.back());
      running.pop_back();
      finished_one();
    } else {
      ++i;
    }
  }
  auto& all = sequences();
  for (auto it = all.begin(); it != all.end();) {
    Sequence& s = it->second;
    if (s.holder && s.holder->progress()) {
      s.holder.reset();
      finished_one();
    }
    advance(s);
    it = s.idle() ? all.erase(it) : std::next(it);
  }
  g_progressing = false;
}

bool busy(MPI_Comm comm) { return sequences().count(handle_bits(comm)) != 0; }

void enqueue(MPI_Comm comm, Pending* op) {
  g_sequenced.fetch_add(1, std::memory_order_relaxed);
  ++g_deferred;
  auto& all = sequences();
  auto it = all.try_emplace(handle_bits(comm)).first;
  it->second.waiting.emplace_back(op);
  if (!g_progressing) advance(it->second);
  if (it->second.idle()) all.erase(it);
}

void await_idle(MPI_Comm comm) {
  {
    Guard g;
    progress_sequences();
    if (!busy(comm)) return;
  }
  poll_until_done([&](int* idle) {
    progress_sequences();
    *idle = !busy(comm);
    return MPI_SUCCESS;
  });
}

int defer_collective(fn::Id id, MPI_Comm comm, const CallArgs& args, const std::array<std::int8_t, 4>& held,
                     int held_count, CollectiveStart start, MPI_Request* request) {
  auto* op = new PendingCollective(id, comm, std::move(start), request);
  op->held().copy(args, held, held_count);
  enqueue(comm, op);
  return MPI_SUCCESS;
}

int free_communicator(MPI_Comm* comm) {
  if (!busy(*comm)) return free_now(comm);
  enqueue(*comm, new PendingFree(*comm));
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm* comm) {
  Guard g;
  if (sequences_active()) progress_sequences();
  return free_communicator(comm);
}

void drain_sequences() {
  if (!sequences_active()) return;
  poll_until_done([](int* done) {
    progress_sequences();
    *done = g_sequenced.load(std::memory_order_relaxed) == 0;
    return MPI_SUCCESS;
  });
}

std::vector<SequenceState> describe_sequences() {
  std::vector<SequenceState> out;
  for (const auto& [bits, s] : sequences()) {
    std::string what = s.holder ? s.holder->describe() : "";
    if (!s.waiting.empty()) {
      what += what.empty() ? "waiting: " : "; behind it: ";
      for (std::size_t i = 0; i < s.waiting.size(); ++i) what += (i ? ", " : "") + s.waiting[i]->describe();
    }
    out.push_back({handle_from_bits<MPI_Comm>(bits), what, true});
  }
  for (const auto& op : started()) {
    const auto* c = static_cast<const PendingCollective*>(op.get());  // only collectives run on their own
    out.push_back({c->comm(), c->describe() + " (it waited) is in the MPI", false});
  }
  return out;
}

std::uint64_t deferred_count() {
  Guard g;
  return g_deferred;
}

}  // namespace tsmpi::serial

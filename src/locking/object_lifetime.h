// Object lifetime safety: existence checks with per-object locks on every handle kind (seed 004
// Alg. 3.1, generalized as in its Fig. 3.3) and a bounded quarantine of freed objects.
//
// tsmpi keeps a record for every handle the application got from a call that creates objects.
// A call that reads, updates or frees an object takes its record's lock (shared for reads, so
// Read List calls never serialize with each other; exclusive for Update List calls and frees,
// so they are atomic with respect to readers) and then checks that the object still exists. A
// call on a freed handle returns the error class of its kind through the error handler MPI
// prescribes. Freeing is deferred: the MPI frees the object only when it leaves the
// quarantine, so the MPI cannot hand out the same handle value for a new object meanwhile and
// a stale handle cannot look alive. docs/object-lifetime.md has the rules and their limits.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "fn_ids.h"
#include "locking/lifetime_rules.h"
#include "locking/read_biased_lock.h"
#include "runtime/handles.h"
#include "runtime/options.h"

namespace tsmpi::lifetime {

extern Rule g_rules[fn::kCount];

// Rules from the classification table; at MPI_Init.
void init(const Options& o);
// Whether object lifetime needs to see the function now (activation, after init()). A call that
// only reads objects of kinds the program has made none of yet has nothing to check: it stays
// pass-through until the first object of one of its kinds is adopted, which switches it on
// (before the creating call returns the handle, so no thread can hold the handle earlier).
bool needs(int fn_index);
// Really frees everything in quarantine; at MPI_Finalize, before PMPI_Finalize.
void finish();

// A handle argument that names no object at all: a Fortran handle the MPI's f2c turns into no
// handle (Open MPI's f2c of a freed communicator's index), given to a generated Fortran entry
// point whose MPI routine would not check it. The kind's error class, raised as for a freed one.
int refuse_not_a_handle(const CallArgs& args, Kind kind);

// A predefined handle told without asking the MPI (MPICH's builtin handle kind, an object inside
// Open MPI's library): such an object is never freed. After init().
bool builtin_handle(Kind kind, std::uintptr_t bits);

// Whether freeing (kind, bits) now would end the object: not predefined, and the application
// holds one reference (MPI_Comm_group twice gives two). Checking mode's free rule.
bool frees_last_reference(Kind kind, std::uintptr_t bits);

// Counters for TSMPI_STATS.
std::string stats_line();

// MPI-4 sessions (carried out by hand-written handlers): a session made, and one about to be
// finalized (MPI_SUCCESS, or the error raised for a finalized session).
void adopt_session(std::uintptr_t bits);
int end_session(std::uintptr_t bits);

// An object serialize mode created after the application's call returned (the communicator of
// a nonblocking duplication, locking/creation_in_flight.h). Called under serialize mode's lock:
// the record it may lock names a value the MPI just handed out, which no call that holds a
// record lock and waits for serialize mode's lock can name (it was freed and released).
void adopt_created(Kind kind, std::uintptr_t bits);

struct Record;

// The protection of one call, for the call's duration.
class Scope {
 public:
  Scope(fn::Id id, const CallArgs& args);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // False when the call is already over: a handle was freed (the error has been raised), or the
  // call was a free tsmpi carried out in the MPI's stead. result() is then its return value.
  bool proceed() const { return proceed_; }
  int result() const { return result_; }
  // After the call: adopts the handles it created, finishes the free it made.
  int finish(int rc);

 private:
  struct Held {
    Record* record = nullptr;  // record memory is never freed (records are recycled)
    Kind kind = Kind::kNone;   // the handle it was found for
    std::uintptr_t bits = 0;
    std::uint32_t generation = 0;  // of the record when locked: a reset record names a new object
    bool exclusive = false;
    bool locked = false;
    bool user = false;  // counted in the record's users (blocking call, lock released)
  };
  static constexpr int kInline = 6;

  void collect();  // the records of the handles the call names
  bool records_named_right();
  int add(Kind kind, std::uintptr_t bits, bool exclusive);  // index of its Held, -1 if untracked
  Held* held_at(int i) { return i < kInline ? &inline_.held[i] : &overflow_[i - kInline]; }
  void lock_all();
  void unlock_all();
  int refuse(const Held& dead);  // unlocks; the error raised
  int free_in_mpis_stead(Held& h);
  void adopt_outputs();

  fn::Id id_;
  const CallArgs& args_;
  Rule rule_;
  // Constructed only as far as used: most calls name one or two objects, and zeroing the
  // whole array was most of the cost of a call on an untracked handle.
  struct Inline {
    union {
      Held held[kInline];
    };
    Inline() {}
    ~Inline() {}
  } inline_;
  std::unique_ptr<Held[]> overflow_;
  int count_ = 0;
  int capacity_ = kInline;
  int freed_index_ = -1;
  Held* freed_ = nullptr;      // the object the call frees
  bool proceed_ = true;
  int result_ = MPI_SUCCESS;
  Record* quarantine_ = nullptr;  // pushed into quarantine once the locks are released
  Record* buried_ = nullptr;      // freed by the MPI in this call: into the graveyard afterwards
  Kind buried_kind_ = Kind::kNone;
};

// A call made from inside the MPI (an attribute copy callback's MPI_Comm_dup) created objects
// tsmpi does not track: a record of an object the MPI freed earlier under the same handle value
// must not make them look freed. After the call, with its result.
int nested_created(const CallArgs& args, int rc);

// False when the call names only handles tsmpi cannot know (predefined ones, kinds the
// program made no object of) and creates none: then there is nothing to lock or check.
bool may_concern_tracked(const CallArgs& args);

// Functions that may take FastRead: they read the objects they name and no more (Access Only,
// Read List), name them as single handles, and do not wait for other processes.
extern bool g_fast_read[fn::kCount];
// The wrapper mode (runtime/activation_rules.h) a call that waits for a kind takes when the
// program makes its first object of that kind: kHooked, or kLifetimeRead when nothing else
// needs the call (set by activate()).
extern std::uint8_t g_mode_when_on[fn::kCount];

// A read without the record's lock: the call names one tracked object, its record is found in
// a per-thread cache (records are never freed, so a cached pointer is a record, checked to still
// name the handle), and while the record's lock is read-biased the call only publishes that it
// reads it (locking/read_biased_lock.h) and checks it is alive. A writer (an update, a free, the
// quarantine releasing it, the record's reuse) waits for such readers, so the guarantee of
// Alg. 3.1 holds: no call touches an object the MPI frees under it.
class FastRead {
 public:
  enum Result {
    kNothing,  // no tracked object named: nothing to check
    kReading,  // alive, read-protected until this FastRead ends
    kLock,     // the usual Scope must decide (two objects, a lock not biased, a freed handle)
  };
  Result begin(const CallArgs& args);
  // The same for a call whose one object is the single handle `bits` of `kind` (kLifetimeRead).
  Result begin_one(Kind kind, std::uintptr_t bits);
  ~FastRead() {
    if (slot_) ReadBiasedLock::end_read(slot_);
  }

 private:
  Result read(Kind kind, std::uintptr_t bits);
  [[gnu::noinline]] Result read_looked_up(Kind kind, std::uintptr_t bits);
  ReaderSlot* slot_ = nullptr;
};

template <class Body>
int guarded(fn::Id id, const CallArgs& args, Body&& body) {
  if (g_fast_read[id]) {
    FastRead fast;
    if (fast.begin(args) != FastRead::kLock) return body();
    // kLock: it found a tracked object, so may_concern_tracked would say yes.
  } else if (!may_concern_tracked(args)) {
    return body();
  }
  Scope scope(id, args);
  if (!scope.proceed()) return scope.result();
  return scope.finish(body());
}

}  // namespace tsmpi::lifetime

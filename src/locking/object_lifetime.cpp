#include "runtime/mpi_version.h"
#include "locking/object_lifetime.h"

#include <link.h>
#include "runtime/concurrent_maps.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "checks/checks.h"
#include "checks/use_after_free.h"
#include "locking/backoff.h"
#include "locking/collective_sequence.h"
#include "locking/object_registry.h"
#include "locking/read_biased_lock.h"
#include "locking/serialize_lock.h"
#include "runtime/activation.h"
#include "runtime/function_table.h"
#include "runtime/source_tag_key.h"

namespace tsmpi::lifetime {

Rule g_rules[fn::kCount];
bool g_fast_read[fn::kCount];
std::uint8_t g_mode_when_on[fn::kCount];

enum class State : std::uint8_t {
  kAlive,
  kFreeing,      // a blocking free (MPI_Win_free, MPI_File_close, ...) is under way
  kQuarantined,  // freed by the application, not yet by the MPI
  kReleased,     // freed by the MPI: the value may come back for a new object
  kRecycled,     // out of the registry, waiting to be reused for another handle value
};

struct Record {
  // Shared: calls reading the object (or, while it is biased, a reader's slot naming it: see
  // FastRead); exclusive: updates and frees.
  ReadBiasedLock lock;
  // The handle this record is for: written only under the exclusive lock, while the record is
  // out of the registry (recycling); a call that found the record checks it once locked.
  Kind kind = Kind::kNone;
  std::uintptr_t bits = 0;
  State state = State::kAlive;        // written under the exclusive lock
  std::atomic<int> refs{1};           // references the application holds (MPI_Comm_group twice: 2)
  std::atomic<int> users{0};          // blocking calls using it without holding the lock
  // Its entries in the quarantine (an object the MPI hands out again, MPI_Comm_group, can be
  // freed again while an earlier reference waits there): not recycled while any remain.
  std::atomic<int> quarantined{0};
  std::uint32_t generation = 0;       // objects this handle value has named (under the lock)
  // Freed by the MPI at once, never kept in quarantine: it holds an object the program frees
  // after it (a stream communicator's MPIX_Stream, whose free fails while one is attached).
  std::atomic<bool> pinned{false};
  checks::FreedBy freed_by;           // who freed it (TSMPI_CHECK only)
};

namespace {

struct Key {
  Kind kind;
  std::uintptr_t bits;
};
struct KeyHashCompare {
  std::size_t hash(const Key& k) const {
    return MixedHash{}(static_cast<std::uint64_t>(k.bits) * 16 + static_cast<std::uint64_t>(k.kind));
  }
  bool equal(const Key& a, const Key& b) const { return a.kind == b.kind && a.bits == b.bits; }
};
// One record per handle value tsmpi knows: alive, in quarantine, or freed by the MPI and kept a
// while so that a stale handle is still refused. When the MPI reuses a value for a new object
// the record is reset in place (a new generation). Records freed by the MPI beyond the graveyard
// (below) leave the map and are reused for other values; record memory is never given back, so
// a pointer a call found stays a Record, and the call checks it still names its handle.
using Registry = ConcurrentHashMap<Key, Record*, KeyHashCompare>;
Registry g_registry;

unsigned g_quarantine_bound = 64;
// Records per kind ever made: a kind the program never made objects of needs no lookup.
std::atomic<unsigned long> g_live[kKindCount];
bool g_on = false;  // TSMPI_LIFETIME
std::uintptr_t g_null_bits[kKindCount];  // null_handle(kind), for the fast read

struct Counters {
  std::atomic<unsigned long> adopted{0}, refused{0}, deferred{0}, released{0};
};
Counters g_counters;

// ---- handles the application may not free, and keys ---------------------------------------

bool builtin(Kind kind, std::uintptr_t bits);

bool predefined(Kind kind, std::uintptr_t bits) {
  if (bits == null_handle(kind) || builtin(kind, bits)) return true;
  switch (kind) {
    case Kind::Comm:
      return bits == handle_bits(MPI_COMM_WORLD) || bits == handle_bits(MPI_COMM_SELF);
    case Kind::Group: return bits == handle_bits(MPI_GROUP_EMPTY);
    case Kind::Errhandler:
      return bits == handle_bits(MPI_ERRORS_ARE_FATAL) || bits == handle_bits(MPI_ERRORS_RETURN)
#if TSMPI_HAVE_ERRORS_ABORT
             || bits == handle_bits(MPI_ERRORS_ABORT)
#endif
          ;
    case Kind::Info: return bits == handle_bits(MPI_INFO_ENV);
    case Kind::Message: return bits == handle_bits(MPI_MESSAGE_NO_PROC);
    case Kind::Datatype: {
      int ni, na, nd, combiner = MPI_COMBINER_NAMED;
      serial::locked([&] { return PMPI_Type_get_envelope(handle_from_bits<MPI_Datatype>(bits), &ni, &na, &nd, &combiner); });
      return combiner == MPI_COMBINER_NAMED;
    }
    default: return false;
  }
}

// Attribute keys and the kind of object they are for (which free function releases them).
struct KeyvalOwner {
  std::uintptr_t keyval;
  Kind owner;
};
std::mutex g_keyvals_mutex;
std::vector<KeyvalOwner> g_keyvals;
// Kinds the program has made attribute keys for: their objects may carry attributes.
std::atomic<bool> g_keyvals_made[kKindCount];

Kind keyval_owner(fn::Id id) {
  std::string_view name = kFunctions[id].name;
  if (name.find("Type_") != std::string_view::npos) return Kind::Datatype;
  if (name.find("Win_") != std::string_view::npos) return Kind::Win;
  return Kind::Comm;  // MPI_Comm_create_keyval and MPI-1's MPI_Keyval_create
}

Kind owner_of_keyval(std::uintptr_t keyval) {
  std::lock_guard<std::mutex> g(g_keyvals_mutex);
  for (const auto& k : g_keyvals)
    if (k.keyval == keyval) return k.owner;
  return Kind::Comm;
}

// An object that may carry attributes is freed by the MPI in the application's call, not kept
// in quarantine: the MPI runs the attributes' delete callbacks when it destroys the object, which
// for a datatype still used by a derived type or a pending operation is later than the free, and
// in an order (and after a failing callback) only the MPI knows.
bool may_have_attributes(Kind k) { return g_keyvals_made[static_cast<int>(k)].load(std::memory_order_acquire); }

// ---- records of objects the MPI freed --------------------------------------------------------

// Per kind, the records of objects the MPI freed, oldest first: kept in the registry (a stale
// handle is refused) until kGraveyardPerQuarantine times the quarantine's bound more are freed,
// then recycled. So the registry follows the objects alive, not the handle values ever seen
// (with many threads Open MPI hands out ever new addresses).
constexpr unsigned kGraveyardPerQuarantine = 4;
constexpr unsigned kGraveyardMin = 256;
struct Graveyard {
  std::mutex mutex;
  std::deque<Record*> records;
};
Graveyard g_graveyard[kKindCount];
std::mutex g_pool_mutex;
std::vector<Record*> g_pool;  // recycled records

// Takes `r` (freed by the MPI, just unlocked) out of the registry for reuse, unless it was
// revived or is in use meanwhile.
// `r` locked exclusively by `l`, which this unlocks if it recycles.
void recycle_locked(Record* r, std::unique_lock<ReadBiasedLock>& l) {
  if (r->state != State::kReleased || r->users.load(std::memory_order_acquire) != 0 ||
      r->quarantined.load(std::memory_order_acquire) != 0)
    return;
  g_registry.erase(Key{r->kind, r->bits});
  r->state = State::kRecycled;
  r->kind = Kind::kNone;
  r->bits = 0;
  l.unlock();
  std::lock_guard<std::mutex> g(g_pool_mutex);
  g_pool.push_back(r);
}

void recycle(Record* r) {
  std::unique_lock<ReadBiasedLock> l(r->lock);
  recycle_locked(r, l);
}

// `r` was freed by the MPI (not locked by the caller).
void bury(Record* r, Kind kind) {
  Graveyard& y = g_graveyard[static_cast<int>(kind)];
  const std::size_t bound = std::max<std::size_t>(kGraveyardMin, std::size_t{kGraveyardPerQuarantine} * g_quarantine_bound);
  std::vector<Record*> out;
  {
    std::lock_guard<std::mutex> g(y.mutex);
    y.records.push_back(r);
    while (y.records.size() > bound) {
      out.push_back(y.records.front());
      y.records.pop_front();
    }
  }
  for (Record* old : out) recycle(old);
}

// A record for a new handle value: a recycled one, or a new one.
Record* make_record(Kind kind, std::uintptr_t bits) {
  Record* r = nullptr;
  {
    std::lock_guard<std::mutex> g(g_pool_mutex);
    if (!g_pool.empty()) {
      r = g_pool.back();
      g_pool.pop_back();
    }
  }
  if (!r) r = new Record;
  std::unique_lock<ReadBiasedLock> l(r->lock);
  r->kind = kind;
  r->bits = bits;
  r->pinned.store(false, std::memory_order_relaxed);
  r->state = State::kAlive;
  r->refs.store(1, std::memory_order_release);
  ++r->generation;
  r->freed_by = checks::FreedBy{};
  return r;
}

void give_back(Record* r) {
  {
    std::unique_lock<ReadBiasedLock> l(r->lock);
    r->state = State::kRecycled;
    r->kind = Kind::kNone;
    r->bits = 0;
  }
  std::lock_guard<std::mutex> g(g_pool_mutex);
  g_pool.push_back(r);
}

// ---- really freeing -----------------------------------------------------------------------

bool deferrable(Kind k) {
  switch (k) {
    case Kind::Comm: case Kind::Group: case Kind::Datatype: case Kind::Op:
    case Kind::Errhandler: case Kind::Info: case Kind::Keyval:
      return true;
    default:
      return false;
  }
}

int mpi_free(Kind kind, std::uintptr_t bits) {
  switch (kind) {
    case Kind::Comm: {
      MPI_Comm c = handle_from_bits<MPI_Comm>(bits);
      // Serialize mode frees it once what waits on it went to the MPI (collective_sequence.h).
      return serial::enabled() ? serial::free_communicator(&c) : PMPI_Comm_free(&c);
    }
    case Kind::Group: { MPI_Group h = handle_from_bits<MPI_Group>(bits); return PMPI_Group_free(&h); }
    case Kind::Datatype: { MPI_Datatype h = handle_from_bits<MPI_Datatype>(bits); return PMPI_Type_free(&h); }
    case Kind::Op: { MPI_Op h = handle_from_bits<MPI_Op>(bits); return PMPI_Op_free(&h); }
    case Kind::Errhandler: { MPI_Errhandler h = handle_from_bits<MPI_Errhandler>(bits); return PMPI_Errhandler_free(&h); }
    case Kind::Info: { MPI_Info h = handle_from_bits<MPI_Info>(bits); return PMPI_Info_free(&h); }
    case Kind::Keyval: {
      int k = static_cast<int>(bits);
      Kind owner = owner_of_keyval(bits);
      {
        std::lock_guard<std::mutex> g(g_keyvals_mutex);
        std::erase_if(g_keyvals, [&](const KeyvalOwner& o) { return o.keyval == bits; });
      }
      if (owner == Kind::Datatype) return PMPI_Type_free_keyval(&k);
      if (owner == Kind::Win) return PMPI_Win_free_keyval(&k);
      return PMPI_Comm_free_keyval(&k);
    }
    default: return MPI_SUCCESS;
  }
}

// Freed objects of one kind, oldest first, with the reference tsmpi kept for each.
struct Quarantine {
  std::mutex mutex;
  std::deque<Record*> entries;
};
Quarantine g_quarantine[kKindCount];

void release(Record* r) {
  // Nobody uses it (users == 0, checked by the caller), and no call on it can get past its
  // existence check; the exclusive lock orders this with such checks.
  const Kind kind = r->kind;  // not recycled: it is in quarantine, not freed by the MPI
  {
    std::unique_lock<ReadBiasedLock> l(r->lock);
    r->quarantined.fetch_sub(1, std::memory_order_acq_rel);
    // The application's free already succeeded; an error now has no one to go to.
    serial::locked([&] { return mpi_free(r->kind, r->bits); });
    // Revived meanwhile (the MPI handed out the same object again, MPI_Comm_group): the free
    // only gave back the reference tsmpi kept, the object lives on.
    if (r->state != State::kQuarantined) {
      g_counters.released.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    r->state = State::kReleased;
  }
  g_counters.released.fetch_add(1, std::memory_order_relaxed);
  bury(r, kind);
}

// Keeps `r` in quarantine; releases the oldest entries beyond the bound that no call uses.
void quarantine(Record* r) {
  Quarantine& q = g_quarantine[static_cast<int>(r->kind)];
  std::vector<Record*> out;
  {
    std::lock_guard<std::mutex> g(q.mutex);
    q.entries.push_back(r);
    for (auto it = q.entries.begin(); q.entries.size() > g_quarantine_bound && it != q.entries.end();) {
      if ((*it)->users.load(std::memory_order_acquire) == 0) {
        out.push_back(*it);
        it = q.entries.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Record* e : out) release(e);
}

// ---- errors ---------------------------------------------------------------------------------

int error_class(Kind k) {
  switch (k) {
    case Kind::Comm: return MPI_ERR_COMM;
    case Kind::Win: return MPI_ERR_WIN;
    case Kind::File: return MPI_ERR_FILE;
    case Kind::Group: return MPI_ERR_GROUP;
    case Kind::Datatype: return MPI_ERR_TYPE;
    case Kind::Op: return MPI_ERR_OP;
    case Kind::Info: return MPI_ERR_INFO;
    case Kind::Keyval: return MPI_ERR_KEYVAL;
    case Kind::Message: return MPI_ERR_REQUEST;
#if TSMPI_HAVE_SESSIONS
    case Kind::Session: return MPI_ERR_SESSION;
#endif
    default: return MPI_ERR_ARG;  // MPI has no class for error handlers
  }
}

// Raises `cls` on the handler MPI prescribes: that of the call's communicator, window or file
// when it still exists, else the file default (MPI_FILE_NULL's) for file calls, else the
// process default (MPI_COMM_SELF's in MPI-4, MPI_COMM_WORLD's before).
int raise_unlocked(const CallArgs& args, const Key* dead, int cls) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.use != Use::In && h.use != Use::InOut) continue;
    if (h.kind != Kind::Comm && h.kind != Kind::Win && h.kind != Kind::File) continue;
    if (!significant(args, h)) continue;  // MPI_Intercomm_create's peer_comm off the leader
    std::uintptr_t bits = read_handle(h.kind, h.where, 0);
    if (bits == null_handle(h.kind) || (dead->kind == h.kind && dead->bits == bits)) continue;
    if (h.kind == Kind::Comm) return PMPI_Comm_call_errhandler(handle_from_bits<MPI_Comm>(bits), cls), cls;
    if (h.kind == Kind::Win) return PMPI_Win_call_errhandler(handle_from_bits<MPI_Win>(bits), cls), cls;
    return PMPI_File_call_errhandler(handle_from_bits<MPI_File>(bits), cls), cls;
  }
  if (dead->kind == Kind::File) return PMPI_File_call_errhandler(MPI_FILE_NULL, cls), cls;
#if TSMPI_MPI4_ERROR_SEMANTICS
  PMPI_Comm_call_errhandler(MPI_COMM_SELF, cls);
#else
  PMPI_Comm_call_errhandler(MPI_COMM_WORLD, cls);
#endif
  return cls;
}

// Where Open MPI's predefined objects lie: they are the library's globals (ompi_mpi_comm_world,
// ompi_mpi_int, ...), and a program that names one has it copied into its own data by a copy
// relocation (the executable's MPI_COMM_WORLD is then &its copy, which the library uses too).
// Objects the program makes are on the heap, never in either. Found once at MPI_Init.
struct Span {
  std::uintptr_t begin = 0, end = 0;
  bool holds(std::uintptr_t a) const { return a >= begin && a < end; }
};
Span g_mpi_library, g_executable;

int find_static_data(dl_phdr_info* info, std::size_t, void*) {
  Span* span = !info->dlpi_name || !*info->dlpi_name        ? &g_executable  // listed first
               : std::strstr(info->dlpi_name, "/libmpi.so") ? &g_mpi_library
                                                            : nullptr;
  if (!span || span->end) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    std::uintptr_t b = info->dlpi_addr + ph.p_vaddr, e = b + ph.p_memsz;
    if (!span->begin || b < span->begin) span->begin = b;
    span->end = std::max(span->end, e);
  }
  return g_mpi_library.end && g_executable.end;
}

// A predefined handle, told without a lookup: MPICH's builtin handle kind, or an object in the
// MPI library's or the executable's static data (Open MPI). Such handles are never in the
// registry.
bool builtin(Kind kind, std::uintptr_t bits) {
#ifdef MPICH
  (void)kind;
  return mpich_builtin(bits);
#else
  return kind != Kind::Keyval && (g_executable.holds(bits) || g_mpi_library.holds(bits));
#endif
}

int raise(const CallArgs& args, const Key* dead, int cls) {
  return serial::locked([&] { return raise_unlocked(args, dead, cls); });
}

// A call on a freed object, counted and (TSMPI_CHECK) reported; under the record's lock, which
// guards who freed it.
void note_refusal(int fn, const Record& r) {
  g_counters.refused.fetch_add(1, std::memory_order_relaxed);
  if (checks::g_on) checks::report_use_after_free(fn, kind_name(r.kind), r.bits, r.freed_by);
}

Record* find_recorded(Kind kind, std::uintptr_t bits) {
  Registry::const_accessor a;
  return g_registry.find(a, Key{kind, bits}) ? a->second : nullptr;
}

Record* find(Kind kind, std::uintptr_t bits) {
  if (builtin(kind, bits) || g_live[static_cast<int>(kind)].load(std::memory_order_relaxed) == 0) return nullptr;
  return find_recorded(kind, bits);
}

}  // namespace

bool builtin_handle(Kind kind, std::uintptr_t bits) { return builtin(kind, bits); }

bool frees_last_reference(Kind kind, std::uintptr_t bits) {
  if (predefined(kind, bits)) return false;
  Record* r = find_recorded(kind, bits);
  // Untracked (object lifetime off for its kind): assume it is the only reference.
  return !r || r->refs.load(std::memory_order_acquire) <= 1;
}

// ---- setup ---------------------------------------------------------------------------------

namespace {

// Kinds whose first object switches a read-only call on (0: it is on from MPI_Init), and the
// kinds whose calls are switched on; the mutex orders the switching.
std::uint32_t g_waits_for_kinds[fn::kCount];
std::atomic<std::uint32_t> g_kinds_made{0};
std::mutex g_switching;

}  // namespace

bool needs(int fn_index) {
  if (g_rules[fn_index].access == Access::kNone) return false;
  const std::uint32_t waits = g_waits_for_kinds[fn_index];
  return waits == 0 || (g_kinds_made.load(std::memory_order_acquire) & waits) != 0;
}

namespace {

// The first object of `kind`: switch on the read-only calls that waited for it. The kind's bit
// is set only once they are all on, and every adopter of the kind waits for that: so no
// creating call returns a handle while a call that must check it still passes through.
void note_kind_made(Kind kind) {
  const std::uint32_t bit = kind_bit(kind);
  if (g_kinds_made.load(std::memory_order_acquire) & bit) return;
  std::lock_guard<std::mutex> g(g_switching);
  if (g_kinds_made.load(std::memory_order_relaxed) & bit) return;
  for (int i = 0; i < fn::kCount; ++i)
    if (g_waits_for_kinds[i] & bit) fn_active[i].store(g_mode_when_on[i], std::memory_order_release);
  g_kinds_made.fetch_or(bit, std::memory_order_release);
}

}  // namespace

void init(const Options& o) {
  g_quarantine_bound = o.quarantine;
  g_on = o.lifetime;
  if (!g_mpi_library.end) dl_iterate_phdr(find_static_data, nullptr);
  for (int k = 0; k < kKindCount; ++k) g_null_bits[k] = null_handle(static_cast<Kind>(k));
  for (int i = 0; i < fn::kCount; ++i) {
    g_rules[i] = rule_for(kFunctions[i], o);
    g_waits_for_kinds[i] = kinds_to_wait_for(kFunctions[i], g_rules[i]);
    g_fast_read[i] = fast_read_applies(kFunctions[i], g_rules[i]);
    g_mode_when_on[i] = kHooked;  // activate() may choose kLifetimeRead
  }
}

void finish() {
  for (Quarantine& q : g_quarantine) {
    std::deque<Record*> all;
    {
      std::lock_guard<std::mutex> g(q.mutex);
      all.swap(q.entries);
    }
    for (Record* r : all) release(r);
  }
}

int refuse_not_a_handle(const CallArgs& args, Kind kind) {
  g_counters.refused.fetch_add(1, std::memory_order_relaxed);
  const Key none{kind, 0};
  return raise(args, &none, error_class(kind));
}

std::string stats_line() {
  return "  objects: adopted=" + std::to_string(g_counters.adopted.load()) +
         " refused=" + std::to_string(g_counters.refused.load()) +
         " deferred_frees=" + std::to_string(g_counters.deferred.load()) +
         " released=" + std::to_string(g_counters.released.load()) +
         " records=" + std::to_string(g_registry.size()) + "\n";
}

// ---- one call ------------------------------------------------------------------------------

namespace {

// The records this thread looked up last, by handle (direct-mapped).
struct CachedRecord {
  std::uintptr_t bits;
  Kind kind;
  Record* record;
};
constexpr unsigned kRecordCache = 8;
TSMPI_TLS CachedRecord tl_records[kRecordCache];

CachedRecord& cache_entry(Kind kind, std::uintptr_t bits) {
  const std::uint64_t h = (static_cast<std::uint64_t>(bits) + static_cast<std::uint64_t>(kind)) * 0x9E3779B97F4A7C15ull;
  return tl_records[h >> 61];
}

// A predefined or null handle, or a kind the program has no object of: nothing to look up.
bool no_record_possible(Kind kind, std::uintptr_t bits) {
  return builtin(kind, bits) || bits == g_null_bits[static_cast<int>(kind)] ||
         g_live[static_cast<int>(kind)].load(std::memory_order_relaxed) == 0;
}

bool names(const Record* r, Kind kind, std::uintptr_t bits) {
  return r->kind == kind && r->bits == bits && r->state == State::kAlive;
}

}  // namespace

FastRead::Result FastRead::begin(const CallArgs& args) {
  Kind kind = Kind::kNone;
  std::uintptr_t bits = 0;
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (!tracked(h.kind) || (h.ignored != 0 && !significant(args, h))) continue;
    const std::uintptr_t b = read_handle(h.kind, h.where, 0);
    if (no_record_possible(h.kind, b)) continue;
    if (kind != Kind::kNone) return kLock;  // two objects: Scope locks them in order
    kind = h.kind;
    bits = b;
  }
  if (kind == Kind::kNone) return kNothing;
  return read(kind, bits);
}

FastRead::Result FastRead::begin_one(Kind kind, std::uintptr_t bits) {
  return no_record_possible(kind, bits) ? kNothing : read(kind, bits);
}

// The common case inline: this thread has a slot, the record is in its cache, biased, alive.
FastRead::Result FastRead::read(Kind kind, std::uintptr_t bits) {
  ReaderSlot* slot = tl_reader_slot;
  const CachedRecord& c = cache_entry(kind, bits);
  if (TSMPI_LIKELY(slot && c.record && c.kind == kind && c.bits == bits)) {
    if (!c.record->lock.try_read(slot)) return kLock;
    // Published and biased: no writer changes the record until the slot is cleared.
    if (TSMPI_LIKELY(names(c.record, kind, bits))) {
      slot_ = slot;
      return kReading;
    }
    ReadBiasedLock::end_read(slot);
  }
  return read_looked_up(kind, bits);
}

// The rest: a slot to assign, a record to look up, a record freed or reused since it was cached.
FastRead::Result FastRead::read_looked_up(Kind kind, std::uintptr_t bits) {
  ReaderSlot* slot = my_reader_slot();
  if (!slot) return kLock;
  CachedRecord& c = cache_entry(kind, bits);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!c.record || c.kind != kind || c.bits != bits) {
      Record* r = find_recorded(kind, bits);
      if (!r) return kNothing;  // made where tsmpi did not see it
      c = CachedRecord{bits, kind, r};
    }
    if (!c.record->lock.try_read(slot)) return kLock;
    if (names(c.record, kind, bits)) {
      slot_ = slot;
      return kReading;
    }
    ReadBiasedLock::end_read(slot);
    if (c.record->kind == kind && c.record->bits == bits) return kLock;  // freed: Scope refuses the call
    c.record = nullptr;  // the record was reused for another handle: look it up again
  }
  return kLock;
}

bool may_concern_tracked(const CallArgs& args) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (!tracked(h.kind)) continue;
    if (h.use != Use::In) return true;  // creates, frees or rewrites handles: always looked at
    std::uintptr_t bits = read_handle(h.kind, h.where, 0);
    if (!builtin(h.kind, bits) && g_live[static_cast<int>(h.kind)].load(std::memory_order_relaxed) != 0) return true;
  }
  return false;
}

void Scope::collect() {
  bool first_in = true;
  for (int i = 0; i < args_.handle_count; ++i) {
    const HandleArg& h = args_.handles[i];
    if (!tracked(h.kind) || h.use == Use::Out || h.use == Use::ArrayOut || h.count < 0) continue;
    // An argument the standard says is ignored here (non-root spawn arrays, a non-root
    // MPI_Gather's receive type) may be anything: NULL, or a freed handle.
    if (!significant(args_, h)) continue;
    for (int j = 0; j < h.count; ++j) {
      std::uintptr_t bits = read_handle(h.kind, h.where, j);
      if (bits == null_handle(h.kind)) continue;
      // The freed object is locked exclusively even by a check-only rule (MPI_Mrecv's message).
      bool exclusive = (rule_.access == Access::kFree && h.kind == rule_.freed && h.use == Use::InOut) ||
                       (rule_.locks && rule_.access == Access::kUpdate && first_in && h.use == Use::In);
      int at = add(h.kind, bits, exclusive);
      if (at >= 0 && exclusive && rule_.access == Access::kFree) freed_index_ = at;
    }
    if (h.use == Use::In) first_in = false;
  }
}

// Whether every locked record still names the handle it was found for (a record of an object
// the MPI freed long ago may be recycled between the lookup and the lock).
bool Scope::records_named_right() {
  for (int i = 0; i < count_; ++i) {
    const Held& h = *held_at(i);
    if (h.record->kind != h.kind || h.record->bits != h.bits) return false;
  }
  return true;
}

Scope::Scope(fn::Id id, const CallArgs& args) : id_(id), args_(args), rule_(g_rules[id]) {
  collect();
  if (count_ == 0) return;
  freed_ = freed_index_ >= 0 ? held_at(freed_index_) : nullptr;  // the array no longer grows
  lock_all();
  if (!records_named_right()) {
    // Looked up again: the recycled handle is no longer known (it then goes to the MPI as any
    // unknown handle does).
    unlock_all();
    for (int i = 0; i < count_ && i < kInline; ++i) inline_.held[i].~Held();
    count_ = 0;
    freed_index_ = -1;
    collect();
    if (count_ == 0) return;
    freed_ = freed_index_ >= 0 ? held_at(freed_index_) : nullptr;
    lock_all();
    if (!records_named_right()) {  // twice in a row: proceed without protection this once
      unlock_all();
      for (int i = 0; i < count_ && i < kInline; ++i) inline_.held[i].~Held();
      count_ = 0;
      freed_ = nullptr;
      freed_index_ = -1;
      return;
    }
  }
  for (int i = 0; i < count_; ++i) {
    Held& h = *held_at(i);
    h.generation = h.record->generation;
    if (h.record->state != State::kAlive) {
      result_ = refuse(h);
      proceed_ = false;
      return;
    }
  }
  if (freed_ && freed_->record->refs.load() <= 1) {
    Held& f = *freed_;
    if (deferrable(f.record->kind) && !rule_.blocking && g_quarantine_bound > 0 && !may_have_attributes(f.record->kind) &&
        !f.record->pinned.load(std::memory_order_relaxed)) {
      result_ = free_in_mpis_stead(f);
      proceed_ = false;
      return;
    }
    // The MPI frees it in this call; new calls are refused from now on.
    f.record->state = State::kFreeing;
    if (checks::g_on) checks::note_free(f.record->freed_by, id_, f.record->kind != Kind::Message);
  }
  if (!rule_.locks || rule_.blocking) {
    // Hold no lock across a call that may wait for other processes; count the call as a user
    // instead, so the object is not really freed under it.
    for (int i = 0; i < count_; ++i) {
      Held& h = *held_at(i);
      if (rule_.locks && &h != freed_) {
        h.record->users.fetch_add(1, std::memory_order_acq_rel);
        h.user = true;
      }
    }
    unlock_all();
    if (freed_) {
      // A blocking free waits until calls still using the object have returned.
      Backoff b;
      while (freed_->record->users.load(std::memory_order_acquire) != 0) b.pause();
    }
  }
}

Scope::~Scope() {
  unlock_all();
  for (int i = 0; i < count_; ++i) {
    Held& h = *held_at(i);
    if (h.user) h.record->users.fetch_sub(1, std::memory_order_acq_rel);
  }
  for (int i = 0; i < count_ && i < kInline; ++i) inline_.held[i].~Held();
  if (quarantine_) quarantine(quarantine_);
  if (buried_) bury(buried_, buried_kind_);
}

int Scope::add(Kind kind, std::uintptr_t bits, bool exclusive) {
  Record* r = find(kind, bits);
  if (!r) return -1;  // predefined, or made where tsmpi did not see it: nothing to check
  for (int i = 0; i < count_; ++i) {
    Held& h = *held_at(i);
    if (h.record == r) {
      h.exclusive = h.exclusive || exclusive;
      return i;
    }
  }
  if (count_ == capacity_) {
    int more = capacity_ - kInline + 16;
    auto bigger = std::make_unique<Held[]>(more);
    for (int i = kInline; i < count_; ++i) bigger[i - kInline] = std::move(overflow_[i - kInline]);
    overflow_ = std::move(bigger);
    capacity_ = kInline + more;
  }
  Held* h = count_ < kInline ? new (&inline_.held[count_]) Held : held_at(count_);
  h->record = r;
  h->kind = kind;
  h->bits = bits;
  h->exclusive = exclusive;
  return count_++;
}

void Scope::lock_all() {
  // One global order (by address) keeps two calls naming the same objects from deadlocking:
  // each round locks the lowest record not yet locked (calls name a handful of objects).
  for (int round = 0; round < count_; ++round) {
    Held* next = nullptr;
    for (int i = 0; i < count_; ++i) {
      Held* h = held_at(i);
      if (!h->locked && (!next || h->record < next->record)) next = h;
    }
    if (next->exclusive) next->record->lock.lock();
    else next->record->lock.lock_shared();
    next->locked = true;
  }
}

void Scope::unlock_all() {
  for (int i = 0; i < count_; ++i) {
    Held& h = *held_at(i);
    if (!h.locked) continue;
    if (h.exclusive) h.record->lock.unlock();
    else h.record->lock.unlock_shared();
    h.locked = false;
  }
}

int Scope::refuse(const Held& dead) {
  g_counters.refused.fetch_add(1, std::memory_order_relaxed);
  const Record& r = *dead.record;
  if (checks::g_on) checks::report_use_after_free(id_, kind_name(r.kind), r.bits, r.freed_by);
  const Key key{r.kind, r.bits};  // the record may be recycled once unlocked
  unlock_all();
  return raise(args_, &key, error_class(key.kind));
}

int Scope::free_in_mpis_stead(Held& f) {
  Record& r = *f.record;
  r.state = State::kQuarantined;
  r.quarantined.fetch_add(1, std::memory_order_acq_rel);
  if (checks::g_on) checks::note_free(r.freed_by, id_, r.kind != Kind::Message);
  for (int i = 0; i < args_.handle_count; ++i) {
    const HandleArg& h = args_.handles[i];
    if (h.kind == r.kind && h.use == Use::InOut) write_handle(h.kind, h.where, 0, null_handle(h.kind));
  }
  g_counters.deferred.fetch_add(1, std::memory_order_relaxed);
  quarantine_ = f.record;
  return MPI_SUCCESS;
}

int Scope::finish(int rc) {
  if (freed_) {
    Record& r = *freed_->record;
    std::unique_lock<ReadBiasedLock> l(r.lock, std::defer_lock);
    if (!freed_->locked) l.lock();  // a blocking free released it for the call
    if (r.generation == freed_->generation) {  // else the MPI already reused the value
      if (r.state == State::kFreeing) {
        r.state = rc == MPI_SUCCESS ? State::kReleased : State::kAlive;
        if (rc == MPI_SUCCESS) {  // kept in the graveyard once the locks are released
          buried_ = &r;
          buried_kind_ = r.kind;
        }
      } else if (rc == MPI_SUCCESS) {
        r.refs.fetch_sub(1, std::memory_order_acq_rel);  // one of several references
      }
    }
  }
  if (rc == MPI_SUCCESS) adopt_outputs();
  return rc;
}

// A handle a call returned: a new object, or one more reference to one tsmpi knows.
static void adopt(Kind kind, std::uintptr_t bits, const std::vector<Record*>& held) {
  if (predefined(kind, bits)) return;
  note_kind_made(kind);
  g_counters.adopted.fetch_add(1, std::memory_order_relaxed);
  Record* r = find_recorded(kind, bits);
  if (!r) {
    Record* fresh = make_record(kind, bits);
    {
      Registry::accessor a;
      if (g_registry.insert(a, Key{kind, bits})) {
        a->second = fresh;
        g_live[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
        return;
      }
      r = a->second;  // another thread recorded the value first
    }
    give_back(fresh);
  }
  if (std::find(held.begin(), held.end(), r) != held.end()) {
    r->refs.fetch_add(1, std::memory_order_acq_rel);  // locked by this very call, and alive
    return;
  }
  std::unique_lock<ReadBiasedLock> l(r->lock);
  if (r->kind != kind || r->bits != bits) {  // recycled after the lookup: look again
    l.unlock();
    adopt(kind, bits, held);
    return;
  }
  switch (r->state) {
    case State::kAlive: r->refs.fetch_add(1, std::memory_order_acq_rel); return;
    case State::kQuarantined:
      // The MPI handed out the object again (it still exists: tsmpi keeps a reference).
      r->state = State::kAlive;
      r->refs.store(1, std::memory_order_release);
      return;
    case State::kRecycled:  // not reached: a recycled record names no handle
    case State::kFreeing:
    case State::kReleased:
      // The MPI freed it and reused the value: a new object, in the same record.
      r->state = State::kAlive;
      r->refs.store(1, std::memory_order_release);
      r->pinned.store(false, std::memory_order_relaxed);
      ++r->generation;
      r->freed_by = checks::FreedBy{};
      return;
  }
}

void Scope::adopt_outputs() {
  bool any = false;
  for (int i = 0; i < args_.handle_count; ++i)
    any = any || args_.handles[i].use == Use::Out || args_.handles[i].use == Use::ArrayOut;
  if (!any) return;
  std::vector<Record*> held;
  for (int i = 0; i < count_; ++i) held.push_back(held_at(i)->record);
  bool on_stream = false;  // MPIX_Stream_comm_create(_multiplex): the communicator holds streams
  for (int i = 0; i < args_.handle_count; ++i) on_stream = on_stream || args_.handles[i].kind == Kind::Stream;
  for (int i = 0; i < args_.handle_count; ++i) {
    const HandleArg& h = args_.handles[i];
    if (!tracked(h.kind)) continue;
    if (h.use == Use::Out) {
      std::uintptr_t bits = read_handle(h.kind, h.where, 0);
      adopt(h.kind, bits, held);
      if (on_stream && h.kind == Kind::Comm)
        if (Record* r = find_recorded(h.kind, bits)) r->pinned.store(true, std::memory_order_relaxed);
      if (h.kind == Kind::Keyval && bits != null_handle(Kind::Keyval)) {
        std::lock_guard<std::mutex> g(g_keyvals_mutex);
        g_keyvals.push_back({bits, keyval_owner(id_)});
        g_keyvals_made[static_cast<int>(keyval_owner(id_))].store(true, std::memory_order_release);
      }
    } else if (h.use == Use::ArrayOut && h.kind == Kind::Datatype && h.count > 0 && args_.handle_count > 0) {
      // MPI_Type_get_contents: as many datatypes as the envelope of its input says.
      // The large-count envelope where the MPI has it: MPICH refuses the int one for a type
      // made by a _c constructor, and its datatypes then went unadopted.
      int combiner = 0;
      long long nd = 0;
      std::uintptr_t in = read_handle(Kind::Datatype, args_.handles[0].where, 0);
      const MPI_Datatype type = handle_from_bits<MPI_Datatype>(in);
#if TSMPI_HAVE_LARGE_COUNT
      MPI_Count ni = 0, na = 0, nl = 0, ndc = 0;
      int rc = serial::locked([&] { return PMPI_Type_get_envelope_c(type, &ni, &na, &nl, &ndc, &combiner); });
      nd = ndc;
#else
      int ni = 0, na = 0, ndi = 0;
      int rc = serial::locked([&] { return PMPI_Type_get_envelope(type, &ni, &na, &ndi, &combiner); });
      nd = ndi;
#endif
      if (rc != MPI_SUCCESS) continue;
      for (long long j = 0; j < std::min<long long>(nd, h.count); ++j)
        adopt(h.kind, read_handle(h.kind, h.where, static_cast<int>(j)), held);
    }
  }
}

int nested_created(const CallArgs& args, int rc) {
  if (rc != MPI_SUCCESS) return rc;
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.use != Use::Out || !tracked(h.kind)) continue;
    Record* r = find(h.kind, read_handle(h.kind, h.where, 0));
    if (!r) continue;
    // The caller (inside an outer call) may hold other records' locks: try, do not wait.
    std::unique_lock<ReadBiasedLock> l(r->lock, std::try_to_lock);
    for (int spin = 0; !l.owns_lock() && spin < 1000; ++spin) {
      sched_yield();
      (void)l.try_lock();  // owns_lock() says whether it took it
    }
    if (l.owns_lock()) recycle_locked(r, l);  // the value names an object tsmpi does not track now
  }
  return rc;
}

// ---- sessions ------------------------------------------------------------------------------

void adopt_session(std::uintptr_t bits) {
  if (g_on) adopt(Kind::Session, bits, {});
}

void adopt_created(Kind kind, std::uintptr_t bits) {
  if (g_on) adopt(kind, bits, {});
}

int end_session(std::uintptr_t bits) {
  Record* r = find(Kind::Session, bits);
  if (!r) return MPI_SUCCESS;
  std::unique_lock<ReadBiasedLock> l(r->lock);
  if (r->state != State::kAlive) {
    note_refusal(fn::kCount, *r);
    l.unlock();
    CallArgs none;
    const Key key{Kind::Session, bits};
    return raise(none, &key, error_class(Kind::Session));
  }
  r->state = State::kReleased;
  if (checks::g_on) checks::note_free(r->freed_by, fn::kCount, true);
  l.unlock();
  bury(r, Kind::Session);
  return MPI_SUCCESS;
}

}  // namespace tsmpi::lifetime

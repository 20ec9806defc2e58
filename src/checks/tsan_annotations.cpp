#include "checks/tsan_annotations.h"

#include "checks/request_slots.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checks/checks.h"
#include "diagnostics/backtrace.h"
#include "locking/serialize_lock.h"
#include "runtime/function_table.h"

namespace tsmpi::checks::tsan {

bool g_on = false;

// A buffer's bytes (outside the anonymous namespace: Scope::State holds them).
struct Range {
  std::uintptr_t begin;
  std::uintptr_t size;
};

namespace {

// ThreadSanitizer's public interface (compiler-rt sanitizer/tsan_interface.h), looked up in the
// process: libtsmpi is not linked to libtsan.
struct Api {
  void (*read_range_pc)(void* addr, unsigned long size, void* pc) = nullptr;
  void (*write_range_pc)(void* addr, unsigned long size, void* pc) = nullptr;
  void (*acquire)(void* addr) = nullptr;
  void (*release)(void* addr) = nullptr;
  void* (*get_current_fiber)() = nullptr;
  void* (*create_fiber)(unsigned flags) = nullptr;
  void (*destroy_fiber)(void* fiber) = nullptr;
  void (*switch_to_fiber)(void* fiber, unsigned flags) = nullptr;
  void (*set_fiber_name)(void* fiber, const char* name) = nullptr;
  void (*func_entry)(void* call_pc) = nullptr;
  void (*func_exit)() = nullptr;
  // TSan's dynamic annotations (tsan_interface_ann.cpp)
  void (*ignore_sync_begin)(const char* file, int line) = nullptr;
  void (*ignore_sync_end)(const char* file, int line) = nullptr;
};
Api api;
constexpr unsigned kSwitchNoSync = 1;  // __tsan_switch_to_fiber_no_sync

template <class F>
bool resolve(F*& f, const char* name) {
  f = reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, name));
  return f != nullptr;
}

// What the annotations do for a function (bits), set at init.
enum : std::uint16_t {
  kData = 1,          // point-to-point with message buffers (or a persistent init of one)
  kNonblocking = 2,   // returns a request: its initiation happens before its completion
  kCompletes = 4,     // wait and test families
  kFrees = 8,         // MPI_Request_free
  kCollective = 16,   // collective on a communicator, window or file
  kProbe = 32,        // probes: a message found was sent before
  kWinSync = 64,      // RMA synchronization (lock, unlock, flush, post, start, ...)
  kStart = 128,       // MPI_Start, MPI_Startall: a persistent request starts again
  kGrequestDone = 256,  // MPI_Grequest_complete
};
std::uint16_t g_role[fn::kCount];
// The exported wrapper of each function: its last byte + 1, the innermost frame of the accesses
// TSan reports, so that a report names the MPI call (TSan takes the instruction before each
// frame's address; the wrapper's last instruction is its own, not one inlined into it).
void* g_entry[fn::kCount];

// libtsmpi's executable segments: frames there are not the program's.
struct Segment {
  std::uintptr_t begin, end;
};
Segment g_self[4];
int g_self_count = 0;

bool in_self(const void* pc) {
  auto a = reinterpret_cast<std::uintptr_t>(pc);
  for (int i = 0; i < g_self_count; ++i)
    if (a >= g_self[i].begin && a < g_self[i].end) return true;
  return false;
}

void find_self() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&find_self), &info) || !info.dli_fbase) return;
  struct Search {
    const void* base;
  } search{info.dli_fbase};
  dl_iterate_phdr(
      [](dl_phdr_info* m, std::size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        bool mine = false;
        for (int i = 0; i < m->dlpi_phnum; ++i)
          if (m->dlpi_phdr[i].p_type == PT_LOAD && m->dlpi_addr + m->dlpi_phdr[i].p_vaddr ==
                                                       reinterpret_cast<std::uintptr_t>(s->base) &&
              m->dlpi_phdr[i].p_offset == 0)
            mine = true;
        if (!mine) return 0;
        for (int i = 0; i < m->dlpi_phnum && g_self_count < 4; ++i) {
          const ElfW(Phdr)& p = m->dlpi_phdr[i];
          if (p.p_type == PT_LOAD && (p.p_flags & PF_X))
            g_self[g_self_count++] = {m->dlpi_addr + p.p_vaddr, m->dlpi_addr + p.p_vaddr + p.p_memsz};
        }
        return 1;
      },
      &search);
  // The exported wrappers, by name, in libtsmpi itself.
  void* self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!self) return;
  for (int i = 0; i < fn::kCount; ++i) {
    if (!g_role[i]) continue;
    void* f = dlsym(self, kFunctions[i].name);
    if (!f) continue;
    Dl_info where{};
    void* entry = nullptr;  // the symbol's ElfW(Sym)
    std::size_t size = 1;
    if (dladdr1(f, &where, &entry, RTLD_DL_SYMENT) && entry && static_cast<const ElfW(Sym)*>(entry)->st_size > 0)
      size = static_cast<const ElfW(Sym)*>(entry)->st_size;
    g_entry[i] = static_cast<char*>(f) + size;
  }
  dlclose(self);
}

// ---- tokens: addresses TSan synchronizes on -------------------------------------------------

// tsmpi's own bookkeeping must create no order TSan sees between the program's threads: a spin
// lock in this uninstrumented library is invisible to it, a pthread mutex is not.
class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire))
      while (held_.load(std::memory_order_relaxed)) sched_yield();
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

// Per communicator, window or file: its messages (a send releases, the receive acquires) and
// its collectives and RMA synchronization (released at entry, acquired at exit). Kept for the
// process's lifetime: a handle value the MPI reuses shares them (more order, never a false
// report).
struct ObjectTokens {
  char message = 0;
  char collective = 0;
};
SpinLock g_objects_lock;
// Never destroyed (nor g_ops): nothing of TSan's is called after the process began to exit.
auto& g_objects = *new std::map<std::pair<int, std::uintptr_t>, std::unique_ptr<ObjectTokens>>;

ObjectTokens* tokens_of(const HandleRef& h) {
  if (h.kind != Kind::Comm && h.kind != Kind::Win && h.kind != Kind::File) return nullptr;
  std::lock_guard<SpinLock> g(g_objects_lock);
  auto& t = g_objects[{static_cast<int>(h.kind), h.bits}];
  if (!t) t = std::make_unique<ObjectTokens>();
  return t.get();
}

// ---- fibers: nonblocking operations ---------------------------------------------------------

// Making a fiber costs TSan a thread context mapped and cleared (~0.4 ms), so each initiating
// thread keeps the fibers of its completed operations for its next ones. A fiber serves one
// operation at a time, from its initiation until its completion (its clock holds that
// operation's accesses, which only its completion may order before anything), and operations
// of one thread only (whose earlier states its clock holds anyway).
struct FiberPool {
  SpinLock lock;
  std::vector<void*> idle;
  bool closed = false;  // its thread has ended: fibers given back are destroyed
};
constexpr std::size_t kIdlePerThread = 32;
// Beyond this many fibers alive, an operation's fiber is destroyed right after its initiation
// (TSan has a limit on threads alive; it keeps a finished one's history for its reports).
constexpr int kMaxLiveFibers = 2048;
std::atomic<int> g_live_fibers{0};

void destroy_fiber(void* fiber) {
  api.destroy_fiber(fiber);
  g_live_fibers.fetch_sub(1, std::memory_order_relaxed);
}

struct ThreadFibers {
  std::shared_ptr<FiberPool> pool;
  ~ThreadFibers() {
    if (!pool) return;
    std::lock_guard<SpinLock> g(pool->lock);
    pool->closed = true;
    for (void* f : pool->idle) destroy_fiber(f);
    pool->idle.clear();
  }
};
thread_local ThreadFibers tl_fibers;

// An operation with a request, from its initiation until its request completes or is freed. A
// fresh heap object each: its addresses are the operation's own tokens.
struct Operation {
  char start = 0;  // the calling thread at the call -> the operation's fiber
  char done = 0;   // the initiation (the fiber, for buffers) -> the thread that completes it
  ObjectTokens* object = nullptr;
  bool sends = false;       // a persistent send releases object->message at each MPI_Start
  bool receive = false;     // completion acquires object->message
  bool collective = false;  // completion acquires object->collective
  void* fiber = nullptr;    // kept until completion, then given back to its thread's pool
  std::shared_ptr<FiberPool> pool;

  Operation() = default;
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
  ~Operation() {
    if (fiber) destroy_fiber(fiber);  // freed, or its request value reused: never completed
  }
  // Completed: its fiber may serve its thread's next operation.
  void give_back_fiber() {
    if (!fiber) return;
    {
      std::lock_guard<SpinLock> g(pool->lock);
      if (!pool->closed && pool->idle.size() < kIdlePerThread) {
        pool->idle.push_back(fiber);
        fiber = nullptr;
      }
    }
    if (fiber) destroy_fiber(fiber);
    fiber = nullptr;
  }
};

SpinLock g_ops_lock;
auto& g_ops = *new std::unordered_map<std::uintptr_t, std::unique_ptr<Operation>>;

void add_operation(std::uintptr_t request, std::unique_ptr<Operation> op) {
  std::lock_guard<SpinLock> g(g_ops_lock);
  g_ops[request] = std::move(op);  // a stale entry of a reused value goes
}

std::unique_ptr<Operation> take_operation(std::uintptr_t request) {
  std::lock_guard<SpinLock> g(g_ops_lock);
  auto it = g_ops.find(request);
  if (it == g_ops.end()) return nullptr;
  std::unique_ptr<Operation> op = std::move(it->second);
  g_ops.erase(it);
  return op;
}

// A persistent (or generalized) request's operation stays: f(op) under the lock.
template <class F>
void with_operation(std::uintptr_t request, F&& f) {
  std::lock_guard<SpinLock> g(g_ops_lock);
  auto it = g_ops.find(request);
  if (it != g_ops.end()) f(*it->second);
}

// ---- buffers ------------------------------------------------------------------------------

constexpr std::size_t kMaxRanges = 16384;  // more blocks than this: the buffer is not annotated

struct TypeShape {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  bool dense() const { return size == extent && size == true_extent; }
};

bool shape_of(MPI_Datatype t, TypeShape* s) {
  if (t == MPI_DATATYPE_NULL) return false;
  return PMPI_Type_size_x(t, &s->size) == MPI_SUCCESS && PMPI_Type_get_extent_x(t, &s->lb, &s->extent) == MPI_SUCCESS &&
         PMPI_Type_get_true_extent_x(t, &s->true_lb, &s->true_extent) == MPI_SUCCESS;
}

class Blocks {
 public:
  explicit Blocks(std::vector<Range>& out) : out_(out) {}

  // `n` consecutive elements of `t` from `at`.
  bool run(MPI_Datatype t, const TypeShape& s, std::intptr_t at, long long n) {
    if (n <= 0 || s.size == 0) return true;
    if (s.dense()) return add(at + s.true_lb, static_cast<std::uintptr_t>(s.size) * static_cast<std::uintptr_t>(n));
    for (long long k = 0; k < n; ++k)
      if (!element(t, s, at + static_cast<std::intptr_t>(k * s.extent))) return false;
    return true;
  }

 private:
  bool add(std::intptr_t at, std::uintptr_t size) {
    if (size == 0) return true;
    auto begin = static_cast<std::uintptr_t>(at);
    if (!out_.empty() && out_.back().begin + out_.back().size == begin) {
      out_.back().size += size;
      return true;
    }
    if (out_.size() >= kMaxRanges) return false;
    out_.push_back({begin, size});
    return true;
  }

  bool element(MPI_Datatype t, const TypeShape& s, std::intptr_t at) {
    if (s.size == 0) return true;
    if (s.size == s.true_extent) return add(at + s.true_lb, static_cast<std::uintptr_t>(s.size));
    if (++depth_ > 8) return false;
    bool ok = constructed(t, at);
    --depth_;
    return ok;
  }

  // A type with holes: its blocks, from how it was built (MPI_Type_get_contents).
  bool constructed(MPI_Datatype t, std::intptr_t at) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS || combiner == MPI_COMBINER_NAMED)
      return false;
    std::vector<int> ints(ni);
    std::vector<MPI_Aint> addrs(na);
    std::vector<MPI_Datatype> types(nd);
    if (PMPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) return false;
    bool ok = blocks_of(combiner, ints, addrs, types, at);
    for (MPI_Datatype& d : types) {  // the constructed ones are copies the caller frees
      int i2, a2, d2, c2;
      if (PMPI_Type_get_envelope(d, &i2, &a2, &d2, &c2) == MPI_SUCCESS && c2 != MPI_COMBINER_NAMED) PMPI_Type_free(&d);
    }
    return ok;
  }

  bool blocks_of(int combiner, const std::vector<int>& i, const std::vector<MPI_Aint>& a,
                 const std::vector<MPI_Datatype>& d, std::intptr_t at) {
    TypeShape old;
    if (d.empty() || !shape_of(d[0], &old)) return false;
    switch (combiner) {
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:
        return element(d[0], old, at);
      case MPI_COMBINER_CONTIGUOUS:
        return run(d[0], old, at, i[0]);
      case MPI_COMBINER_VECTOR:  // count, blocklength, stride (in elements)
        for (int k = 0; k < i[0]; ++k)
          if (!run(d[0], old, at + static_cast<std::intptr_t>(k) * i[2] * old.extent, i[1])) return false;
        return true;
      case MPI_COMBINER_HVECTOR:  // count, blocklength; stride (bytes)
        for (int k = 0; k < i[0]; ++k)
          if (!run(d[0], old, at + static_cast<std::intptr_t>(k) * a[0], i[1])) return false;
        return true;
      case MPI_COMBINER_INDEXED:  // count, blocklengths[count], displacements[count] (elements)
        for (int k = 0; k < i[0]; ++k)
          if (!run(d[0], old, at + static_cast<std::intptr_t>(i[1 + i[0] + k]) * old.extent, i[1 + k])) return false;
        return true;
      case MPI_COMBINER_HINDEXED:  // count, blocklengths[count]; displacements[count] (bytes)
        for (int k = 0; k < i[0]; ++k)
          if (!run(d[0], old, at + a[k], i[1 + k])) return false;
        return true;
      case MPI_COMBINER_INDEXED_BLOCK:  // count, blocklength, displacements[count] (elements)
        for (int k = 0; k < i[0]; ++k)
          if (!run(d[0], old, at + static_cast<std::intptr_t>(i[2 + k]) * old.extent, i[1])) return false;
        return true;
      case MPI_COMBINER_HINDEXED_BLOCK:  // count, blocklength; displacements[count] (bytes)
        for (int k = 0; k < i[0]; ++k)
          if (!run(d[0], old, at + a[k], i[1])) return false;
        return true;
      case MPI_COMBINER_STRUCT:  // count, blocklengths[count]; displacements[count]; types[count]
        for (int k = 0; k < i[0]; ++k) {
          TypeShape s;
          if (!shape_of(d[k], &s) || !run(d[k], s, at + a[k], i[1 + k])) return false;
        }
        return true;
      default:  // subarray, darray, ...: not followed
        return false;
    }
  }

  std::vector<Range>& out_;
  int depth_ = 0;
};

// The contiguous byte ranges of a message buffer; false (nothing annotated) when the buffer
// moves no data or its datatype cannot be followed.
bool ranges_of(const BufferArg& b, std::vector<Range>& out) {
  if (!b.buf || b.count <= 0 || b.type == MPI_DATATYPE_NULL) return false;
  const std::size_t first = out.size();
  bool ok = serial::locked([&] {
    TypeShape s;
    if (!shape_of(b.type, &s)) return false;
    Blocks blocks(out);
    return blocks.run(b.type, s, reinterpret_cast<std::intptr_t>(b.buf), b.count);
  });
  if (!ok) out.resize(first);
  return ok;
}

// Which sides of the call's buffers: the send ranges (read) and receive ranges (written).
void buffer_ranges(fn::Id id, const CallArgs& args, std::vector<Range>& reads, std::vector<Range>& writes) {
  reads.clear();
  writes.clear();
  // MPI_Sendrecv_replace: one buffer, sent from (to args.peer, its dest) and received into.
  const bool replace = kFunctions[id].family == Family::kSendrecv && args.buffer_count == 1;
  for (int i = 0; i < args.buffer_count; ++i) {
    const BufferArg& b = args.buffers[i];
    if (replace) {
      if (args.peer != MPI_PROC_NULL) ranges_of(b, reads);
      if (b.peer != MPI_PROC_NULL) ranges_of(b, writes);
      continue;
    }
    if (b.peer == MPI_PROC_NULL) continue;  // moves no data
    ranges_of(b, b.receive ? writes : reads);
  }
}

bool sends(fn::Id id, const CallArgs& args) {
  if (kFunctions[id].family == Family::kSendrecv && args.buffer_count == 1) return true;
  for (int i = 0; i < args.buffer_count; ++i)
    if (!args.buffers[i].receive) return true;
  return false;
}

bool receives(const CallArgs& args) {
  for (int i = 0; i < args.buffer_count; ++i)
    if (args.buffers[i].receive) return true;
  return false;
}

void access(const std::vector<Range>& ranges, bool write, void* pc) {
  for (const Range& r : ranges)
    (write ? api.write_range_pc : api.read_range_pc)(reinterpret_cast<void*>(r.begin), r.size, pc);
}

// The program's frames of the calling thread, innermost first (tsmpi's own are left out), at
// most `max`: glibc's backtrace() (libgcc's unwinder, about 3 times faster here than libunwind's
// uncached steps; libunwind's cached trace keeps a per-thread cache whose destructor runs after
// TSan has let the thread go).
int program_frames(diag::Backtrace& bt, int max) {
  void* pcs[diag::Backtrace::kMaxFrames + 16];
  const int want = max + 16 < diag::Backtrace::kMaxFrames + 16 ? max + 16 : diag::Backtrace::kMaxFrames + 16;
  const int n = ::backtrace(pcs, want);
  int first = 1;  // this function
  while (first < n && in_self(pcs[first])) ++first;
  bt.frames = 0;
  for (int i = first; i < n && bt.frames < max && bt.frames < diag::Backtrace::kMaxFrames; ++i)
    bt.pc[bt.frames++] = pcs[i];
  return bt.frames;
}

// A request out-argument's value after the call, or the null request.
std::uintptr_t new_request(const CallArgs& args) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind == Kind::Request && h.use == Use::Out) return read_handle(Kind::Request, h.where, 0);
  }
  return null_handle(Kind::Request);
}


// A nonblocking operation: a fiber of its own, started from this thread now, reads and writes
// its buffers with the call's stack and releases its `done` token.
void start_operation(fn::Id id, Operation& op, const diag::Backtrace& frames, const std::vector<Range>& reads,
                     const std::vector<Range>& writes) {
  char name[96];
  std::snprintf(name, sizeof name, "%s in flight", kFunctions[id].name);
  void* caller = frames.frames > 0 ? frames.pc[0] : nullptr;
  if (caller) api.func_entry(caller);  // a new fiber's creation stack: the call site
  if (!tl_fibers.pool) tl_fibers.pool = std::make_shared<FiberPool>();
  void* fiber = nullptr;
  {
    std::lock_guard<SpinLock> g(tl_fibers.pool->lock);
    if (!tl_fibers.pool->idle.empty()) {
      fiber = tl_fibers.pool->idle.back();
      tl_fibers.pool->idle.pop_back();
    }
  }
  if (!fiber) {
    fiber = api.create_fiber(0);
    g_live_fibers.fetch_add(1, std::memory_order_relaxed);
  }
  api.set_fiber_name(fiber, name);
  api.release(&op.start);
  void* thread = api.get_current_fiber();
  api.switch_to_fiber(fiber, kSwitchNoSync);
  api.acquire(&op.start);
  for (int i = frames.frames - 1; i >= 0; --i) api.func_entry(frames.pc[i]);
  access(reads, false, g_entry[id]);
  access(writes, true, g_entry[id]);
  for (int i = 0; i < frames.frames; ++i) api.func_exit();
  api.release(&op.done);
  api.switch_to_fiber(thread, kSwitchNoSync);
  if (g_live_fibers.load(std::memory_order_relaxed) > kMaxLiveFibers) {
    destroy_fiber(fiber);
  } else {
    op.fiber = fiber;
    op.pool = tl_fibers.pool;
  }
  if (caller) api.func_exit();
}

void acquire_completion(const Operation& op) {
  api.acquire(const_cast<char*>(&op.done));
  if (op.object && op.receive) api.acquire(&op.object->message);
  if (op.object && op.collective) api.acquire(&op.object->collective);
}

bool sending_family(Family f) { return f == Family::kSend || f == Family::kBsend || f == Family::kSendrecv; }
bool receiving_family(Family f) { return f == Family::kRecv || f == Family::kMrecv || f == Family::kSendrecv; }

// TSMPI_CHECK as the process started, read without libc's environment (TSan asks for its
// options before the C library is initialized): raw system calls on /proc/self/environ.
bool checking_requested() {
  static const char* const kWanted[] = {"TSMPI_CHECK=warn", "TSMPI_CHECK=abort"};
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  char chunk[4096], entry[24];
  std::size_t length = 0;  // of the current entry, up to sizeof entry
  bool found = false;
  for (;;) {
    long n = syscall(SYS_read, fd, chunk, sizeof chunk);
    if (n <= 0) break;
    for (long i = 0; i < n && !found; ++i) {
      if (chunk[i] != '\0') {
        if (length < sizeof entry) entry[length] = chunk[i];
        ++length;
        continue;
      }
      for (const char* w : kWanted)
        if (length == std::strlen(w) && std::memcmp(entry, w, length) == 0) found = true;
      length = 0;
    }
    if (found) break;
  }
  syscall(SYS_close, fd);
  return found;
}

}  // namespace

struct Scope::State {
  fn::Id id;
  std::uint16_t role;
  HandleRef object;
  CallArgs args;                       // its pointers stay valid for the call
  void* caller = nullptr;              // the program's call site (blocking calls)
  std::vector<std::uintptr_t> before;  // request slots when the call began (completions, frees)
  std::vector<Range> reads, writes;    // the buffers' ranges
  bool busy = false;
};

namespace {
// One per thread, reused (a thread is in one hooked call at a time): no allocation per call,
// which TSan makes costly.
thread_local Scope::State tl_state;
}  // namespace

void init() {
  g_on = false;
  Api a;
  bool found = resolve(a.read_range_pc, "__tsan_read_range_pc") && resolve(a.write_range_pc, "__tsan_write_range_pc") &&
               resolve(a.acquire, "__tsan_acquire") && resolve(a.release, "__tsan_release") &&
               resolve(a.get_current_fiber, "__tsan_get_current_fiber") &&
               resolve(a.create_fiber, "__tsan_create_fiber") && resolve(a.destroy_fiber, "__tsan_destroy_fiber") &&
               resolve(a.switch_to_fiber, "__tsan_switch_to_fiber") &&
               resolve(a.set_fiber_name, "__tsan_set_fiber_name") && resolve(a.func_entry, "__tsan_func_entry") &&
               resolve(a.func_exit, "__tsan_func_exit") && resolve(a.ignore_sync_begin, "AnnotateIgnoreSyncBegin") &&
               resolve(a.ignore_sync_end, "AnnotateIgnoreSyncEnd");
  if (!found) return;
  api = a;
  static const std::string_view kWinSyncs[] = {
      "MPI_Win_complete", "MPI_Win_flush",  "MPI_Win_flush_all", "MPI_Win_flush_local", "MPI_Win_flush_local_all",
      "MPI_Win_lock",     "MPI_Win_lock_all", "MPI_Win_post",    "MPI_Win_start",       "MPI_Win_sync",
      "MPI_Win_test",     "MPI_Win_unlock", "MPI_Win_unlock_all", "MPI_Win_wait"};
  for (int i = 0; i < fn::kCount; ++i) {
    const Rule& r = g_rules[i];
    const FunctionInfo& f = kFunctions[i];
    std::uint16_t role = 0;
    if (r.moves_data) role |= kData;
    if (r.creates_request) role |= kNonblocking;
    if (r.completes) role |= kCompletes;
    if (r.frees_request) role |= kFrees;
    if (r.collective) role |= kCollective;
    if (f.family == Family::kProbe || f.family == Family::kMprobe) role |= kProbe;
    if (f.family == Family::kStart) role |= kStart;
    const std::string_view name = f.name;
    for (std::string_view w : kWinSyncs)
      if (name == w) role |= kWinSync;
    if (name == "MPI_Grequest_complete") role |= kGrequestDone;
    g_role[i] = role;
  }
  find_self();
  diag::g_plain_unwinder = true;
  g_on = true;
}

bool needs(int fn_index) { return g_on && g_role[fn_index] != 0; }

void Scope::begin(fn::Id id, const Objects& objects, const CallArgs& args, const void* return_address) {
  const std::uint16_t role = g_role[id];
  if (!role) return;
  state_ = tl_state.busy ? new State : &tl_state;
  State& s = *state_;
  s.busy = true;
  s.id = id;
  s.role = role;
  s.object = objects.in;
  s.args = args;
  s.before.clear();
  // The program's call site: the return address of the wrapper's frame when tsmpi's hooked path
  // is inlined into it (the exported MPI function jumps there), else from the stack.
  s.caller = in_self(return_address) ? nullptr : const_cast<void*>(return_address);
  const bool data = (role & kData) && args.buffer_count > 0;  // a persistent init moves no data now
  // Synchronization is ignored from here to the end of the call but for the annotations
  // themselves: what tsmpi does, the unwinder's locks and the datatype queries included, and
  // what the MPI does are not the program's order; TSan sees the order MPI defines only through
  // the tokens. The MPI's and tsmpi's locks would otherwise order any two threads that call MPI
  // one after the other and hide the program's races.
  api.ignore_sync_begin(__FILE__, __LINE__);
  if (data && !(role & kNonblocking)) {
    // A blocking call: this thread reads the send buffer now, at the call (before anything else
    // of tsmpi's runs).
    if (!s.caller) {
      diag::Backtrace bt;
      if (program_frames(bt, 1) > 0) s.caller = bt.pc[0];
    }
    buffer_ranges(id, args, s.reads, s.writes);
  }
  api.ignore_sync_end(__FILE__, __LINE__);
  if (data && !(role & kNonblocking)) {
    if (!s.reads.empty()) {
      if (s.caller) api.func_entry(s.caller);
      access(s.reads, false, g_entry[id]);
      if (s.caller) api.func_exit();
    }
  }
  if (role & (kCollective | kWinSync)) {
    if (ObjectTokens* t = tokens_of(objects.in)) api.release(&t->collective);
  }
  if (data && sends(id, args)) {
    if (ObjectTokens* t = tokens_of(objects.in)) api.release(&t->message);
  }
  if (role & (kCompletes | kFrees | kStart | kGrequestDone)) {
    for_each_request(args, [&](const HandleArg& h, int j) {
      std::uintptr_t r = read_handle(Kind::Request, h.where, j);
      s.before.push_back(r);
      if (r == null_handle(Kind::Request) || !(role & (kStart | kGrequestDone))) return;
      // A persistent request starts again (its send is a message of its communicator), or a
      // generalized request is done: what its completion will acquire.
      with_operation(r, [&](Operation& op) {
        api.release(&op.done);
        if ((role & kStart) && op.sends && op.object) api.release(&op.object->message);
      });
    });
  }
  api.ignore_sync_begin(__FILE__, __LINE__);
}

void Scope::end() {
  State& s = *state_;
  const bool ok = rc_ == MPI_SUCCESS;
  const std::uint16_t role = s.role;
  const Family family = kFunctions[s.id].family;
  const bool data = (role & kData) && s.args.buffer_count > 0;
  // Still ignoring synchronization (begin()): the stack and the buffers' ranges.
  std::uintptr_t request = null_handle(Kind::Request);
  diag::Backtrace bt;
  bt.frames = 0;
  if ((role & kNonblocking) && ok) {
    request = new_request(s.args);
    if (data && request != null_handle(Kind::Request)) {
      program_frames(bt, diag::Backtrace::kMaxFrames);
      buffer_ranges(s.id, s.args, s.reads, s.writes);
    }
  } else if (data && ok) {
    buffer_ranges(s.id, s.args, s.reads, s.writes);
  }
  api.ignore_sync_end(__FILE__, __LINE__);
  ObjectTokens* t = tokens_of(s.object);
  if ((role & kNonblocking) && ok) {
    if (request != null_handle(Kind::Request)) {
      auto op = std::make_unique<Operation>();
      op->object = t;
      op->sends = sending_family(family);
      op->receive = receiving_family(family) && (!data || receives(s.args));
      op->collective = role & kCollective;
      if (data) {
        start_operation(s.id, *op, bt, s.reads, s.writes);
      } else {
        api.release(&op->done);
      }
      add_operation(request, std::move(op));
    }
  } else if (data && ok) {
    // A blocking receive: this thread wrote the buffer, when the message came.
    if (t && receives(s.args)) api.acquire(&t->message);
    if (!s.writes.empty()) {
      if (s.caller) api.func_entry(s.caller);
      access(s.writes, true, g_entry[s.id]);
      if (s.caller) api.func_exit();
    }
  }
  if ((role & (kCollective | kWinSync)) && !(role & kNonblocking) && t) api.acquire(&t->collective);
  if ((role & kProbe) && ok && t) api.acquire(&t->message);
  if (role & (kCompletes | kFrees)) {
    // MPI_Wait and MPI_Waitall complete every active request, persistent ones too.
    const bool all = s.id == fn::MPI_Wait || s.id == fn::MPI_Waitall;
    std::size_t k = 0;
    for_each_request(s.args, [&](const HandleArg& h, int j) {
      std::uintptr_t was = s.before[k++];
      if (was == null_handle(Kind::Request)) return;
      if (role & kFrees) {
        if (ok) take_operation(was);  // freed: nobody learns when it completes
        return;
      }
      // A completed nonpersistent request is set to MPI_REQUEST_NULL (also when another of a
      // Waitall's requests failed).
      if (read_handle(Kind::Request, h.where, j) == null_handle(Kind::Request)) {
        if (std::unique_ptr<Operation> op = take_operation(was)) {
          acquire_completion(*op);
          op->give_back_fiber();
        }
      } else if (all && ok) {
        with_operation(was, [](const Operation& op) { acquire_completion(op); });
      }
    });
  }
  s.busy = false;
  if (state_ != &tl_state) delete state_;
  state_ = nullptr;
}

}  // namespace tsmpi::checks::tsan

// TSan's options, asked for at its start (the program's own definition, or TSAN_OPTIONS, take
// precedence): in checking mode, no reports from inside the MPI and tsmpi, whose memcpy and
// the like TSan intercepts without seeing their order (docs/checking.md).
extern "C" __attribute__((visibility("default"))) const char* __tsan_default_options() {
  return tsmpi::checks::tsan::checking_requested() ? "ignore_noninstrumented_modules=1" : "";
}

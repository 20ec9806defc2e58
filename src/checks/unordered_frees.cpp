#include <oneapi/tbb/spin_mutex.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "checks/happens_before/history.h"
#include "checks/happens_before/unordered_report.h"
#include "checks/unordered.h"
#include "diagnostics/report.h"
#include "locking/object_lifetime.h"

namespace tsmpi::checks::unordered {
namespace {

// Each thread's latest use of each object, kept by the thread itself (the hot path takes only
// its own, uncontended lock); a free looks through every thread's.
struct Uses {
  tbb::spin_mutex lock;
  std::unordered_map<std::uint64_t, hb::Event> last;
};

// Never destroyed: threads of the OpenMP runtime end after exit() has run destructors.
std::mutex& g_all_lock = *new std::mutex;
std::vector<std::shared_ptr<Uses>>& g_all = *new std::vector<std::shared_ptr<Uses>>;  // of the threads that run, and g_ended
// The latest uses of threads that ended, one per object: they may still be unordered with a
// free to come (a detached thread), but a program that starts threads all its life keeps one
// map, not one per thread it ever had.
std::shared_ptr<Uses>& g_ended = *new std::shared_ptr<Uses>([] {
  auto u = std::make_shared<Uses>();
  g_all.push_back(u);
  return u;
}());

struct MyUses {
  std::shared_ptr<Uses> uses;
  ~MyUses() {
    if (!uses) return;
    std::lock_guard<std::mutex> g(g_all_lock);
    {
      tbb::spin_mutex::scoped_lock a(g_ended->lock), b(uses->lock);
      for (auto& [key, e] : uses->last) g_ended->last[key] = e;
    }
    std::erase(g_all, uses);
  }
};
TSMPI_TLS MyUses tl_uses;

Uses& my_uses() {
  if (!tl_uses.uses) {
    auto u = std::make_shared<Uses>();
    std::lock_guard<std::mutex> g(g_all_lock);
    g_all.push_back(u);
    tl_uses.uses = u;
  }
  return *tl_uses.uses;
}

std::uint64_t key_of(Kind kind, std::uintptr_t bits) { return (static_cast<std::uint64_t>(bits) << 4) | static_cast<std::uint64_t>(kind); }

bool followed(Kind k) { return k != Kind::Request && k != Kind::Message && k != Kind::kNone; }

}  // namespace

void uses(fn::Id id, const CallArgs& args) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (!followed(h.kind) || !h.where) continue;
    if (h.use == Use::Out || h.use == Use::ArrayOut) continue;
    if (h.ignored && !significant(args, h)) continue;
    const int n = h.use == Use::In ? 1 : (h.count < 0 ? 0 : h.count);
    for (int k = 0; k < n; ++k) {
      const std::uintptr_t bits = read_handle(h.kind, h.where, k);
      // A predefined object is never freed by the program (MPI_COMM_WORLD, MPI_BYTE): nothing
      // to remember, and a message's datatype nearly always is one.
      if (bits == null_handle(h.kind) || lifetime::builtin_handle(h.kind, bits)) continue;
      const std::uint64_t key = key_of(h.kind, bits);
      Uses& u = my_uses();
      const hb::Epoch now = hb::now();
      tbb::spin_mutex::scoped_lock g(u.lock);
      auto [it, added] = u.last.try_emplace(key);
      if (added || it->second.at.value != now.value || it->second.mark.fn != id) it->second = hb::event_here(id);
    }
  }
}

// Groups and error handlers are handed out again by the MPI (MPI_Comm_group, MPI_Comm_get_errhandler
// on communicators that share one): several threads may each hold and free a reference of
// their own to one handle, which tells nothing about the object's end.
bool unique_references(Kind k) { return k != Kind::Group && k != Kind::Errhandler; }

void created(const CallArgs& args) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (!followed(h.kind) || !h.where || (h.use != Use::Out && h.use != Use::ArrayOut)) continue;
    const int n = h.use == Use::Out ? 1 : (h.count < 0 ? 0 : h.count);
    for (int k = 0; k < n; ++k) {
      const std::uintptr_t bits = read_handle(h.kind, h.where, k);
      if (bits == null_handle(h.kind)) continue;
      const std::uint64_t key = key_of(h.kind, bits);
      std::lock_guard<std::mutex> g(g_all_lock);
      for (auto& u : g_all) {
        tbb::spin_mutex::scoped_lock ul(u->lock);
        u->last.erase(key);
      }
    }
  }
}

Free::Free(fn::Id id, const CallArgs& args) {
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (!followed(h.kind) || !unique_references(h.kind) || !h.where || h.use != Use::InOut) continue;
    bits_ = read_handle(h.kind, h.where, 0);
    if (bits_ == null_handle(h.kind)) return;
    kind_ = h.kind;
    last_ = lifetime::frees_last_reference(kind_, bits_);
    me_ = hb::event_here(id);
    return;
  }
}

void Free::done(int rc) {
  if (kind_ == Kind::kNone || rc != MPI_SUCCESS) return;  // MPI_Op_free(MPI_SUM) frees nothing
  const std::uint64_t key = key_of(kind_, bits_);
  std::vector<hb::Event> unordered_uses;
  {
    std::lock_guard<std::mutex> g(g_all_lock);
    for (auto& u : g_all) {
      tbb::spin_mutex::scoped_lock ul(u->lock);
      auto it = u->last.find(key);
      if (it == u->last.end()) continue;
      const bool mine = it->second.at.slot == me_.at.slot;
      // One of several references (MPI_Comm_group twice) ends only the thread's own use of it.
      if (!last_ && !mine) continue;
      if (last_ && !mine && !hb::ordered_before_now(it->second.at)) unordered_uses.push_back(it->second);
      u->last.erase(it);  // the handle may name a new object after this
    }
  }
  const std::string object = std::string(kind_name(kind_)) + " " + diag::hex(bits_);
  for (const hb::Event& e : unordered_uses)
    hb::report_unordered(object,
                         "an object may be freed only after every call of another thread that uses it, "
                         "in an order the program sets (MPI-4.0 §11.6.2)",
                         e, me_);
}

}  // namespace tsmpi::checks::unordered

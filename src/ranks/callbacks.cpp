#include "ranks/callbacks.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fortran/redirect.h"
#include "runtime/handles.h"

namespace tsmpi::ranks {

namespace {
std::mutex g_handlers_mu;
std::unordered_map<std::uintptr_t, ErrhandlerFn*> g_handlers;  // by MPI_Errhandler

std::mutex g_stand_ins_mu;
// Private communicator -> the thread-rank ones it stands for, latest last: the MPI may hand a
// freed communicator's handle to a new one before the freeing thread drops its entry.
std::unordered_map<std::uintptr_t, std::vector<MPI_Comm>> g_stand_ins;
std::atomic<bool> g_any_stand_in{false};  // programs without thread-ranks never take the lock

MPI_Comm stood_in(MPI_Comm c) {
  if (!g_any_stand_in.load(std::memory_order_acquire)) return c;
  std::lock_guard g(g_stand_ins_mu);
  auto it = g_stand_ins.find(handle_bits(c));
  return it == g_stand_ins.end() || it->second.empty() ? c : it->second.back();
}

// The program's functions and extra_state of a keyval, given to the MPI as extra_state.
struct KeyvalFns {
  CopyFn* copy;
  DeleteFn* del;
  void* extra;
};

int copy_trampoline(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  const auto* f = static_cast<const KeyvalFns*>(extra);
  return f->copy(stood_in(oldcomm), keyval, f->extra, in, out, flag);
}

int delete_trampoline(MPI_Comm comm, int keyval, void* value, void* extra) {
  const auto* f = static_cast<const KeyvalFns*>(extra);
  return f->del(stood_in(comm), keyval, value, f->extra);
}

// One record per (copy, delete, extra_state): the MPI may call a keyval's functions after
// MPI_Comm_free_keyval (attributes still set), so records are never freed; a program making
// keyvals in a loop with the same arguments reuses one.
std::mutex g_keyvals_mu;
std::map<std::tuple<void*, void*, void*>, std::unique_ptr<KeyvalFns>> g_keyvals;

bool predefined_copy(void* f) {
  if (!f) return true;  // MPICH's MPI_COMM_NULL_COPY_FN
  if (f == reinterpret_cast<void*>(MPI_COMM_NULL_COPY_FN) || f == reinterpret_cast<void*>(MPI_COMM_DUP_FN)) return true;
#if defined(MPI_NULL_COPY_FN) && defined(MPI_DUP_FN)
  if (f == reinterpret_cast<void*>(MPI_NULL_COPY_FN) || f == reinterpret_cast<void*>(MPI_DUP_FN)) return true;
#endif
  return false;
}

bool predefined_delete(void* f) {
  if (!f || f == reinterpret_cast<void*>(MPI_COMM_NULL_DELETE_FN)) return true;
#ifdef MPI_NULL_DELETE_FN
  if (f == reinterpret_cast<void*>(MPI_NULL_DELETE_FN)) return true;
#endif
  return false;
}
}  // namespace

ErrhandlerFn* handler_function(MPI_Errhandler eh) {
  if (eh == MPI_ERRHANDLER_NULL) return nullptr;
  std::lock_guard g(g_handlers_mu);
  auto it = g_handlers.find(handle_bits(eh));
  return it == g_handlers.end() ? nullptr : it->second;
}

void stand_in(MPI_Comm carrier, MPI_Comm comm) {
  std::lock_guard g(g_stand_ins_mu);
  g_stand_ins[handle_bits(carrier)].push_back(comm);
  g_any_stand_in.store(true, std::memory_order_release);
}

void drop_stand_in(MPI_Comm carrier, MPI_Comm comm) {
  std::lock_guard g(g_stand_ins_mu);
  auto it = g_stand_ins.find(handle_bits(carrier));
  if (it == g_stand_ins.end()) return;
  auto& v = it->second;
  for (auto i = v.begin(); i != v.end(); ++i)
    if (*i == comm) {
      v.erase(i);
      break;
    }
  if (v.empty()) g_stand_ins.erase(it);
}

namespace record {

bool from_fortran(void* return_address) {
  Dl_info info;
  if (!return_address || !dladdr(return_address, &info) || !info.dli_fname) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  const char* file = slash ? slash + 1 : info.dli_fname;
  // The file the loader opened is named by the soname (or the soname plus a version suffix).
  for (std::size_t i = 0; i < fortran::kLibraryCount; ++i)
    if (std::strncmp(file, fortran::kLibraries[i], std::strlen(fortran::kLibraries[i])) == 0) return true;
  return false;
}

void made_errhandler(void* caller, MPI_Errhandler eh, ErrhandlerFn* fn) {
  // The MPI hands out a freed handler's handle again: this one's entry replaces any earlier.
  const bool c_function = fn && !from_fortran(caller);
  std::lock_guard g(g_handlers_mu);
  if (c_function)
    g_handlers[handle_bits(eh)] = fn;
  else
    g_handlers.erase(handle_bits(eh));
}

KeyvalArgs keyval_args(void* caller, void* copy, void* del, void* extra) {
  KeyvalArgs same{reinterpret_cast<CopyFn*>(copy), reinterpret_cast<DeleteFn*>(del), extra};
  const bool wrap_copy = !predefined_copy(copy), wrap_delete = !predefined_delete(del);
  if ((!wrap_copy && !wrap_delete) || from_fortran(caller)) return same;
  std::lock_guard g(g_keyvals_mu);
  auto& f = g_keyvals[{copy, del, extra}];
  if (!f) f.reset(new KeyvalFns{reinterpret_cast<CopyFn*>(copy), reinterpret_cast<DeleteFn*>(del), extra});
  // A predefined function keeps its place (it ignores extra_state).
  return {wrap_copy ? &copy_trampoline : same.copy, wrap_delete ? &delete_trampoline : same.del, f.get()};
}

}  // namespace record
}  // namespace tsmpi::ranks

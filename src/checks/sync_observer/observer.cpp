#include "checks/sync_observer/observer.h"

#include <link.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <cstdlib>
#include <cstring>

namespace tsmpi::sync {

bool g_active = false;

namespace {
thread_local bool tl_resolving = false;  // dlsym may lock a mutex: that lock takes the fallback
}

void* next_symbol(const char* name, const char* version, void* fallback) {
  if (tl_resolving) return fallback;
  tl_resolving = true;
  void* f = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
  if (!f && version) f = dlsym(RTLD_NEXT, name);
  tl_resolving = false;
  if (!f && !fallback) {
    std::fprintf(stderr, "tsmpi: libtsmpi_sync.so: %s not found after it\n", name);
    std::abort();
  }
  return f ? f : fallback;
}

namespace {

struct Range {
  std::uintptr_t lo = ~std::uintptr_t{0}, hi = 0;
};
// The address range of the object holding `address`.
int range_of(dl_phdr_info* info, std::size_t, void* data) {
  auto* want = static_cast<std::pair<std::uintptr_t, Range>*>(data);
  Range r;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    r.lo = std::min<std::uintptr_t>(r.lo, info->dlpi_addr + ph.p_vaddr);
    r.hi = std::max<std::uintptr_t>(r.hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (want->first < r.lo || want->first >= r.hi) return 0;
  want->second = r;
  return 1;
}
Range range_of(const void* address) {
  std::pair<std::uintptr_t, Range> want{reinterpret_cast<std::uintptr_t>(address), {}};
  dl_iterate_phdr(range_of, &want);
  return want.second;
}
Range g_tsmpi;  // set at load, before any thread but the first runs

}  // namespace

bool from_tsmpi(const void* caller) {
  const auto pc = reinterpret_cast<std::uintptr_t>(caller);
  return pc >= g_tsmpi.lo && pc < g_tsmpi.hi;
}

namespace {

// A ThreadSanitizer runtime linked into the program (clang's -fsanitize=thread; gcc's is the
// shared libtsan). Its interceptors come before this library and call these functions on threads
// it has not set up yet: the observer stays off (checking mode then works by overlap, and says
// so at MPI_Init).
bool builtin_tsan() {
  void* init = dlsym(RTLD_DEFAULT, "__tsan_init");
  if (!init) return false;
  Dl_info info{};
  if (!dladdr(init, &info) || !info.dli_fname) return true;
  return std::strstr(info.dli_fname, "libtsan") == nullptr;
}

[[gnu::constructor]] void start() {
  g_tsmpi = range_of(reinterpret_cast<const void*>(&tsmpi_hb_counts));
  const char* check = std::getenv("TSMPI_CHECK");
  const char* order = std::getenv("TSMPI_CHECK_ORDER");
  g_active = check && (!std::strcmp(check, "warn") || !std::strcmp(check, "abort")) &&
             !(order && !std::strcmp(order, "overlap")) && !builtin_tsan();
  if (g_active) tsmpi_hb_announce();
}
}  // namespace

}  // namespace tsmpi::sync

#include "checks/sync_observer/observer.h"

#include <link.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <atomic>
#include <cstring>
#include <utility>
#include <vector>
#include <cstdlib>
#include <cstring>

namespace tsmpi::sync {

bool g_active = false;

namespace {
thread_local bool tl_resolving = false;  // dlsym may lock a mutex: that lock takes the fallback
}

void* next_symbol(const char* name, const char* version, bool required) {
  if (tl_resolving) return nullptr;
  tl_resolving = true;
  void* f = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
  if (!f && version) f = dlsym(RTLD_NEXT, name);
  tl_resolving = false;
  if (!f && required) {
    std::fprintf(stderr, "tsmpi: libtsmpi_sync.so: %s not found after it\n", name);
    std::abort();
  }
  return f;
}

namespace {

struct Range {
  std::uintptr_t lo = ~std::uintptr_t{0}, hi = 0;
};

// Libraries whose calls to pthread functions are not the program's synchronization: tsmpi's
// own, the MPI's and its transports' (UCX calls pthread_rwlock_unlock from its malloc hooks,
// inside malloc: observed, the engine would allocate under malloc's own lock), and the
// runtime's below them. Prefixes of the file name.
constexpr const char* kNotTheProgram[] = {
    "libtsmpi.so", "libmpi", "libopen-", "libmca_", "mca_", "libucm", "libucs", "libuct", "libucp",
    "libfabric", "libpmix", "libpmi", "libhwloc", "libevent", "libpsm", "libibverbs", "librdmacm",
    "libnl-", "libxpmem", "libknem", "libunwind", "libtbb", "libgcc_s", "libc.so", "ld-linux",
    "libcuda", "libnuma", "libudev", "libz.so", "libyaml"};

bool not_the_program(const char* path) {
  if (!path || !*path) return false;  // the program itself
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* prefix : kNotTheProgram)
    if (std::strncmp(base, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

int add_ranges(dl_phdr_info* info, std::size_t, void* data) {
  if (!not_the_program(info->dlpi_name)) return 0;
  auto* out = static_cast<std::vector<Range>*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    out->push_back({info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
  }
  return 0;
}

// Replaced whole (never freed: a reader may still hold the old one) when libraries were loaded.
std::atomic<const std::vector<Range>*> g_excluded{nullptr};

}  // namespace

void refresh_excluded() {
  auto* ranges = new std::vector<Range>;
  dl_iterate_phdr(add_ranges, ranges);
  g_excluded.store(ranges, std::memory_order_release);
}

bool from_tsmpi(const void* caller) {
  const auto pc = reinterpret_cast<std::uintptr_t>(caller);
  const std::vector<Range>* ranges = g_excluded.load(std::memory_order_acquire);
  if (!ranges) return false;
  for (const Range& r : *ranges)
    if (pc >= r.lo && pc < r.hi) return true;
  return false;
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
  refresh_excluded();
  const char* check = std::getenv("TSMPI_CHECK");
  const char* order = std::getenv("TSMPI_CHECK_ORDER");
  g_active = check && (!std::strcmp(check, "warn") || !std::strcmp(check, "abort")) &&
             !(order && !std::strcmp(order, "overlap")) && !builtin_tsan();
  if (g_active) tsmpi_hb_announce();
}
}  // namespace

}  // namespace tsmpi::sync

// libtsmpi calls this at the end of MPI_Init: the MPI's components and transports are loaded now.
extern "C" __attribute__((visibility("default"))) void tsmpi_sync_libraries_loaded(void) {
  tsmpi::sync::refresh_excluded();
}

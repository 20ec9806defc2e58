#include "diagnostics/backtrace.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace tsmpi::diag {

// Only libunwind's signal-safe local routines (getcontext, init_local, get_reg, step): nothing
// is allocated or printed here, so the hang watchdog can call it in a signal handler.
// noinline: `skip` counts real frames, and this one must be one of them.
[[gnu::noinline]] void capture_backtrace(Backtrace& bt, int skip) {
  bt.frames = 0;
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return;
  int seen = 0;
  do {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    if (seen++ >= skip) bt.pc[bt.frames++] = reinterpret_cast<void*>(ip);
  } while (bt.frames < Backtrace::kMaxFrames && unw_step(&cursor) > 0);
}

bool g_plain_unwinder = false;

[[gnu::noinline]] void capture_backtrace_fast(Backtrace& bt, int skip) {
  void* pcs[Backtrace::kMaxFrames + 8];
  int n = g_plain_unwinder ? ::backtrace(pcs, Backtrace::kMaxFrames + 8) : unw_backtrace(pcs, Backtrace::kMaxFrames + 8);
  bt.frames = 0;
  for (int i = skip; i < n && bt.frames < Backtrace::kMaxFrames; ++i) bt.pc[bt.frames++] = pcs[i];
}

namespace {

// What a report prints for one frame.
struct Frame {
  std::string function;  // demangled, empty if unknown
  std::uintptr_t offset = 0;    // from the function's start, or from the module's base
  std::string module;    // file name without directories, empty if unknown
  const void* module_base = nullptr;
};

std::string base_name(const char* path) {
  if (!path || !*path) return "";
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string s = d;
  std::free(d);
  return s;
}

// The function symbol of a symbol table that contains `rel` (an address relative to the
// module's load bias). Both checks matter: dladdr and libunwind name the nearest symbol before
// an address, which in a stripped library is usually some unrelated exported function.
const ElfW(Sym)* containing_symbol(const ElfW(Sym)* syms, std::size_t count, std::uintptr_t rel) {
  for (std::size_t i = 0; i < count; ++i) {
    const ElfW(Sym)& s = syms[i];
    const int type = ELF64_ST_TYPE(s.st_info);
    if ((type == STT_FUNC || type == STT_GNU_IFUNC) && s.st_shndx != SHN_UNDEF && s.st_value <= rel &&
        rel < s.st_value + s.st_size)
      return &s;
  }
  return nullptr;
}

// Static functions (a test program's thread functions, tsmpi's internals) are only in the
// file's .symtab, which the loader does not map: read it from the file.
bool symtab_name(const char* path, std::uintptr_t rel, std::string& name, std::uintptr_t& offset) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  void* map = fstat(fd, &st) == 0 && st.st_size > 0
                  ? mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return false;
  const auto size = static_cast<std::size_t>(st.st_size);
  const auto* base = static_cast<const unsigned char*>(map);
  const auto* eh = static_cast<const ElfW(Ehdr)*>(map);
  bool found = false;
  if (size >= sizeof *eh && std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shoff + std::size_t{eh->e_shnum} * sizeof(ElfW(Shdr)) <= size) {
    const auto* sh = reinterpret_cast<const ElfW(Shdr)*>(base + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum && !found; ++i) {
      if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
      const ElfW(Shdr)& strs = sh[sh[i].sh_link];
      if (sh[i].sh_offset + sh[i].sh_size > size || strs.sh_offset + strs.sh_size > size) continue;
      const ElfW(Sym)* s = containing_symbol(reinterpret_cast<const ElfW(Sym)*>(base + sh[i].sh_offset),
                                             sh[i].sh_size / sizeof(ElfW(Sym)), rel);
      if (!s || s->st_name >= strs.sh_size) continue;
      const char* n = reinterpret_cast<const char*>(base + strs.sh_offset + s->st_name);
      name = demangle(std::string(n, strnlen(n, strs.sh_size - s->st_name)).c_str());
      offset = rel - s->st_value;
      found = true;
    }
  }
  munmap(map, size);
  return found;
}

Frame resolve(void* pc) {
  Frame f;
  const auto addr = reinterpret_cast<std::uintptr_t>(pc);
  // A return address may lie just past the end of its function (a call that does not return):
  // look up the byte before it.
  const std::uintptr_t lookup = addr > 0 ? addr - 1 : addr;
  Dl_info info{};
  const ElfW(Sym)* sym = nullptr;
  if (dladdr1(reinterpret_cast<void*>(lookup), &info, const_cast<void**>(reinterpret_cast<const void**>(&sym)),
              RTLD_DL_SYMENT) == 0)
    return f;
  f.module = base_name(info.dli_fname);
  f.module_base = info.dli_fbase;
  f.offset = addr - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  if (info.dli_sname && info.dli_saddr && sym &&
      lookup < reinterpret_cast<std::uintptr_t>(info.dli_saddr) + sym->st_size) {
    f.function = demangle(info.dli_sname);
    f.offset = addr - reinterpret_cast<std::uintptr_t>(info.dli_saddr);
    return f;
  }
  link_map* lm = nullptr;
  if (dladdr1(reinterpret_cast<void*>(lookup), &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 || !lm)
    return f;
  // The main program's link map has no name; its file is /proc/self/exe.
  const char* path = lm->l_name && *lm->l_name ? lm->l_name : "/proc/self/exe";
  std::uintptr_t off = 0;
  if (symtab_name(path, lookup - lm->l_addr, f.function, off)) f.offset = off + 1;  // `lookup` is addr - 1
  return f;
}

// This library's own load address: of its frames only the generated wrappers (hooked_MPI_X,
// or an exported MPI_X) tell the reader something; Hook::call, its lambdas, serialize mode's
// polling and the watchdog's signal handler are noise in a report.
const void* own_module_base() {
  static const void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&own_module_base), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  return base;
}

// False for a frame of tsmpi's hook machinery; a wrapper's frame keeps its name only (the
// demangled parameter list of a generated wrapper is a line long).
bool shown_frame(Frame& f) {
  if (!f.module_base || f.module_base != own_module_base()) return true;
  const std::string& n = f.function;
  if (n.rfind("MPI_", 0) == 0 || n.rfind("MPIX_", 0) == 0) return true;
  if (n.rfind("hooked_MPI", 0) != 0) return false;
  f.function = n.substr(0, n.find('('));
  return true;
}

// Templates of the C++ parts of an MPI can demangle to kilobytes.
std::string shortened(const std::string& s) {
  constexpr std::size_t kMax = 160;
  return s.size() <= kMax ? s : s.substr(0, kMax) + "...";
}

}  // namespace

void print_backtrace(std::FILE* out, const Backtrace& bt, const char* prefix) {
  std::string text;
  int shown = 0;
  for (int i = 0; i < bt.frames; ++i) {
    Frame f = resolve(bt.pc[i]);
    if (!shown_frame(f)) continue;
    char head[64];
    std::snprintf(head, sizeof head, "#%d %p ", shown++, bt.pc[i]);
    char off[32];
    std::snprintf(off, sizeof off, "+0x%lx", static_cast<unsigned long>(f.offset));
    text += prefix;
    text += head;
    if (!f.function.empty()) text += shortened(f.function) + off + " (" + (f.module.empty() ? "??" : f.module) + ")";
    else if (!f.module.empty()) text += f.module + off;
    else text += "??";
    text += "\n";
  }
  std::fputs(text.c_str(), out);
}

}  // namespace tsmpi::diag

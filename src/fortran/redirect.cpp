// Points the PMPI_X slots (GOT entries) of the MPI's Fortran libraries at tsmpi's MPI_X, at
// load time, before the program's first call. The libraries' own code then converts every
// Fortran argument exactly as it does natively (handles, statuses, sentinels, strings,
// LOGICAL, callbacks) and the converted call enters tsmpi's wrapper like a C call. tsmpi's own
// calls to PMPI_X are not affected: only the Fortran libraries' slots change.
#include "fortran/redirect.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "fortran/entry_point.h"

namespace tsmpi::fortran {
namespace {

#if defined(__x86_64__)
constexpr unsigned kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr unsigned kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr unsigned kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr unsigned kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "tsmpi: Fortran redirection knows the relocation types of x86-64 and AArch64 only"
#endif

const std::unordered_map<std::string_view, void*>& targets() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, void*>;
    for (std::size_t i = 0; i < kRedirectCount; ++i) m->emplace(kRedirects[i].symbol, kRedirects[i].target);
    return m;
  }();
  return *map;
}

bool is_fortran_library(const char* soname) {
  for (std::size_t i = 0; i < kLibraryCount; ++i)
    if (std::strcmp(soname, kLibraries[i]) == 0) return true;
  return false;
}

// The dynamic section's addresses: relocated in place by glibc, file offsets elsewhere.
template <class T>
T* address(ElfW(Addr) base, ElfW(Addr) p) {
  return reinterpret_cast<T*>(p < base ? base + p : p);
}

struct Object {
  const dl_phdr_info* info;
  uintptr_t relro_begin = 0, relro_end = 0;  // page range glibc made read-only after relocation

  // The protection the slot's page has now: read-only inside the RELRO range (glibc protects
  // whole pages there), else that of the segment holding the slot.
  int protection_of(uintptr_t page, uintptr_t slot) const {
    if (page >= relro_begin && page < relro_end) return PROT_READ;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      uintptr_t b = info->dlpi_addr + ph.p_vaddr;
      if (ph.p_type == PT_LOAD && slot >= b && slot < b + ph.p_memsz)
        return (ph.p_flags & PF_R ? PROT_READ : 0) | (ph.p_flags & PF_W ? PROT_WRITE : 0) |
               (ph.p_flags & PF_X ? PROT_EXEC : 0);
    }
    return PROT_READ;
  }

  void patch(void** slot, void* target) const {
    if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) == target) return;
    const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t page = reinterpret_cast<uintptr_t>(slot) & ~(size - 1);
    const int prot = protection_of(page, reinterpret_cast<uintptr_t>(slot));
    if (!(prot & PROT_WRITE) && mprotect(reinterpret_cast<void*>(page), size, PROT_READ | PROT_WRITE) != 0) {
      std::fprintf(stderr, "tsmpi: cannot redirect the Fortran library %s's calls to tsmpi (mprotect failed)\n",
                   info->dlpi_name);
      return;
    }
    __atomic_store_n(slot, target, __ATOMIC_RELEASE);
    if (!(prot & PROT_WRITE)) mprotect(reinterpret_cast<void*>(page), size, prot);
  }
};

int redirect_object(dl_phdr_info* info, std::size_t, void*) {
  const ElfW(Addr) base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  Object obj{info};
  const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      obj.relro_begin = (base + ph.p_vaddr) & ~(size - 1);
      obj.relro_end = (base + ph.p_vaddr + ph.p_memsz) & ~(size - 1);
    }
  }
  if (!dyn) return 0;
  const char* strtab = nullptr;
  const ElfW(Sym)* symtab = nullptr;
  ElfW(Addr) soname = 0, jmprel = 0, rela = 0;
  std::size_t jmprel_size = 0, rela_size = 0;
  bool has_soname = false;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_STRTAB: strtab = address<const char>(base, d->d_un.d_ptr); break;
      case DT_SYMTAB: symtab = address<const ElfW(Sym)>(base, d->d_un.d_ptr); break;
      case DT_SONAME: soname = d->d_un.d_val; has_soname = true; break;
      case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
      case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
      case DT_RELA: rela = d->d_un.d_ptr; break;
      case DT_RELASZ: rela_size = d->d_un.d_val; break;
      default: break;
    }
  }
  if (!strtab || !symtab || !has_soname || !is_fortran_library(strtab + soname)) return 0;
  const auto& map = targets();
  auto walk = [&](ElfW(Addr) table, std::size_t bytes) {
    if (!table) return;
    const auto* r = address<const ElfW(Rela)>(base, table);
    for (std::size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
      const unsigned type = ELF64_R_TYPE(r[i].r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym)& sym = symtab[ELF64_R_SYM(r[i].r_info)];
      auto it = map.find(std::string_view(strtab + sym.st_name));
      if (it != map.end()) obj.patch(reinterpret_cast<void**>(base + r[i].r_offset), it->second);
    }
  };
  walk(jmprel, jmprel_size);
  walk(rela, rela_size);
  return 0;
}

}  // namespace

void redirect_loaded_libraries() { dl_iterate_phdr(redirect_object, nullptr); }

void* Original::resolve() {
  void* lib = dlopen(library_, RTLD_NOW | RTLD_NOLOAD);
  void* f = lib ? dlsym(lib, name_) : nullptr;
  if (!f) {
    std::fprintf(stderr, "tsmpi: the MPI's Fortran routine %s is not loaded (%s)\n", name_, library_);
    std::abort();
  }
  fn_.store(f, std::memory_order_release);
  return f;
}

namespace {
// Before main: the program's first Fortran MPI call must already find the redirected slots.
[[gnu::constructor]] void redirect_at_load() { redirect_loaded_libraries(); }
}  // namespace

}  // namespace tsmpi::fortran

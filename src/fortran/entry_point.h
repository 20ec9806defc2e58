// The MPI's own definition of a Fortran routine tsmpi exports an entry point for (the routines
// that reach no C function, codegen/fortran.py): looked up in the Fortran library that defines
// it, never through the global scope, where tsmpi's entry point would be found again.
#pragma once
#include <atomic>

namespace tsmpi::fortran {

class Original {
 public:
  constexpr Original(const char* library, const char* name) : library_(library), name_(name) {}
  void* get() {
    void* f = fn_.load(std::memory_order_acquire);
    return f ? f : resolve();
  }

 private:
  void* resolve();  // src/fortran/redirect.cpp
  const char* library_;
  const char* name_;
  std::atomic<void*> fn_{nullptr};
};

}  // namespace tsmpi::fortran

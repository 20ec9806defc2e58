// TSMPI_CHECK in a program built with -fsanitize=thread: tells ThreadSanitizer what each MPI
// operation reads and writes, and when, through its public annotation interface
// (sanitizer/tsan_interface.h), so that TSan itself reports a store into a send buffer while its
// operation is in flight, or a read of a receive buffer before its wait, with both stacks
// (docs/checking.md#buffer-races-with-threadsanitizer).
//   blocking point-to-point: the send buffer is read by the calling thread at the call, the
//     receive buffer written by it when the call returns
//   nonblocking: the operation is a TSan fiber of its own, started from the calling thread at the
//     call (it reads or writes the buffer there, with the call's stack); the thread that completes
//     the request (wait and test families) acquires what the fiber released
//   messages and collectives inside the process: a send releases a per-communicator token that
//     the receive acquires when it completes; a collective releases one at entry and acquires it
//     at exit (thread-ranks, src/ranks/, are threads); RMA synchronization per window; a
//     request's initiation (and MPI_Start, MPI_Grequest_complete) before its completion
//   inside those calls TSan ignores synchronization (the MPI's and tsmpi's locks would order
//     threads that merely call MPI in turn), and under TSMPI_CHECK it is given
//     ignore_noninstrumented_modules=1 (__tsan_default_options): no reports of the MPI's memcpy
// Nothing of this runs unless TSan's runtime is in the process (found with dlsym at
// checks::init): libtsmpi is never built with TSan nor linked to it.
#pragma once
#include <type_traits>

#include "fn_ids.h"
#include "runtime/config.h"
#include "runtime/handles.h"

namespace tsmpi::checks::tsan {

extern bool g_on;  // TSan's runtime is in the process and checking mode is on (after init())

// At checks::init, checking mode on: looks for TSan's interface functions.
void init();
// Functions the annotations need to see (hooked), beyond the other detections'.
bool needs(int fn_index);

// Around one hooked call (checks::guarded, and thread-rank calls in wrappers/hook.h): made
// before anything else of tsmpi's runs for the call, ended after everything (the destructor).
// Without TSan: one test of g_on.
class Scope {
 public:
  // `return_address`: __builtin_return_address(0) where the scope is made; the program's call
  // site when that code is inlined into the wrapper the program called.
  Scope(fn::Id id, const Objects& objects, const CallArgs& args, const void* return_address) {
    if (TSMPI_UNLIKELY(g_on)) begin(id, objects, args, return_address);
  }
  ~Scope() {
    if (TSMPI_UNLIKELY(state_ != nullptr)) end();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  // The call's result (what the destructor annotates depends on it).
  void done(int rc) { rc_ = rc; }
  struct State;  // tsan_annotations.cpp

 private:
  void begin(fn::Id id, const Objects& objects, const CallArgs& args, const void* return_address);
  void end();
  State* state_ = nullptr;
  int rc_ = -1;
};

// body() as one annotated call (the thread-rank path of wrappers/hook.h).
template <class Body>
auto annotated(fn::Id id, const Objects& objects, const CallArgs& args, Body&& body) {
  Scope scope(id, objects, args, __builtin_return_address(0));
  auto rc = body();
  if constexpr (std::is_same_v<decltype(rc), int>) scope.done(rc);
  else scope.done(0);
  return rc;
}

}  // namespace tsmpi::checks::tsan

// The call as tsmpi would make it without a probe policy (straight to PMPI, or serialize mode's
// strategy), handed to the policies without allocating: a pointer to the wrapper's lambda and a
// function that calls it.
#pragma once

namespace tsmpi::matching {

class OriginalCall {
 public:
  template <class F>
  explicit OriginalCall(F& f) : fn_(&f), call_([](void* p) { return (*static_cast<F*>(p))(); }) {}
  int operator()() const { return call_(fn_); }

 private:
  void* fn_;
  int (*call_)(void*);
};

}  // namespace tsmpi::matching

// TSMPI_CHECK: the conditions of seed 004 Alg. 3.6 on shared message buffers. A buffer is in
// use from the start of a point-to-point call until it returns (blocking) or its request
// completes (nonblocking). Reported: a receive into memory another operation in flight uses
// (a pending receive, or a send still reading it), and a send of memory a receive in flight
// writes. Two sends of one buffer are allowed (MPI-3). Only datatypes without holes are checked
// (a strided type's span overlaps others' without sharing bytes).
#pragma once
#include <cstdint>

#include "fn_ids.h"
#include "runtime/handles.h"

namespace tsmpi::checks {

class BufferUse {
 public:
  BufferUse(const CallArgs& args, fn::Id id);  // no buffers: nothing to do
  ~BufferUse();
  BufferUse(const BufferUse&) = delete;
  BufferUse& operator=(const BufferUse&) = delete;
  // After the call: a nonblocking call's buffers stay in use under its request.
  void done(int rc);

 private:
  CallArgs args_;  // a copy: the pointers in it stay valid for the call
  fn::Id id_;
  std::uint64_t tokens_[2] = {0, 0};  // this call's entries, and where their buffers begin
  std::uintptr_t begins_[2] = {0, 0};
  int entries_ = 0;
  bool handed_over_ = false;
};

// The operation of `request` completed or was freed: its buffers are free again.
void end_buffer_use(std::uintptr_t request);

}  // namespace tsmpi::checks

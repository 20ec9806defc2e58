#include "diagnostics/backtrace.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace tsmpi::diag {

void capture_backtrace(Backtrace& bt, int skip) {
  // unw_step, not unw_backtrace: the latter's frame-pointer fast path faults on some of the
  // MPI libraries' frames (seen with Open MPI 4.1).
  unw_context_t context;
  unw_cursor_t cursor;
  bt.frames = 0;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return;
  for (int i = 0; unw_step(&cursor) > 0 && bt.frames < Backtrace::kMaxFrames; ++i) {
    unw_word_t ip = 0;
    unw_get_reg(&cursor, UNW_REG_IP, &ip);
    if (i >= skip - 1) bt.pc[bt.frames++] = reinterpret_cast<void*>(ip);
  }
}

void print_backtrace(std::FILE* out, const Backtrace& bt, const char* prefix) {
  for (int i = 0; i < bt.frames; ++i) std::fprintf(out, "%s#%d %p\n", prefix, i, bt.pc[i]);
}

}  // namespace tsmpi::diag

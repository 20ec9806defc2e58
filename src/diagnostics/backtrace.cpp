#include "diagnostics/backtrace.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace tsmpi::diag {

void capture_backtrace(Backtrace& bt, int skip) {
  void* pcs[Backtrace::kMaxFrames + 8];
  int n = unw_backtrace(pcs, Backtrace::kMaxFrames + 8);
  bt.frames = 0;
  for (int i = skip; i < n && bt.frames < Backtrace::kMaxFrames; ++i) bt.pc[bt.frames++] = pcs[i];
}

void print_backtrace(std::FILE* out, const Backtrace& bt, const char* prefix) {
  for (int i = 0; i < bt.frames; ++i) std::fprintf(out, "%s#%d %p\n", prefix, i, bt.pc[i]);
}

}  // namespace tsmpi::diag

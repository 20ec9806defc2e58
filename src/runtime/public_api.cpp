#include "tsmpi.h"

#include <string>
#include <string_view>

#include "fn_ids.h"
#include "runtime/config.h"
#include "runtime/stats.h"
#include "runtime/thread_state.h"
#include "version.h"

extern "C" {

TSMPI_EXPORT const char* tsmpi_version(void) {
  static const std::string text = std::string("tsmpi ") + TSMPI_VERSION + " (" + tsmpi::fn::kBuiltFor + ")";
  return text.c_str();
}

TSMPI_EXPORT int tsmpi_call_depth(void) { return tsmpi::tl_thread.depth; }

TSMPI_EXPORT long long tsmpi_category_calls(const char* category) {
  if (!category) return -1;
  tsmpi::StatsTotals t = tsmpi::stats_totals();
  for (int i = 0; i < tsmpi::kCategoryCount; ++i)
    if (std::string_view(category) == tsmpi::category_name(static_cast<tsmpi::Category>(i)))
      return static_cast<long long>(t.calls[i]);
  return -1;
}

}  // extern "C"

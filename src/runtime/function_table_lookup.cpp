#include <algorithm>

#include "runtime/function_table.h"

namespace tsmpi {

const char* category_name(Category c) {
  static constexpr const char* kNames[kCategoryCount] = {
      "None", "AccessOnly", "UpdateRef", "CommIO", "Collective",
      "ReadList", "UpdateList", "Allocate", "Own", "Other"};
  return kNames[static_cast<int>(c)];
}

const char* family_name(Family f) {
  static constexpr const char* kNames[] = {
      "-", "init", "finalize", "threadlevel", "abort", "send", "recv", "sendrecv",
      "probe", "mprobe", "mrecv", "wait", "test", "start", "cancel", "bsend", "buffer"};
  return kNames[static_cast<int>(f)];
}

const char* thread_ranks_name(ThreadRanks t) {
  static constexpr const char* kNames[] = {"-", "engine", "complete", "refuse", "record"};
  return kNames[static_cast<int>(t)];
}

const char* strategy_name(Strategy s) {
  static constexpr const char* kNames[] = {"runtime",   "unlocked", "locked",  "start+wait",
                                           "poll",      "poll-some", "handler", "admitted",
                                           "blocking-locked", "admitted+start+wait",
                                           "creation-in-flight", "owned-locked", "admitted-group",
                                           "admitted-bridge", "sequenced"};
  return kNames[static_cast<int>(s)];
}

int find_function(std::string_view name) {
  // The generator sorts case-insensitively; a linear scan keeps this independent of that order
  // and is only used off the hot path (tsmpi-info, tests).
  for (int i = 0; i < fn::kCount; ++i)
    if (name == kFunctions[i].name) return i;
  return -1;
}

}  // namespace tsmpi

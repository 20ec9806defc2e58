// "What does tsmpi do for MPI_X?": the function's table row and every protection that applies to
// it under given options (tsmpi-info --function). Computed from the rules the runtime applies
// (lifetime_rules.h, check_rules.h, activation_rules.h, the generator's serialize strategy and
// probe-policy routing), not from a description of them kept beside them.
#pragma once
#include <string>

#include "runtime/options.h"

namespace tsmpi {

// Several lines of text for kFunctions[fn_index], under `o`, assuming the program initializes
// MPI with MPI_THREAD_MULTIPLE (below it no two threads call MPI at once and tsmpi protects
// nothing but serialize mode's own calls).
std::string describe_function(int fn_index, const Options& o);

}  // namespace tsmpi

// tsmpi's one options table, read once from TSMPI_* environment variables.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tsmpi {

enum class UnderlyingLevel { Single, Serialized, Multiple };
enum class ProbePolicy { Mprobe, Lock2d, Helper, Off };
enum class CheckMode { Off, Warn, Abort };
enum class CheckOrder { HappensBefore, Overlap };
enum class Threadcomm { Tsmpi, Native };

struct Options {
  UnderlyingLevel underlying_level = UnderlyingLevel::Multiple;
  ProbePolicy probe = ProbePolicy::Mprobe;
  CheckMode check = CheckMode::Off;
  CheckOrder check_order = CheckOrder::HappensBefore;  // how checking mode tells concurrent calls
  int stats = 0;               // 1: statistics at MPI_Finalize; 2: also calls per function
  int verbose = 0;
  unsigned hang_timeout = 0;  // seconds, 0 = off
  bool lifetime = true;       // existence checks and per-object locks (src/locking/object_lifetime.h)
  unsigned quarantine = 64;   // freed objects per kind kept before they are really freed
  int asp = 0;                // MPI processes per address space (tsmpirun -asp K); 0 = one, natively
  Threadcomm threadcomm = Threadcomm::Tsmpi;  // whose MPIX_Threadcomm_*: tsmpi's thread-ranks or the MPI's own
};

struct OptionSpec {
  const char* name;           // TSMPI_...
  const char* allowed;        // "a|b|c", or a description for numbers
  const char* default_value;
  const char* help;
  // Values accepted by the parser but whose feature is not built yet; refused with a message.
  const char* not_built;      // "a|b" or ""
};

// The table, in display order.
const std::vector<OptionSpec>& option_specs();

using Environment = std::vector<std::pair<std::string, std::string>>;

// All TSMPI_* variables of the process environment.
Environment tsmpi_environment();

struct ParseResult {
  Options options;
  std::optional<std::string> error;  // one line naming the variable and its allowed values
};

// Pure: parses the given TSMPI_* variables (unknown names are errors).
ParseResult parse_options(const Environment& env);

// The value an option has in `o`, as it would be written in the environment.
std::string option_value(const Options& o, std::string_view name);

// Process-wide options, parsed from the environment on first use. If they are invalid,
// prints the error line to stderr and exits the process with status 2 (used by MPI_Init).
const Options& options_or_exit();

// Process-wide options if already loaded (nullptr before the first options_or_exit()).
const Options* loaded_options();

// TSMPI_THREADCOMM=native in the loaded options, on an MPI that has its own threadcomm.
bool native_threadcomm_chosen();

}  // namespace tsmpi

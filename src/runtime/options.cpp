#include "runtime/options.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <mutex>

#include "runtime/mpi_version.h"

extern char** environ;

namespace tsmpi {
namespace {

constexpr const char* kUnderlying = "TSMPI_UNDERLYING_LEVEL";
constexpr const char* kProbe = "TSMPI_PROBE";
constexpr const char* kCheck = "TSMPI_CHECK";
constexpr const char* kCheckOrder = "TSMPI_CHECK_ORDER";
constexpr const char* kStats = "TSMPI_STATS";
constexpr const char* kVerbose = "TSMPI_VERBOSE";
constexpr const char* kHangTimeout = "TSMPI_HANG_TIMEOUT";
constexpr const char* kLifetime = "TSMPI_LIFETIME";
constexpr const char* kQuarantine = "TSMPI_QUARANTINE";
constexpr const char* kAsp = "TSMPI_ASP";
constexpr const char* kThreadcomm = "TSMPI_THREADCOMM";
constexpr int kMaxAsp = 256;

// Index of `value` in the '|'-separated list, or -1.
int choice_index(std::string_view list, std::string_view value) {
  int index = 0;
  while (true) {
    size_t bar = list.find('|');
    if (list.substr(0, bar) == value) return index;
    if (bar == std::string_view::npos) return -1;
    list.remove_prefix(bar + 1);
    ++index;
  }
}

std::string built_values(const OptionSpec& s) {
  std::string out;
  std::string_view all = s.allowed;
  while (!all.empty()) {
    size_t bar = all.find('|');
    std::string_view v = all.substr(0, bar);
    if (choice_index(s.not_built, v) < 0) out += (out.empty() ? "" : "|") + std::string(v);
    all = bar == std::string_view::npos ? std::string_view{} : all.substr(bar + 1);
  }
  return out;
}

}  // namespace

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> specs = {
      {kUnderlying, "single|serialized|multiple", "multiple",
       "thread level tsmpi requests from the MPI; below multiple tsmpi serializes calls itself",
       ""},
      {kProbe, "mprobe|lock2d|helper|off", "mprobe",
       "how probe followed by receive is made atomic per thread (docs/probe-policies.md)", ""},
      {kCheck, "off|warn|abort", "off",
       "report erroneous programs (docs/checking.md): warn, or abort the job with a non-zero status", ""},
      {kCheckOrder, "hb|overlap", "hb",
       "checking mode's test for calls that must not be concurrent: hb, not ordered by the program's "
       "synchronization (tsmpirun preloads its observer, libtsmpi_sync.so); overlap, overlapping in time in this run",
       ""},
      {kLifetime, "on|off", "on",
       "existence checks and per-object locks on the calls that create, read, update or free MPI objects", ""},
      {kQuarantine, "objects per kind", "64",
       "freed objects of each kind kept (and their handles invalid) before they are really freed", ""},
      {kStats, "0|1|2", "0",
       "print per-rank call and lock statistics at MPI_Finalize; 2: also the calls of each MPI function", ""},
      {kVerbose, "0|1|2", "0", "1: one line per rank at MPI_Init; 2: also the active wrappers", ""},
      {kHangTimeout, "seconds (0 = off)", "0",
       "report every thread's MPI call when one is blocked longer than this", ""},
      {kThreadcomm, "tsmpi|native", "tsmpi",
       "whose MPIX_Threadcomm_init/start/finish/free a program gets: tsmpi's thread-ranks (any MPI), or the "
       "MPI's own (MPICH >= 4.2), protected like any communicator",
#if TSMPI_HAVE_NATIVE_THREADCOMM
       ""},
#else
       "native"},
#endif
      {kAsp, "MPI processes per address space (0 = off)", "0",
       "several MPI processes per OS process, threads attach to them (set by tsmpirun -asp K; "
       "docs/threads-as-ranks.md#address-spaces)", ""},
  };
  return specs;
}

Environment tsmpi_environment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "TSMPI_", 6) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    env.emplace_back(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return env;
}

ParseResult parse_options(const Environment& env) {
  ParseResult r;
  Options& o = r.options;
  for (const auto& [name, value] : env) {
    const OptionSpec* spec = nullptr;
    for (const auto& s : option_specs())
      if (name == s.name) spec = &s;
    if (!spec) {
      std::string known;
      for (const auto& s : option_specs()) known += (known.empty() ? "" : ", ") + std::string(s.name);
      r.error = "tsmpi: unknown variable " + name + "=" + value + "; tsmpi reads only " + known;
      return r;
    }
    const std::string prefix = std::string("tsmpi: ") + spec->name + "=" + value;
    if (name == kHangTimeout || name == kQuarantine) {
      errno = 0;
      char* end = nullptr;
      unsigned long v = value.empty() ? 0 : std::strtoul(value.c_str(), &end, 10);
      const unsigned long limit = name == kHangTimeout ? INT_MAX : 1u << 20;
      if (value.empty() || *end != '\0' || errno != 0 || value[0] == '-' || v > limit) {
        r.error = prefix + (name == kHangTimeout ? " is invalid; allowed values: whole seconds >= 0 (0 = off)"
                                                 : " is invalid; allowed values: 0 to 1048576 objects per kind");
        return r;
      }
      (name == kHangTimeout ? o.hang_timeout : o.quarantine) = static_cast<unsigned>(v);
      continue;
    }
    if (name == kAsp) {
      errno = 0;
      char* end = nullptr;
      long v = value.empty() ? 0 : std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || v < 0 || v > kMaxAsp) {
        r.error = prefix + " is invalid; allowed values: 1 to " + std::to_string(kMaxAsp) +
                  " MPI processes per address space, or 0 (off: one per OS process, the MPI's own)";
        return r;
      }
      o.asp = static_cast<int>(v);
      continue;
    }
    int index = choice_index(spec->allowed, value);
    if (index < 0) {
      r.error = prefix + " is invalid; allowed values: " + spec->allowed;
      return r;
    }
    if (choice_index(spec->not_built, value) >= 0) {
      r.error = prefix + (name == kThreadcomm ? " is refused: this MPI has no MPIX_Threadcomm of its own (MPICH >= 4.2 "
                                                "has); allowed here: "
                                              : " is refused: that feature is not built yet; allowed now: ") +
                built_values(*spec);
      return r;
    }
    if (name == kUnderlying) o.underlying_level = static_cast<UnderlyingLevel>(index);
    else if (name == kProbe) o.probe = static_cast<ProbePolicy>(index);
    else if (name == kCheck) o.check = static_cast<CheckMode>(index);
    else if (name == kCheckOrder) o.check_order = static_cast<CheckOrder>(index);
    else if (name == kStats) o.stats = index;
    else if (name == kVerbose) o.verbose = index;
    else if (name == kLifetime) o.lifetime = index == 0;
    else if (name == kThreadcomm) o.threadcomm = static_cast<Threadcomm>(index);
  }
  // MPICH's own threadcomm hangs at a thread level below MPI_THREAD_MULTIPLE (its thread-ranks
  // block in the MPI at once), which is what serialize mode asks the MPI for.
  if (o.threadcomm == Threadcomm::Native && o.underlying_level != UnderlyingLevel::Multiple)
    r.error = std::string("tsmpi: TSMPI_THREADCOMM=native is refused with TSMPI_UNDERLYING_LEVEL=") +
              option_value(o, kUnderlying) +
              ": the MPI's own threadcomm needs MPI_THREAD_MULTIPLE from the MPI; use TSMPI_THREADCOMM=tsmpi "
              "(thread-ranks under serialize mode) or TSMPI_UNDERLYING_LEVEL=multiple";
  return r;
}

std::string option_value(const Options& o, std::string_view name) {
  auto pick = [&](int index) {
    for (const auto& s : option_specs()) {
      if (name != s.name) continue;
      std::string_view list = s.allowed;
      for (int i = 0; i < index; ++i) list.remove_prefix(list.find('|') + 1);
      return std::string(list.substr(0, list.find('|')));
    }
    return std::string();
  };
  if (name == kUnderlying) return pick(static_cast<int>(o.underlying_level));
  if (name == kProbe) return pick(static_cast<int>(o.probe));
  if (name == kCheck) return pick(static_cast<int>(o.check));
  if (name == kCheckOrder) return pick(static_cast<int>(o.check_order));
  if (name == kStats) return std::to_string(o.stats);
  if (name == kVerbose) return std::to_string(o.verbose);
  if (name == kHangTimeout) return std::to_string(o.hang_timeout);
  if (name == kLifetime) return o.lifetime ? "on" : "off";
  if (name == kQuarantine) return std::to_string(o.quarantine);
  if (name == kAsp) return std::to_string(o.asp);
  if (name == kThreadcomm) return pick(static_cast<int>(o.threadcomm));
  return {};
}

namespace {
std::once_flag g_once;
Options g_options;
std::atomic<const Options*> g_loaded{nullptr};
}  // namespace

const Options& options_or_exit() {
  std::call_once(g_once, [] {
    ParseResult r = parse_options(tsmpi_environment());
    if (r.error) {
      std::fprintf(stderr, "%s\n", r.error->c_str());
      std::fflush(stderr);
      std::exit(2);
    }
    g_options = r.options;
    g_loaded.store(&g_options, std::memory_order_release);
  });
  return g_options;
}

const Options* loaded_options() { return g_loaded.load(std::memory_order_acquire); }

bool native_threadcomm_chosen() {
#if TSMPI_HAVE_NATIVE_THREADCOMM
  const Options* o = loaded_options();
  return o && o->threadcomm == Threadcomm::Native;
#else
  return false;
#endif
}

}  // namespace tsmpi

#include "runtime/describe.h"

#include <string_view>

#include "checks/check_rules.h"
#include "fortran/coverage.h"
#include "locking/buffer_lock.h"
#include "locking/lifetime_rules.h"
#include "locking/object_names.h"
#include "runtime/activation_rules.h"
#include "runtime/function_table.h"

namespace tsmpi {
namespace {

const char* strategy_text(Strategy s) {
  switch (s) {
    case Strategy::kRuntime: return "carried out by tsmpi's own handler (initialization, finalization, thread level)";
    case Strategy::kUnlocked: return "called without tsmpi's lock (it touches no MPI state that needs it)";
    case Strategy::kLocked: return "called under tsmpi's lock";
    case Strategy::kStartWait:
      return "its nonblocking form started under tsmpi's lock and tested once in the same hold, then completed in "
             "short locked tests by one polling thread for all waiting threads (the lock is never held while it waits); "
             "a collective first waits for the communicator's pending nonblocking duplications";
    case Strategy::kPoll: return "its polling form called in short locked steps until it succeeds (never blocked under the lock)";
    case Strategy::kPollSome: return "MPI_Testsome in short locked steps until a request completes";
    case Strategy::kHandler:
      return "carried out by tsmpi's own code in src/locking/ (docs/serialize-mode.md says what, per function)";
    case Strategy::kAdmitted:
      return "a blocking collective without a nonblocking form: it waits for the communicator's pending "
             "nonblocking duplications, the admission protocol orders it among the process's collectives on the "
             "communicator, then it runs under the lock";
    case Strategy::kBlockingLocked: return "blocking, not collective, no counterpart: called under tsmpi's lock";
    case Strategy::kAdmittedStartWait:
      return "admission (the process's right to enter a communicator creation), then its nonblocking form "
             "completed in locked steps";
    case Strategy::kCreationInFlight:
      return "returns at once with a generalized request; the MPI gets the call once the collectives called "
             "before it on the communicator went first, every member has called it, and every member holds its "
             "process's right to create (the admission protocol's vote, one creation per process in the MPI at a "
             "time); newcomm is set then; later collectives on the communicator wait for it";
    case Strategy::kSequenced:
      return "called under tsmpi's lock, or, while a nonblocking duplication of the communicator is pending, "
             "given to the MPI after it in call order (the application gets a generalized request)";
    case Strategy::kOwnedLocked: return "the process's right to create taken locally, then called under the lock";
    case Strategy::kAdmittedGroup: return "admission agreed among the group's members, then called under the lock";
    case Strategy::kAdmittedBridge:
      return "admission agreed by both groups through their leaders, then called under the lock";
  }
  return "?";
}

std::string policy_text(const FunctionInfo& f, ProbePolicy p) {
  const std::string name = p == ProbePolicy::Mprobe ? "mprobe" : p == ProbePolicy::Lock2d ? "lock2d" : "helper";
  switch (f.family) {
    case Family::kProbe:
      if (p == ProbePolicy::Mprobe)
        return name + ": made as MPI_Mprobe/MPI_Improbe; the message found is reserved for this thread's next receive "
                      "that matches it";
      if (p == ProbePolicy::Lock2d)
        return name + ": takes the lock of (communicator, source, tag) in the 2-D lock map, held until this thread "
                      "receives the probed message";
      return name + ": answered from the messages the helper thread matched; the one found is kept for this thread";
    case Family::kMprobe:
      return name + ": already atomic; the policy's reserved or queued messages are seen first, so none is taken twice";
    case Family::kRecv: case Family::kSendrecv:
      if (p == ProbePolicy::Mprobe)
        return name + ": a receive that matches a message this thread reserved takes it (MPI_Mrecv); otherwise the "
                      "MPI's own receive";
      if (p == ProbePolicy::Lock2d) return name + ": a receive after this thread's probe releases the probe's lock";
      return name + ": matched by the helper thread's queues, the message taken from them";
    case Family::kStart:
      return name + ": a persistent receive runs on a substitute request the policy matches";
    default:
      if (completes_requests(f) || std::string_view(f.name) == "MPI_Request_get_status")
        return name + ": switched on once the program makes a persistent receive: looks through to its substitute "
                      "requests";
      return name;
  }
}

std::string kinds_of(std::string_view column) {
  std::string out;
  lifetime::for_each_kind(column, [&](Kind k, std::string_view item) {
    if (!lifetime::tracked(k)) return;
    std::string_view name = item.substr(item.find(':') == std::string_view::npos ? 0 : item.find(':') + 1);
    name = name.substr(0, name.find_first_of("[*&"));
    if (out.find(std::string(name)) != std::string::npos) return;
    out += (out.empty() ? "" : ", ") + std::string(name);
  });
  return out;
}

std::string lifetime_text(const FunctionInfo& f, const Options& o, const lifetime::Rule& r) {
  if (r.access == lifetime::Access::kNone) {
    if (!o.lifetime) return "off (TSMPI_LIFETIME=off)";
    return "nothing to check (it names no object tsmpi tracks)";
  }
  std::string t;
  const std::string kinds = kinds_of(f.handles);
  switch (r.access) {
    case lifetime::Access::kRead:
      t = r.locks ? "reads " + kinds + ": a shared lock on each object it names, then an existence check (Read List "
                                       "and Access Only calls never wait for each other)"
                  : "existence check of the " + kinds + " it names (checking mode; no lock)";
      break;
    case lifetime::Access::kUpdate:
      t = "updates " + kinds + ": an exclusive lock on the object whose list it changes, so it is atomic for readers";
      break;
    case lifetime::Access::kFree: {
      const std::string freed = kinds_of(f.objects);
      t = "frees a " + (freed.empty() ? kinds : freed) +
          ": an exclusive lock, then the object goes into quarantine (TSMPI_QUARANTINE=" + std::to_string(o.quarantine) +
          " per kind) before the MPI frees it, so a stale handle is refused with its kind's error class";
      break;
    }
    default: break;
  }
  if (r.blocking) t += "; blocking: no lock is held while it waits, the objects are kept alive instead";
  if (r.creates) t += "; records the handles it returns";
  const std::uint32_t waits = lifetime::kinds_to_wait_for(f, r);
  if (waits) t += "; switched on when the program makes its first " + kinds + " (until then nothing can be stale)";
  return t;
}

std::string checks_text(const FunctionInfo& f, const Options& o, const checks::Rule& c, const lifetime::Rule& l) {
  std::string t;
  auto add = [&](const char* s) { t += (t.empty() ? "" : "; ") + std::string(s); };
  if (c.collective)
    add(o.check_order == CheckOrder::HappensBefore
            ? "collectives of two threads on one communicator, window or file not ordered by the program's "
              "synchronization"
            : "collectives of two threads on one communicator, window or file overlapping in time");
  if (c.frees_object) add("the object freed while another thread uses it");
  if (c.completes) add("one request completed by two threads");
  if (c.frees_request) add("a request freed while another thread completes it");
  if (c.creates_request) add("its requests told from reused handle values");
  if (c.moves_data) add("buffer conflicts (a buffer in use by a pending operation, a receive buffer under a send)");
  if (f.matched && (f.family == Family::kProbe || f.family == Family::kRecv || f.family == Family::kSendrecv ||
                    f.family == Family::kMprobe))
    add("a probe and the receive of its message apart (another thread's receive between them)");
  if (l.access != lifetime::Access::kNone) add("use of a freed handle reported with the call that freed it");
  if (t.empty()) return "nothing to check";
  return t;
}

std::string wrapper_text(FnMode m) {
  switch (m) {
    case kPassThrough: return "pass-through: one load and a branch, then PMPI";
    case kPolicyOnly: return "probe policy only: its handler called straight from the wrapper";
    case kHooked: return "hooked: every protection below that is on";
    case kLifetimeRead: return "object lifetime's fast read straight from the wrapper";
  }
  return "?";
}

}  // namespace

std::string describe_function(int i, const Options& o) {
  const FunctionInfo& f = kFunctions[i];
  std::string s;
  auto line = [&](const char* label, const std::string& text) { s += "  " + std::string(label) + text + "\n"; };
  s += f.name + std::string("\n");
  line("table row:        ", std::string("category ") + category_name(f.category) + ", blocking " +
                                 (f.blocking ? "yes" : "no") + ", nonblocking " + f.nonblocking_name + ", family " +
                                 family_name(f.family) + ", objects " + f.objects + ", handles " + f.handles +
                                 ", ignored " + f.ignored + ", threadcomm " + thread_ranks_name(f.threadcomm));
  std::string opts;
  for (const auto& spec : option_specs()) opts += (opts.empty() ? "" : " ") + std::string(spec.name) + "=" + option_value(o, spec.name);
  if (*f.derived)
    line("not in the table: ", std::string("classified when tsmpi was built, by the rule ") + f.derived +
                                   " (TSMPI_UNKNOWN_FUNCTIONS=warn)");
  line("options:          ", opts + " (and the program asks for MPI_THREAD_MULTIPLE)");

  const lifetime::Rule l = lifetime::rule_for(f, o);
  const checks::Rule c = checks::rule_for(f);
  const bool check_on = o.check != CheckMode::Off;
  // matching::matching() at run time: a policy, serialize mode, or checking mode's probe rule.
  const bool matching_on = o.probe != ProbePolicy::Off || serialize_mode(o) ||
                           (check_on && o.check_order == CheckOrder::HappensBefore);
  Wants w;
  w.policy = matching_on && f.matched && !completes_requests(f);
  w.lifetime = l.access != lifetime::Access::kNone;
  w.checks = check_on && checks::selects(c);
  w.own = own::uses_attached_buffer(f.family);
  w.fast_read = lifetime::fast_read_applies(f, l);
  std::string mode = wrapper_text(mode_for(f, o, w));
  // Object lifetime switches a read-only call on with the program's first object of its kinds.
  Wants before = w;
  before.lifetime = false;
  const FnMode before_objects = mode_for(f, o, before);
  if (w.lifetime && lifetime::kinds_to_wait_for(f, l) && before_objects != kHooked)
    mode += " (" + wrapper_text(before_objects) + " until the program makes an object of its kinds)";
  line("wrapper:          ", mode);
  if (*f.native) line("in place of PMPI: ", std::string(f.native) + ", tsmpi's: it adds what no MPI has");

  const std::string level = option_value(o, "TSMPI_UNDERLYING_LEVEL");
  line("serialize mode:   ", serialize_mode(o) ? std::string(strategy_name(f.serial)) + ": " + strategy_text(f.serial)
                                               : "off (TSMPI_UNDERLYING_LEVEL=" + level + ")");
  if (!f.matched)
    line("probe policy:     ", "not a receive-side function");
  else if (o.probe != ProbePolicy::Off)
    line("probe policy:     ", policy_text(f, o.probe));
  else
    line("probe policy:     ", std::string("off (TSMPI_PROBE=off)") +
                                   (matching_on ? "; routed through the matching handlers for serialize mode's "
                                                  "receives from MPI_PROC_NULL and checking mode's probe rule"
                                                : ""));
  line("object lifetime:  ", lifetime_text(f, o, l));
  Options checked = o;  // what checking mode would do, when it is off
  checked.check = CheckMode::Warn;
  line("checking mode:    ", check_on ? checks_text(f, o, c, l)
                                      : "off (TSMPI_CHECK=off); with warn|abort: " +
                                            checks_text(f, o, c, lifetime::rule_for(f, checked)));
  if (object_names::covers(f.name))
    line("object names:     ", TSMPI_MPI_LOCKS_NAMES ? "set and read atomically by the MPI"
                                                     : "set and read under tsmpi's names lock, in every mode (the MPI "
                                                       "takes no lock: a read during a rename would be torn)");
  line("attached buffer:  ", w.own ? "under the attached buffer's lock (Own: attach, detach and buffered sends)" : "-");
  if (o.hang_timeout > 0)
    line("hang watchdog:    ", f.blocking ? "reported with every thread's call and backtrace when blocked longer than " +
                                                std::to_string(o.hang_timeout) + " s"
                                          : "recorded as the thread's current call (it does not block)");
  else
    line("hang watchdog:    ", "off (TSMPI_HANG_TIMEOUT=0)");
  if (o.stats > 0) line("statistics:       ", "counted (TSMPI_STATS)");
  const char* ranks = "";
  switch (f.threadcomm) {
    case ThreadRanks::kNone: ranks = "no communicator, group or message argument"; break;
    case ThreadRanks::kEngine: ranks = "carried out by the thread-rank engine (src/ranks/) on a thread-rank communicator"; break;
    case ThreadRanks::kComplete: ranks = "a thread-rank's requests completed by the thread-rank engine's loop"; break;
    case ThreadRanks::kRefuse: ranks = "refused on a thread-rank communicator (MPI_ERR_UNSUPPORTED_OPERATION through its error handler)"; break;
    case ThreadRanks::kRecord: ranks = "its C callbacks kept by the thread-rank engine, which hands them thread-rank communicators"; break;
  }
  line("thread-ranks:     ", ranks);
  line("Fortran:          ", fortran::routines_of(f.name));
  return s;
}

}  // namespace tsmpi

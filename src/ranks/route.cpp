#include "ranks/route.h"

#include <mutex>

#include "ranks/address_space.h"
#include "ranks/comm.h"
#include "ranks/errors.h"
#include "ranks/handle_space.h"
#include "ranks/request_space.h"
#include "ranks/requests.h"
#include "runtime/activation.h"
#include "runtime/function_table.h"
#include "runtime/handles.h"

namespace tsmpi::ranks {

std::atomic<bool> g_live{false};

namespace {
Made made_kind(Kind k) {
  switch (k) {
    case Kind::Comm: return Made::kComm;
    case Kind::Group: return Made::kGroup;
    case Kind::Message: return Made::kMessage;
    default: return Made::kFree;
  }
}

std::uintptr_t read_bits(const HandleArg& h) {
  switch (h.kind) {
    case Kind::Comm: return handle_bits(*static_cast<const MPI_Comm*>(h.where));
    case Kind::Group: return handle_bits(*static_cast<const MPI_Group*>(h.where));
    case Kind::Message: return handle_bits(*static_cast<const MPI_Message*>(h.where));
    default: return 0;
  }
}

// The first of the engine's requests among a call's input requests (a handle or an array), or 0.
std::uintptr_t engine_request(const CallArgs& args) {
  if (!requests_made()) return 0;
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.kind != Kind::Request || !h.where) continue;
    if (h.use != Use::In && h.use != Use::InOut && h.use != Use::ArrayIn && h.use != Use::ArrayInOut) continue;
    const auto* r = static_cast<const MPI_Request*>(h.where);
    for (int k = 0; k < h.count; ++k)
      if (in_request_space(handle_bits(r[k]))) return handle_bits(r[k]);
  }
  return 0;
}

// The first engine handle among the call's input handles (kind set), or 0; `predefined`: an
// address space's MPI_COMM_WORLD and MPI_COMM_SELF count as the engine's.
std::uintptr_t engine_argument(const CallArgs& args, Made* kind, bool predefined = true) {
  if (std::uintptr_t bits = engine_request(args)) {
    *kind = Made::kRequest;
    return bits;
  }
  if (!ever_made() && !asp::live()) return 0;
  for (int i = 0; i < args.handle_count; ++i) {
    const HandleArg& h = args.handles[i];
    if (h.use != Use::In && h.use != Use::InOut) continue;
    Made k = made_kind(h.kind);
    if (k == Made::kFree || !h.where) continue;
    std::uintptr_t bits = read_bits(h);
    // A released handle is the engine's too: the engine refuses it as freed.
    if (in_space(bits) || (predefined && k == Made::kComm && asp::predefined(bits))) {
      *kind = k;
      return bits;
    }
  }
  return 0;
}

// `refuses`: MPI_ERR_COMM for a freed communicator, MPI_ERR_REQUEST for a freed request, else
// MPI_ERR_UNSUPPORTED_OPERATION, each through the error handler that applies.
bool refused(fn::Id id, const CallArgs& args, int* rc, bool predefined) {
  Made k = Made::kFree;
  std::uintptr_t bits = engine_argument(args, &k, predefined);
  if (!bits) return false;
  Comm* c = k == Made::kComm ? comm_for_process(handle_from_bits<MPI_Comm>(bits)) : nullptr;
  if (k == Made::kComm && !c) {  // a freed communicator
    *rc = raise(nullptr, MPI_ERR_COMM, kFunctions[id].name);
    return true;
  }
  if (k == Made::kRequest) {
    Request* r = request_of(handle_from_bits<MPI_Request>(bits));
    if (!r) {  // a freed request
      *rc = raise(nullptr, MPI_ERR_REQUEST, kFunctions[id].name);
      return true;
    }
    c = r->comm;
  }
  *rc = raise(c, unsupported_code(kFunctions[id].name), kFunctions[id].name);
  return true;
}
}  // namespace

bool routes(fn::Id id, const HandleRef& in, const CallArgs& args, int depth) {
  switch (kFunctions[id].threadcomm) {
    // Also from a thread that is not a rank, when the engine's requests are among the arguments.
    case ThreadRanks::kComplete: return depth == 0 && (tl_regions > 0 || engine_request(args) != 0);
    case ThreadRanks::kEngine: {
      // The communicator the call acts on, the common case (every point-to-point call, every
      // collective): one range check instead of a walk over the arguments.
      if (in.kind == Kind::Comm && in_space(in.bits)) return true;
      Made k;
      return engine_argument(args, &k) != 0;
    }
    default: return false;
  }
}

bool refuses(fn::Id id, const CallArgs& args, int* rc) { return refused(id, args, rc, true); }

bool refuses_in_fortran(fn::Id id, const CallArgs& args, int* rc) { return live() && refused(id, args, rc, false); }

void activate() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < fn::kCount; ++i)
      if (kFunctions[i].threadcomm != ThreadRanks::kNone && kFunctions[i].threadcomm != ThreadRanks::kRecord)
        fn_active[i].store(kHooked, std::memory_order_release);
    g_live.store(true, std::memory_order_release);
  });
}

}  // namespace tsmpi::ranks

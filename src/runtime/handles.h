// MPI handles as plain bits, so one code path serves Open MPI (handles are pointers) and MPICH
// (handles are ints), and references to the communicator, window or file a call works on.
#pragma once
#include <mpi.h>

#include "runtime/mpi_version.h"

#include <cstdint>
#include <type_traits>

namespace tsmpi {

template <class H>
std::uintptr_t handle_bits(H h) {
  if constexpr (std::is_pointer_v<H>) return reinterpret_cast<std::uintptr_t>(h);
  else return static_cast<std::uintptr_t>(static_cast<std::make_unsigned_t<H>>(h));
}

template <class H>
H handle_from_bits(std::uintptr_t bits) {
  if constexpr (std::is_pointer_v<H>) return reinterpret_cast<H>(bits);
  else return static_cast<H>(bits);
}

// The kinds of MPI handles (MPICH's handles are all int, so the kind travels with the bits).
// Serialize mode tracks Comm, Win and File; object lifetime tracks all but Request.
enum class Kind : std::uint8_t {
  kNone, Comm, Win, File, Group, Datatype, Op, Errhandler, Info, Request, Message, Session,
  Stream,  // MPICH's MPIX_Stream
  Keyval,  // attribute keys: int, MPI_KEYVAL_INVALID when freed
};
inline constexpr int kKindCount = static_cast<int>(Kind::Keyval) + 1;
const char* kind_name(Kind k);  // "communicator", "datatype", ...

template <Kind K> struct HandleType;
template <> struct HandleType<Kind::Comm> { using type = MPI_Comm; };
template <> struct HandleType<Kind::Win> { using type = MPI_Win; };
template <> struct HandleType<Kind::File> { using type = MPI_File; };
template <> struct HandleType<Kind::Group> { using type = MPI_Group; };
template <> struct HandleType<Kind::Datatype> { using type = MPI_Datatype; };
template <> struct HandleType<Kind::Op> { using type = MPI_Op; };
template <> struct HandleType<Kind::Errhandler> { using type = MPI_Errhandler; };
template <> struct HandleType<Kind::Info> { using type = MPI_Info; };
template <> struct HandleType<Kind::Request> { using type = MPI_Request; };
template <> struct HandleType<Kind::Message> { using type = MPI_Message; };
#if TSMPI_HAVE_SESSIONS
template <> struct HandleType<Kind::Session> { using type = MPI_Session; };
#endif
#if TSMPI_HAVE_STREAMS
template <> struct HandleType<Kind::Stream> { using type = MPIX_Stream; };
#endif
template <> struct HandleType<Kind::Keyval> { using type = int; };

struct HandleRef {
  Kind kind = Kind::kNone;
  std::uintptr_t bits = 0;
};

// A handle the call writes (newcomm, win, fh), read after the call.
struct OutRef {
  Kind kind = Kind::kNone;
  void* where = nullptr;
  std::uintptr_t (*read)(void*) = nullptr;
  std::uintptr_t value() const { return read ? read(where) : 0; }
};

template <Kind K>
HandleRef ref(typename HandleType<K>::type h) {
  return {K, handle_bits(h)};
}

template <Kind K>
OutRef out(typename HandleType<K>::type* p) {
  using H = typename HandleType<K>::type;
  return {K, p, [](void* w) { return handle_bits(*static_cast<H*>(w)); }};
}

// The communicator, window or file a call works on, and the one it creates.
struct Objects {
  HandleRef in;
  OutRef out;
};

// How a call uses one of its handle parameters (the table's handle forms).
enum class Use : std::uint8_t { In, Out, InOut, ArrayIn, ArrayOut, ArrayInOut };

inline constexpr int kNoPeer = -32768;

// When the standard says a handle argument is not significant (the table's `ignored` column),
// as bits of HandleArg::ignored. No protection reads such an argument: a program may pass
// anything there (NULL arrays, MPI_DATATYPE_NULL, a freed handle).
namespace Ignored {
inline constexpr std::uint8_t kNonRoot = 1;   // at every process but the root (or the local leader)
inline constexpr std::uint8_t kNonLeaf = 2;   // in the root's group of an intercommunicator
inline constexpr std::uint8_t kProcNull = 4;  // where the root argument is MPI_PROC_NULL
inline constexpr std::uint8_t kInPlace = 8;   // when the buffer `in_place` is MPI_IN_PLACE
}  // namespace Ignored

// One handle parameter: `where` points at the handle (In: the wrapper's copy of the argument;
// otherwise the application's variable or array of `count` handles, count < 0 if unknown).
struct HandleArg {
  Kind kind;
  Use use;
  void* where;
  int count;
  std::uint8_t ignored = 0;        // Ignored bits; 0: significant everywhere
  const void* in_place = nullptr;  // the buffer kInPlace tests
};

// A message buffer of a point-to-point call (buffer, count, datatype), for TSMPI_CHECK.
struct BufferArg {
  const void* buf;
  long long count;
  MPI_Datatype type;
  bool receive;  // written by the call (a receive; MPI_Sendrecv_replace's buffer)
  int peer;      // the rank it goes to or comes from (kNoPeer if not an argument)
};

// What the generated wrapper tells the hooked path about the arguments beyond Objects.
struct CallArgs {
  const HandleArg* handles = nullptr;
  int handle_count = 0;
  int peer = kNoPeer;  // the source or dest argument, if the call has one
  const BufferArg* buffers = nullptr;
  int buffer_count = 0;
  // What the root conditions of HandleArg::ignored test: the root (or local leader) argument and
  // the communicator it is a rank of.
  int root = 0;
  MPI_Comm root_comm = MPI_COMM_NULL;
};

// Whether handle argument `h` of a call counts (the standard does not say it is ignored here).
// May ask the MPI for the communicator's rank (under serialize mode's lock, which it takes
// unless `take_lock` is false: the caller holds it): call it only on handles that have a condition.
bool significant(const CallArgs& args, const HandleArg& h, bool take_lock = true);

// A predefined object of MPICH: its handles carry the builtin kind (bits 30-31 = 01). Always
// false on Open MPI, whose handles are pointers.
inline bool mpich_builtin(std::uintptr_t bits) {
#ifdef MPICH
  return (bits >> 30) == 1;
#else
  (void)bits;
  return false;
#endif
}

// The bits of handle i of a HandleArg's handle or array, read with its kind's C type; the null
// handle when `where` is NULL (an erroneous call, which the MPI reports).
std::uintptr_t read_handle(Kind kind, const void* where, int i);
// Writes `bits` as handle i (MPI_INFO_NULL etc. when freeing in the MPI's stead).
void write_handle(Kind kind, void* where, int i, std::uintptr_t bits);
// The null handle of a kind (MPI_COMM_NULL, ..., MPI_KEYVAL_INVALID for Keyval).
std::uintptr_t null_handle(Kind kind);

}  // namespace tsmpi

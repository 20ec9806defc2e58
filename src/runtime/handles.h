// MPI handles as plain bits, so one code path serves Open MPI (handles are pointers) and MPICH
// (handles are ints), and references to the communicator, window or file a call works on.
#pragma once
#include <mpi.h>

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

// The object kinds serialize mode tracks (MPICH's MPI_Comm, MPI_Win and MPI_File may all be
// int, so the kind travels with the bits).
enum class Kind : std::uint8_t { kNone, Comm, Win, File };

template <Kind K> struct HandleType;
template <> struct HandleType<Kind::Comm> { using type = MPI_Comm; };
template <> struct HandleType<Kind::Win> { using type = MPI_Win; };
template <> struct HandleType<Kind::File> { using type = MPI_File; };

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

}  // namespace tsmpi

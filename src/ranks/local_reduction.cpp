#include "ranks/local_reduction.h"

#include <cstdint>
#include <type_traits>

namespace tsmpi::ranks {

namespace {

enum class Kind { kSum, kProd, kMax, kMin, kOther };

Kind kind_of(MPI_Op op) {
  if (op == MPI_SUM) return Kind::kSum;
  if (op == MPI_MAX) return Kind::kMax;
  if (op == MPI_MIN) return Kind::kMin;
  if (op == MPI_PROD) return Kind::kProd;
  return Kind::kOther;
}

// Integers add and multiply modulo 2^bits, as the MPIs' C loops do in practice (signed overflow
// is undefined in C++, so the arithmetic is done unsigned).
template <class T, bool = std::is_integral_v<T>>
struct ArithOf {
  using type = T;
};
template <class T>
struct ArithOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using Arith = typename ArithOf<T>::type;

template <class T>
bool apply(const void* in_, void* inout_, MPI_Count count, Kind k) {
  const T* in = static_cast<const T*>(in_);
  T* io = static_cast<T*>(inout_);
  using A = Arith<T>;
  switch (k) {
    case Kind::kSum:
      for (MPI_Count i = 0; i < count; ++i) io[i] = static_cast<T>(static_cast<A>(in[i]) + static_cast<A>(io[i]));
      return true;
    case Kind::kProd:
      for (MPI_Count i = 0; i < count; ++i) io[i] = static_cast<T>(static_cast<A>(in[i]) * static_cast<A>(io[i]));
      return true;
    case Kind::kMax:
      for (MPI_Count i = 0; i < count; ++i) io[i] = in[i] > io[i] ? in[i] : io[i];
      return true;
    case Kind::kMin:
      for (MPI_Count i = 0; i < count; ++i) io[i] = in[i] < io[i] ? in[i] : io[i];
      return true;
    case Kind::kOther:
      break;
  }
  return false;
}

}  // namespace

bool reduce_predefined(const void* in, void* inout, MPI_Count count, MPI_Datatype type, MPI_Op op) {
  const Kind k = kind_of(op);
  if (k == Kind::kOther || count < 0) return false;
  // Handles are constants of either MPI (addresses in Open MPI, integers in MPICH): compared,
  // never switched on. The MPIs' fixed-size types may be their own handles: listed apart.
  if (type == MPI_DOUBLE) return apply<double>(in, inout, count, k);
  if (type == MPI_INT) return apply<int>(in, inout, count, k);
  if (type == MPI_LONG_LONG || type == MPI_LONG_LONG_INT) return apply<long long>(in, inout, count, k);
  if (type == MPI_FLOAT) return apply<float>(in, inout, count, k);
  if (type == MPI_LONG) return apply<long>(in, inout, count, k);
  if (type == MPI_UNSIGNED) return apply<unsigned>(in, inout, count, k);
  if (type == MPI_UNSIGNED_LONG) return apply<unsigned long>(in, inout, count, k);
  if (type == MPI_UNSIGNED_LONG_LONG) return apply<unsigned long long>(in, inout, count, k);
  if (type == MPI_INT32_T) return apply<std::int32_t>(in, inout, count, k);
  if (type == MPI_INT64_T) return apply<std::int64_t>(in, inout, count, k);
  if (type == MPI_UINT64_T) return apply<std::uint64_t>(in, inout, count, k);
  return false;
}

}  // namespace tsmpi::ranks

// reduce_predefined (src/ranks/local_reduction.h): the thread-rank collectives' own fold of a
// predefined operation on a common datatype, and its refusal of everything else.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "ranks/local_reduction.h"

using tsmpi::ranks::reduce_predefined;

namespace {

template <class T>
void check_ops(MPI_Datatype type) {
  const T in[4] = {T(3), T(-2), T(7), T(0)};
  const T io0[4] = {T(5), T(4), T(-1), T(9)};
  T io[4];
  auto run = [&](MPI_Op op) {
    for (int i = 0; i < 4; ++i) io[i] = io0[i];
    EXPECT_TRUE(reduce_predefined(in, io, 4, type, op));
  };
  run(MPI_SUM);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(io[i], T(in[i] + io0[i])) << i;
  run(MPI_PROD);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(io[i], T(in[i] * io0[i])) << i;
  run(MPI_MAX);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(io[i], in[i] > io0[i] ? in[i] : io0[i]) << i;
  run(MPI_MIN);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(io[i], in[i] < io0[i] ? in[i] : io0[i]) << i;
}

}  // namespace

TEST(ranksLocalReduction, EveryOperationOnEveryType) {
  check_ops<double>(MPI_DOUBLE);
  check_ops<float>(MPI_FLOAT);
  check_ops<int>(MPI_INT);
  check_ops<long>(MPI_LONG);
  check_ops<long long>(MPI_LONG_LONG);
  check_ops<std::int32_t>(MPI_INT32_T);
  check_ops<std::int64_t>(MPI_INT64_T);
}

TEST(ranksLocalReduction, UnsignedAndOverflowWrap) {
  unsigned in[2] = {std::numeric_limits<unsigned>::max(), 2}, io[2] = {2, 3};
  ASSERT_TRUE(reduce_predefined(in, io, 2, MPI_UNSIGNED, MPI_SUM));
  EXPECT_EQ(io[0], 1u);
  EXPECT_EQ(io[1], 5u);
  int a[1] = {std::numeric_limits<int>::max()}, b[1] = {1};
  ASSERT_TRUE(reduce_predefined(a, b, 1, MPI_INT, MPI_SUM));
  EXPECT_EQ(b[0], std::numeric_limits<int>::min());
  std::uint64_t u[1] = {1ull << 63}, v[1] = {3};
  ASSERT_TRUE(reduce_predefined(u, v, 1, MPI_UINT64_T, MPI_MAX));
  EXPECT_EQ(v[0], 1ull << 63);
}

TEST(ranksLocalReduction, FloatingPointKeepsTheMpisOperandOrder) {
  // inout = in op inout: a NaN in inout survives MAX (in > NaN is false), one in `in` does not.
  double in[2] = {1.0, std::nan("")}, io[2] = {std::nan(""), 1.0};
  ASSERT_TRUE(reduce_predefined(in, io, 2, MPI_DOUBLE, MPI_MAX));
  EXPECT_TRUE(std::isnan(io[0]));
  EXPECT_EQ(io[1], 1.0);
}

TEST(ranksLocalReduction, LeavesEverythingElseToTheMpi) {
  int in[2] = {6, 3}, io[2] = {5, 1};
  EXPECT_FALSE(reduce_predefined(in, io, 2, MPI_INT, MPI_BAND));
  EXPECT_FALSE(reduce_predefined(in, io, 2, MPI_INT, MPI_LAND));
  EXPECT_FALSE(reduce_predefined(in, io, 1, MPI_2INT, MPI_MAXLOC));
  EXPECT_FALSE(reduce_predefined(in, io, 2, MPI_SHORT, MPI_SUM));
  EXPECT_FALSE(reduce_predefined(in, io, 2, MPI_DOUBLE_PRECISION, MPI_SUM));
  EXPECT_FALSE(reduce_predefined(in, io, -1, MPI_INT, MPI_SUM));
  EXPECT_EQ(io[0], 5);
  EXPECT_EQ(io[1], 1);
}

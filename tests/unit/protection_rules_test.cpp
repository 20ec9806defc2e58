// The rules tsmpi-info --function reports are the ones activation applies: mode_for over every
// function of the table, and describe_function's lines for each.
#include <gtest/gtest.h>

#include <string>

#include "runtime/activation_rules.h"
#include "runtime/describe.h"
#include "runtime/function_table.h"

namespace tsmpi {
namespace {

TEST(ProtectionRules, NothingWantedIsPassThroughUnlessAnOptionHooksEverything) {
  Options o;
  for (const FunctionInfo& f : kFunctions) EXPECT_EQ(mode_for(f, o, Wants{}), kPassThrough) << f.name;
  o.hang_timeout = 5;  // the watchdog sees every call
  for (const FunctionInfo& f : kFunctions) EXPECT_EQ(mode_for(f, o, Wants{}), kHooked) << f.name;
}

TEST(ProtectionRules, PolicyAloneIsPolicyOnlyAndAnythingElseHooks) {
  Options o;
  const FunctionInfo& recv = kFunctions[find_function("MPI_Recv")];
  EXPECT_EQ(mode_for(recv, o, Wants{.policy = true}), kPolicyOnly);
  EXPECT_EQ(mode_for(recv, o, Wants{.policy = true, .lifetime = true}), kHooked);
  o.underlying_level = UnderlyingLevel::Serialized;
  EXPECT_EQ(mode_for(recv, o, Wants{.policy = true}), kHooked);
  o = Options{};
  o.check = CheckMode::Warn;
  EXPECT_EQ(mode_for(recv, o, Wants{.policy = true}), kHooked);
}

TEST(ProtectionRules, AOneObjectReadThatOnlyLifetimeNeedsTakesTheFastReadFromTheWrapper) {
  Options o;
  const Wants read{.lifetime = true, .fast_read = true};
  for (const char* name : {"MPI_Comm_rank", "MPI_Type_size", "MPI_Info_get", "MPI_Comm_get_name"}) {
    const FunctionInfo& f = kFunctions[find_function(name)];
    EXPECT_TRUE(f.one_read) << name;
    EXPECT_EQ(mode_for(f, o, read), kLifetimeRead) << name;
    EXPECT_EQ(mode_for(f, o, Wants{.lifetime = true}), kHooked) << name;  // no fast read: Scope
  }
  // Two objects, an attribute key, a handle written, a root-only argument: the hook decides.
  for (const char* name : {"MPI_Comm_compare", "MPI_Comm_get_attr", "MPI_Comm_group", "MPI_Recv", "MPI_Bcast"})
    EXPECT_FALSE(kFunctions[find_function(name)].one_read) << name;
  // Anything else on: the hook.
  const FunctionInfo& rank = kFunctions[find_function("MPI_Comm_rank")];
  Options other = o;
  other.stats = 1;
  EXPECT_EQ(mode_for(rank, other, read), kHooked);
  other = o;
  other.hang_timeout = 5;
  EXPECT_EQ(mode_for(rank, other, read), kHooked);
  other = o;
  other.underlying_level = UnderlyingLevel::Single;
  EXPECT_EQ(mode_for(rank, other, read), kHooked);
  other = o;
  other.check = CheckMode::Warn;
  EXPECT_EQ(mode_for(rank, other, read), kHooked);
  EXPECT_EQ(mode_for(rank, o, Wants{.lifetime = true, .checks = true, .fast_read = true}), kHooked);
}

TEST(ProtectionRules, EveryFunctionIsDescribedUnderEveryModeWithoutGaps) {
  Options serial;
  serial.underlying_level = UnderlyingLevel::Single;
  serial.check = CheckMode::Warn;
  serial.hang_timeout = 10;
  for (const Options& o : {Options{}, serial})
    for (int i = 0; i < fn::kCount; ++i) {
      const std::string d = describe_function(i, o);
      EXPECT_EQ(d.rfind(kFunctions[i].name, 0), 0u) << d;
      for (const char* label : {"table row:", "wrapper:", "serialize mode:", "probe policy:", "object lifetime:",
                                "checking mode:", "hang watchdog:", "thread-ranks:"})
        EXPECT_NE(d.find(label), std::string::npos) << kFunctions[i].name << " lacks " << label;
      EXPECT_EQ(d.find('?'), std::string::npos) << d;  // every strategy and mode has its text
    }
}

}  // namespace
}  // namespace tsmpi

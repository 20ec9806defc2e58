#include "runtime/options.h"

#include <gtest/gtest.h>

using tsmpi::Environment;
using tsmpi::parse_options;

TEST(Options, DefaultsWhenNothingIsSet) {
  auto r = parse_options({});
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.options.underlying_level, tsmpi::UnderlyingLevel::Multiple);
  EXPECT_EQ(r.options.probe, tsmpi::ProbePolicy::Mprobe);
  EXPECT_EQ(r.options.check, tsmpi::CheckMode::Off);
  EXPECT_FALSE(r.options.stats);
  EXPECT_EQ(r.options.verbose, 0);
  EXPECT_EQ(r.options.hang_timeout, 0u);
}

TEST(Options, EveryDefaultInTheTableParsesToTheDefaultOptions) {
  Environment env;
  for (const auto& s : tsmpi::option_specs()) env.emplace_back(s.name, s.default_value);
  auto r = parse_options(env);
  ASSERT_FALSE(r.error) << *r.error;
  for (const auto& s : tsmpi::option_specs())
    EXPECT_EQ(tsmpi::option_value(r.options, s.name), s.default_value) << s.name;
}

TEST(Options, BuiltValuesAreAccepted) {
  auto r = parse_options({{"TSMPI_STATS", "1"}, {"TSMPI_VERBOSE", "2"}, {"TSMPI_PROBE", "off"},
                          {"TSMPI_CHECK", "off"}, {"TSMPI_UNDERLYING_LEVEL", "multiple"},
                          {"TSMPI_HANG_TIMEOUT", "0"}});
  ASSERT_FALSE(r.error) << *r.error;
  EXPECT_TRUE(r.options.stats);
  EXPECT_EQ(r.options.verbose, 2);
  EXPECT_EQ(tsmpi::option_value(r.options, "TSMPI_VERBOSE"), "2");
  EXPECT_EQ(tsmpi::option_value(r.options, "TSMPI_STATS"), "1");
}

TEST(Options, InvalidValueNamesTheVariableAndItsAllowedValues) {
  auto r = parse_options({{"TSMPI_PROBE", "bogus"}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(*r.error, "tsmpi: TSMPI_PROBE=bogus is invalid; allowed values: mprobe|lock2d|helper|off");
  r = parse_options({{"TSMPI_STATS", "yes"}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(*r.error, "tsmpi: TSMPI_STATS=yes is invalid; allowed values: 0|1|2");
  r = parse_options({{"TSMPI_VERBOSE", ""}});
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->find("TSMPI_VERBOSE= is invalid; allowed values: 0|1|2"), std::string::npos);
}

TEST(Options, ValuesAreCaseSensitiveAndExact) {
  EXPECT_TRUE(parse_options({{"TSMPI_PROBE", "OFF"}}).error);
  EXPECT_TRUE(parse_options({{"TSMPI_PROBE", "off "}}).error);
  EXPECT_TRUE(parse_options({{"TSMPI_PROBE", "of"}}).error);
}

TEST(Options, UnknownVariableIsAnError) {
  auto r = parse_options({{"TSMPI_PROBES", "mprobe"}});
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->rfind("tsmpi: unknown variable TSMPI_PROBES=mprobe; tsmpi reads only TSMPI_UNDERLYING_LEVEL, ", 0), 0u)
      << *r.error;
}

TEST(Options, SerializeModeLevelsAreAccepted) {
  auto single = parse_options({{"TSMPI_UNDERLYING_LEVEL", "single"}});
  ASSERT_FALSE(single.error);
  EXPECT_EQ(single.options.underlying_level, tsmpi::UnderlyingLevel::Single);
  auto serialized = parse_options({{"TSMPI_UNDERLYING_LEVEL", "serialized"}});
  ASSERT_FALSE(serialized.error);
  EXPECT_EQ(serialized.options.underlying_level, tsmpi::UnderlyingLevel::Serialized);
  EXPECT_EQ(tsmpi::option_value(serialized.options, "TSMPI_UNDERLYING_LEVEL"), "serialized");
}

TEST(Options, EveryProbePolicyAndCheckModeIsAccepted) {
  const tsmpi::ProbePolicy policies[] = {tsmpi::ProbePolicy::Mprobe, tsmpi::ProbePolicy::Lock2d,
                                         tsmpi::ProbePolicy::Helper, tsmpi::ProbePolicy::Off};
  int i = 0;
  for (const char* v : {"mprobe", "lock2d", "helper", "off"}) {
    auto r = parse_options({{"TSMPI_PROBE", v}});
    ASSERT_FALSE(r.error) << v;
    EXPECT_EQ(r.options.probe, policies[i++]);
    EXPECT_EQ(tsmpi::option_value(r.options, "TSMPI_PROBE"), v);
  }
  EXPECT_EQ(parse_options({{"TSMPI_CHECK", "warn"}}).options.check, tsmpi::CheckMode::Warn);
  EXPECT_EQ(parse_options({{"TSMPI_CHECK", "abort"}}).options.check, tsmpi::CheckMode::Abort);
}

TEST(Options, HangTimeoutIsWholeSeconds) {
  for (const char* bad : {"-1", "abc", "1.5", "", "99999999999999999999"}) {
    auto r = parse_options({{"TSMPI_HANG_TIMEOUT", bad}});
    ASSERT_TRUE(r.error) << bad;
    EXPECT_NE(r.error->find("allowed values: whole seconds >= 0 (0 = off)"), std::string::npos) << *r.error;
  }
  auto watchdog = parse_options({{"TSMPI_HANG_TIMEOUT", "30"}});
  ASSERT_FALSE(watchdog.error);
  EXPECT_EQ(watchdog.options.hang_timeout, 30u);
  EXPECT_FALSE(parse_options({{"TSMPI_HANG_TIMEOUT", "0"}}).error);
}

TEST(Options, LifetimeChecksAreOnByDefaultWithABoundedQuarantine) {
  auto r = parse_options({});
  EXPECT_TRUE(r.options.lifetime);
  EXPECT_EQ(r.options.quarantine, 64u);
  EXPECT_FALSE(parse_options({{"TSMPI_LIFETIME", "off"}}).options.lifetime);
  EXPECT_EQ(parse_options({{"TSMPI_QUARANTINE", "0"}}).options.quarantine, 0u);
  EXPECT_EQ(tsmpi::option_value(parse_options({{"TSMPI_QUARANTINE", "512"}}).options, "TSMPI_QUARANTINE"), "512");
  for (const char* bad : {"-1", "many", "2000000"}) {
    auto q = parse_options({{"TSMPI_QUARANTINE", bad}});
    ASSERT_TRUE(q.error) << bad;
    EXPECT_NE(q.error->find("TSMPI_QUARANTINE"), std::string::npos);
  }
  auto l = parse_options({{"TSMPI_LIFETIME", "yes"}});
  ASSERT_TRUE(l.error);
  EXPECT_NE(l.error->find("allowed values: on|off"), std::string::npos);
}

TEST(Options, FirstErrorWinsAndNamesItsVariable) {
  auto r = parse_options({{"TSMPI_STATS", "1"}, {"TSMPI_CHECK", "maybe"}, {"TSMPI_PROBE", "x"}});
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->find("TSMPI_CHECK=maybe"), std::string::npos);
}

TEST(Options, AddressSpacesTakeAWholeNumberUpTo256) {
  EXPECT_EQ(parse_options({{"TSMPI_ASP", "3"}}).options.asp, 3);
  EXPECT_EQ(parse_options({{"TSMPI_ASP", "0"}}).options.asp, 0);
  for (const char* bad : {"-1", "257", "x", "", "2.5"}) {
    auto r = parse_options({{"TSMPI_ASP", bad}});
    ASSERT_TRUE(r.error) << bad;
    EXPECT_NE(r.error->find("TSMPI_ASP"), std::string::npos);
    EXPECT_NE(r.error->find("1 to 256"), std::string::npos);
  }
}

TEST(Options, EverySpecHasHelpAndADefaultThatIsAllowed) {
  for (const auto& s : tsmpi::option_specs()) {
    EXPECT_GT(std::string(s.help).size(), 10u) << s.name;
    EXPECT_FALSE(parse_options({{s.name, s.default_value}}).error) << s.name;
  }
}

// codegen/generate.py on small fixtures: what it emits, and that it fails loudly.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct GeneratorRun {
  int status;
  std::string output;
  fs::path outdir;
};

GeneratorRun generate(const std::string& table, const std::string& case_name,
                      const std::string& exports = "mini_exports.txt", const std::string& ast = "mini_ast.json",
                      const std::string& extra = "") {
  fs::path outdir = fs::path(TSMPI_TEST_TMPDIR) / case_name;
  fs::remove_all(outdir);
  fs::create_directories(outdir);
  fs::path log = outdir / "log.txt";
  std::string fixtures = TSMPI_TEST_FIXTURES;
  std::string cmd = std::string(TSMPI_TEST_PYTHON) + " " + TSMPI_TEST_GENERATOR + " --table " + fixtures + "/" +
                    table + " --ast " + fixtures + "/" + ast + " --exports " + fixtures + "/" +
                    exports + " --mpi openmpi --chunks 2 " + extra + " --outdir " + outdir.string() + " > " +
                    log.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, text.str(), outdir};
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(Generator, EmitsOneWrapperPerExportedFunction) {
  GeneratorRun r = generate("table_ok.table", "ok");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string wrappers = read_all(r.outdir / "wrappers_0.cpp") + read_all(r.outdir / "wrappers_1.cpp");
  // The prototype comes from mpi.h; the pass-through is one table load and a branch.
  EXPECT_NE(wrappers.find("extern \"C\" TSMPI_EXPORT int MPI_Send(std::type_identity_t<const void *> a0, "
                          "std::type_identity_t<int> a1, std::type_identity_t<MPI_Datatype> a2"),
            std::string::npos)
      << wrappers;
  EXPECT_NE(wrappers.find("if (TSMPI_LIKELY(tsmpi::pass_through(tsmpi::fn::MPI_Send))) return PMPI_Send(a0, a1, a2, a3, a4, a5);"),
            std::string::npos);
  // MPI_Send's counterpart is not exported by this "MPI": serialize mode must hold the lock.
  EXPECT_NE(wrappers.find("tsmpi::Hook<tsmpi::Category::CommIO, tsmpi::Strategy::kBlockingLocked>::call(\n"
                          "      tsmpi::fn::MPI_Send, [&]() { return PMPI_Send(a0, a1, a2, a3, a4, a5); }"),
            std::string::npos);
  EXPECT_NE(wrappers.find("tsmpi::Hook<tsmpi::Category::Own, tsmpi::Strategy::kAdmitted>::call(\n"
                          "      tsmpi::fn::MPI_Comm_dup"),
            std::string::npos);
  EXPECT_NE(wrappers.find("tsmpi::Objects{tsmpi::ref<tsmpi::Kind::Comm>(a0), tsmpi::out<tsmpi::Kind::Comm>(a1)}"),
            std::string::npos);
  // Variadic MPI_Pcontrol forwards its fixed argument; MPI_Wtime returns double.
  EXPECT_NE(wrappers.find("int MPI_Pcontrol(std::type_identity_t<const int> a0, ...)"), std::string::npos);
  EXPECT_NE(wrappers.find("double MPI_Wtime(void)"), std::string::npos);
  // MPI_Isend is classified but this "MPI" does not export it: no wrapper.
  EXPECT_EQ(wrappers.find("MPI_Isend("), std::string::npos);  // not even called through PMPI_Isend
  std::string ids = read_all(r.outdir / "fn_ids.h");
  EXPECT_NE(ids.find("kCount = 4;"), std::string::npos) << ids;
  std::string table = read_all(r.outdir / "function_table.cpp");
  EXPECT_NE(table.find("{\"MPI_Send\", Category::CommIO, true, -1, \"MPI_Isend\", Family::kSend"), std::string::npos)
      << table;
  EXPECT_NE(table.find("\"-\", Strategy::kUnlocked, false, \"-\", ThreadRanks::kNone, \"\", false, \"\"}"), std::string::npos)
      << table;  // MPI_Wtime
}

TEST(Generator, FailsNamingAnExportedFunctionWithoutARow) {
  GeneratorRun r = generate("table_missing_row.table", "missing");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("openmpi exports PMPI_Comm_dup but MPI_Comm_dup is not classified in table_missing_row.table"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(r.outdir / "wrappers_0.cpp"));
}

TEST(Generator, FailsWhenHandlesDisagreeWithMpiH) {
  GeneratorRun r = generate("table_bad_handles.table", "handles");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("MPI_Comm_dup: handle Comm does not match mpi.h's MPI_Comm *"), std::string::npos)
      << r.output;
}

TEST(Generator, FailsOnAnUnknownCategory) {
  GeneratorRun r = generate("table_bad_category.table", "category");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("MPI_Wtime: unknown category Cheap"), std::string::npos) << r.output;
}

// Serialize mode: a blocking call whose counterpart has its parameters plus a trailing request
// becomes start + wait; one whose counterpart adds an int *flag becomes a polling loop.
TEST(Generator, DerivesSerializeStrategiesFromCounterpartShapes) {
  GeneratorRun r = generate("table_counterparts.table", "counterparts", "exports_with_counterparts.txt");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string wrappers = read_all(r.outdir / "wrappers_0.cpp") + read_all(r.outdir / "wrappers_1.cpp");
  EXPECT_NE(wrappers.find("tsmpi::Hook<tsmpi::Category::CommIO, tsmpi::Strategy::kStartWait>::call(\n"
                          "      tsmpi::fn::MPI_Send"),
            std::string::npos)
      << wrappers;
  EXPECT_NE(wrappers.find("tsmpi::StartWait{[&](MPI_Request* r) { return PMPI_Isend(a0, a1, a2, a3, a4, a5, r); }, "
                          "MPI_STATUS_IGNORE}"),
            std::string::npos);
  EXPECT_NE(wrappers.find("tsmpi::Poll{[&](int* flag) { return PMPI_Test(a0, flag, a1); }}"), std::string::npos);
  EXPECT_NE(wrappers.find("tsmpi::Hook<tsmpi::Category::CommIO, tsmpi::Strategy::kLocked>::call(\n"
                          "      tsmpi::fn::MPI_Isend"),
            std::string::npos);
  // Communicator creation holds the right to enter: admitted (no MPI_Comm_idup exported here).
  EXPECT_NE(wrappers.find("tsmpi::Strategy::kAdmitted>::call(\n      tsmpi::fn::MPI_Comm_dup"), std::string::npos);
  // The pass-through test comes first; the hooked path is a separate function taking the
  // arguments by value, so the wrapper sets up no frame before the test.
  EXPECT_NE(wrappers.find("double MPI_Wtime(void) {\n  if (TSMPI_LIKELY(tsmpi::pass_through(tsmpi::fn::MPI_Wtime))) return PMPI_Wtime();\n"
                          "  return hooked_MPI_Wtime();\n}"),
            std::string::npos);
  EXPECT_NE(wrappers.find("[[gnu::noinline]] static double hooked_MPI_Wtime(void) {\n"
                          "  return tsmpi::Hook<tsmpi::Category::None, tsmpi::Strategy::kUnlocked>"),
            std::string::npos);
}

// Probe policies: functions of the receive-side families are handed to their matching handler,
// named without MPI_; the others are not.
TEST(Generator, RoutesReceiveSideFamiliesToTheProbePolicies) {
  GeneratorRun r = generate("table_counterparts.table", "matched", "exports_with_counterparts.txt");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string wrappers = read_all(r.outdir / "wrappers_0.cpp") + read_all(r.outdir / "wrappers_1.cpp");
  EXPECT_NE(wrappers.find("[&](auto& original) { return tsmpi::matching::Wait(original, a0, a1); }"),
            std::string::npos)
      << wrappers;
  EXPECT_NE(wrappers.find("tsmpi::matching::Test(original, a0, a1, a2)"), std::string::npos);
  EXPECT_EQ(wrappers.find("tsmpi::matching::Send"), std::string::npos);
  EXPECT_EQ(wrappers.find("tsmpi::matching::Isend"), std::string::npos);
  std::string table = read_all(r.outdir / "function_table.cpp");
  EXPECT_NE(table.find("{\"MPI_Wait\", Category::CommIO, true"), std::string::npos);
  EXPECT_NE(table.find("Family::kWait, \"free:Request\", \"Request&\", Strategy::kPoll, true, \"-\", "
                       "ThreadRanks::kComplete, \"\", false, \"\"}"),
            std::string::npos)
      << table;
}

// The threadcomm column: engine rows call their src/ranks/calls.h function, complete rows too,
// refuse rows carry ranks::Refused; a row with a communicator argument must say which.
TEST(Generator, RoutesThreadcommColumnToTheEngine) {
  GeneratorRun r = generate("table_counterparts.table", "threadcomm", "exports_with_counterparts.txt");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string wrappers = read_all(r.outdir / "wrappers_0.cpp") + read_all(r.outdir / "wrappers_1.cpp");
  EXPECT_NE(wrappers.find("tsmpi::ranks::on::Send(a0, a1, a2, a3, a4, a5)"), std::string::npos) << wrappers;
  EXPECT_NE(wrappers.find("tsmpi::ranks::on::Wait(a0, a1)"), std::string::npos) << wrappers;
  EXPECT_NE(wrappers.find("tsmpi::ranks::Refused{}"), std::string::npos) << wrappers;
  GeneratorRun bad = generate("table_threadcomm_unsaid.table", "threadcomm_unsaid", "mini_exports.txt");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("MPI_Comm_dup: takes a Comm handle, so its threadcomm column must be engine, complete or refuse"),
            std::string::npos)
      << bad.output;
}

// Object lifetime, checking mode and the watchdog learn the arguments from CallArgs: each
// handle with its kind and use, the source or dest, and a point-to-point call's buffers.
TEST(Generator, DescribesHandlesPeersAndBuffersToTheHook) {
  GeneratorRun r = generate("table_counterparts.table", "callargs", "exports_with_counterparts.txt");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string wrappers = read_all(r.outdir / "wrappers_0.cpp") + read_all(r.outdir / "wrappers_1.cpp");
  EXPECT_NE(wrappers.find("const tsmpi::HandleArg handles[] = {{tsmpi::Kind::Datatype, tsmpi::Use::In, (void*)&a2, 1}, "
                          "{tsmpi::Kind::Comm, tsmpi::Use::In, (void*)&a5, 1}};"),
            std::string::npos)
      << wrappers;
  EXPECT_NE(wrappers.find("const tsmpi::BufferArg buffers[] = {{a0, static_cast<long long>(a1), a2, false, a3}};"),
            std::string::npos);
  EXPECT_NE(wrappers.find("tsmpi::CallArgs{handles, 2, a3, buffers, 1}"), std::string::npos);  // MPI_Send: dest
  EXPECT_NE(wrappers.find("{tsmpi::Kind::Comm, tsmpi::Use::In, (void*)&a0, 1}, {tsmpi::Kind::Comm, tsmpi::Use::Out, (void*)a1, 1}"),
            std::string::npos);  // MPI_Comm_dup
  EXPECT_NE(wrappers.find("{tsmpi::Kind::Request, tsmpi::Use::InOut, (void*)a0, 1}"), std::string::npos);  // MPI_Wait
  EXPECT_NE(wrappers.find("tsmpi::CallArgs{nullptr, 0, tsmpi::kNoPeer, nullptr, 0}"), std::string::npos);  // MPI_Wtime
}

// The ignored column: a handle argument the standard says is not significant in some case
// carries the condition, and the call the values that decide it.
TEST(Generator, DescribesWhenHandleArgumentsAreIgnored) {
  GeneratorRun r = generate("table_ignored.table", "ignored");
  ASSERT_EQ(r.status, 0) << r.output;
  std::string wrappers = read_all(r.outdir / "wrappers_0.cpp") + read_all(r.outdir / "wrappers_1.cpp");
  EXPECT_NE(wrappers.find("{tsmpi::Kind::Datatype, tsmpi::Use::In, (void*)&a2, 1, tsmpi::Ignored::kInPlace, a0}, "
                          "{tsmpi::Kind::Comm, tsmpi::Use::In, (void*)&a5, 1}"),
            std::string::npos)
      << wrappers;
}

TEST(Generator, FailsNamingAnIgnoredArgumentOrConditionItCannotResolve) {
  GeneratorRun r = generate("table_bad_ignored.table", "bad_ignored");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("MPI_Send: ignored column names root, which mpi.h's prototype (buf, count, datatype, dest, "
                          "tag, comm) does not have"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(r.outdir / "wrappers_0.cpp"));
  r = generate("table_bad_ignored_condition.table", "bad_ignored_condition");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("MPI_Comm_dup: bad ignored condition sometimes (allowed: nonroot, nonleaf, procnull, "
                          "nonleader, inplace(buffer))"),
            std::string::npos)
      << r.output;
}

// An MPI exporting functions the table lacks (a newer MPI): by default the build stops naming
// each; with --unknown-functions warn each is classified by the table's rules where its name and
// prototype decide (a large-count form as its base, the tools interface as None), otherwise
// conservatively (Other: serialized, nothing else; refused on thread-rank communicators), named
// in a warning and marked in the function table for tsmpi-info.
TEST(Generator, UnknownFunctionsStopByDefaultAndAreClassifiedWhenAsked) {
  GeneratorRun stop = generate("table_ok.table", "unknown_stop", "exports_unknown.txt", "unknown_ast.json");
  EXPECT_NE(stop.status, 0);
  for (const char* name : {"MPI_Send_c", "MPI_T_pvar_get_num", "MPI_Comm_flush_buffer"})
    EXPECT_NE(stop.output.find(std::string("exports P") + name + " but " + name + " is not classified"),
              std::string::npos) << stop.output;
  EXPECT_NE(stop.output.find("-DTSMPI_UNKNOWN_FUNCTIONS=warn"), std::string::npos) << stop.output;

  GeneratorRun warn = generate("table_ok.table", "unknown_warn", "exports_unknown.txt", "unknown_ast.json",
                               "--unknown-functions warn");
  ASSERT_EQ(warn.status, 0) << warn.output;
  EXPECT_NE(warn.output.find("warning: MPI_Comm_flush_buffer is not in table_ok.table: classified Other"),
            std::string::npos) << warn.output;
  const std::string table = read_all(warn.outdir / "function_table.cpp");
  EXPECT_NE(table.find("{\"MPI_Comm_flush_buffer\", Category::Other, false, -1, \"-\", Family::kNone, \"-\", \"Comm\", "
                       "Strategy::kLocked, false, \"-\", ThreadRanks::kRefuse, \"conservative: serialized, no other "
                       "protection\", false, \"\"}"),
            std::string::npos) << table;
  EXPECT_NE(table.find("{\"MPI_Send_c\", Category::CommIO, true, -1, \"-\", Family::kSend, \"-\", \"Datatype,Comm\", "
                       "Strategy::kBlockingLocked, false, \"-\", ThreadRanks::kRefuse, \"the large-count form of "
                       "MPI_Send\", false, \"\"}"),
            std::string::npos) << table;
  EXPECT_NE(table.find("{\"MPI_T_pvar_get_num\", Category::None, false, -1, \"-\", Family::kNone, \"-\", \"-\", "
                       "Strategy::kUnlocked"),
            std::string::npos) << table;
  // Rows of the table are marked as such.
  EXPECT_NE(table.find("ThreadRanks::kRefuse, \"\", false, \"\"}"), std::string::npos) << table;
  const std::string wrappers = read_all(warn.outdir / "wrappers_0.cpp") + read_all(warn.outdir / "wrappers_1.cpp");
  EXPECT_NE(wrappers.find("int MPI_Comm_flush_buffer("), std::string::npos);
}

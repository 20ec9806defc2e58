// Integrity of the classification table as compiled into this build.
#include "runtime/function_table.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::set<std::string> exported_functions() {
  std::set<std::string> names;
  std::ifstream in(TSMPI_TEST_EXPORTS);
  std::string line;
  std::regex pmpi(R"(^\S+ [TWi] P(MPIX?_\w+)$)");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, pmpi)) names.insert(m[1]);
  return names;
}

}  // namespace

TEST(FunctionTable, WrapsExactlyTheFunctionsTheMpiExports) {
  auto exported = exported_functions();
  ASSERT_FALSE(exported.empty());
  EXPECT_EQ(exported.size(), static_cast<size_t>(tsmpi::fn::kCount));
  for (const auto& name : exported) EXPECT_GE(tsmpi::find_function(name), 0) << name;
}

TEST(FunctionTable, NamesAreUniqueAndIdsMatchPositions) {
  std::set<std::string> seen;
  for (int i = 0; i < tsmpi::fn::kCount; ++i) {
    EXPECT_TRUE(seen.insert(tsmpi::kFunctions[i].name).second) << tsmpi::kFunctions[i].name;
    EXPECT_EQ(tsmpi::find_function(tsmpi::kFunctions[i].name), i);
  }
  EXPECT_EQ(std::string(tsmpi::kFunctions[tsmpi::fn::MPI_Send].name), "MPI_Send");
  EXPECT_EQ(std::string(tsmpi::kFunctions[tsmpi::fn::MPI_Comm_dup].name), "MPI_Comm_dup");
}

TEST(FunctionTable, NonblockingCounterpartsAreConsistent) {
  for (const auto& f : tsmpi::kFunctions) {
    if (f.nonblocking_id < 0) continue;
    const auto& nb = tsmpi::kFunctions[f.nonblocking_id];
    EXPECT_EQ(std::string(nb.name), f.nonblocking_name) << f.name;
    EXPECT_FALSE(nb.blocking) << f.name << " -> " << nb.name;
    EXPECT_TRUE(f.blocking) << f.name << " has a nonblocking counterpart but is not blocking";
  }
  auto nb_of = [](tsmpi::fn::Id id) { return std::string(tsmpi::kFunctions[id].nonblocking_name); };
  EXPECT_EQ(nb_of(tsmpi::fn::MPI_Send), "MPI_Isend");
  EXPECT_EQ(nb_of(tsmpi::fn::MPI_Recv), "MPI_Irecv");
  EXPECT_EQ(nb_of(tsmpi::fn::MPI_Wait), "MPI_Test");
  EXPECT_EQ(nb_of(tsmpi::fn::MPI_Barrier), "MPI_Ibarrier");
  EXPECT_EQ(nb_of(tsmpi::fn::MPI_Comm_dup), "MPI_Comm_idup");
  EXPECT_EQ(nb_of(tsmpi::fn::MPI_Mprobe), "MPI_Improbe");
}

TEST(FunctionTable, FamiliesThatHaveHandlers) {
  std::map<tsmpi::Family, std::set<std::string>> by_family;
  for (const auto& f : tsmpi::kFunctions) by_family[f.family].insert(f.name);
  std::set<std::string> init = {"MPI_Init", "MPI_Init_thread"};
  std::set<std::string> finalize = {"MPI_Finalize"};
  if (tsmpi::find_function("MPI_Session_init") >= 0) {
    init.insert("MPI_Session_init");
    finalize.insert("MPI_Session_finalize");
  }
  EXPECT_EQ(by_family[tsmpi::Family::kInit], init);
  EXPECT_EQ(by_family[tsmpi::Family::kFinalize], finalize);
  EXPECT_EQ(by_family[tsmpi::Family::kThreadlevel],
            (std::set<std::string>{"MPI_Finalized", "MPI_Initialized", "MPI_Is_thread_main", "MPI_Query_thread"}));
  EXPECT_EQ(by_family[tsmpi::Family::kProbe], (std::set<std::string>{"MPI_Iprobe", "MPI_Probe"}));
  EXPECT_TRUE(by_family[tsmpi::Family::kRecv].count("MPI_Recv"));
  EXPECT_TRUE(by_family[tsmpi::Family::kRecv].count("MPI_Irecv"));
  EXPECT_TRUE(by_family[tsmpi::Family::kRecv].count("MPI_Recv_init"));
  EXPECT_TRUE(by_family[tsmpi::Family::kMrecv].count("MPI_Mrecv"));
  EXPECT_TRUE(by_family[tsmpi::Family::kSendrecv].count("MPI_Sendrecv_replace"));
}

TEST(FunctionTable, HandleAndObjectColumnsAreWellFormed) {
  std::regex handles(R"(-|((Comm|Group|Datatype|Op|Errhandler|Info|Win|File|Request|Message|Session|Stream)(\[\])?[*&]?)(,((Comm|Group|Datatype|Op|Errhandler|Info|Win|File|Request|Message|Session|Stream)(\[\])?[*&]?))*)");
  std::regex objects(R"(-|((new|free):(Comm|Group|Datatype|Op|Errhandler|Info|Win|File|Request|Message|Session|Stream|Keyval))(,(new|free):\w+)*)");
  for (const auto& f : tsmpi::kFunctions) {
    EXPECT_TRUE(std::regex_match(f.handles, handles)) << f.name << ": " << f.handles;
    EXPECT_TRUE(std::regex_match(f.objects, objects)) << f.name << ": " << f.objects;
  }
  EXPECT_EQ(std::string(tsmpi::kFunctions[tsmpi::fn::MPI_Send].handles), "Datatype,Comm");
  EXPECT_EQ(std::string(tsmpi::kFunctions[tsmpi::fn::MPI_Comm_free].objects), "free:Comm");
  EXPECT_EQ(std::string(tsmpi::kFunctions[tsmpi::fn::MPI_Waitall].handles), "Request[]&");
}

TEST(FunctionTable, LargeCountVariantsShareTheirBaseRow) {
  for (const auto& f : tsmpi::kFunctions) {
    std::string name = f.name;
    if (name.size() < 3 || name.substr(name.size() - 2) != "_c") continue;
    int base = tsmpi::find_function(name.substr(0, name.size() - 2));
    if (base < 0) continue;
    const auto& b = tsmpi::kFunctions[base];
    EXPECT_EQ(f.category, b.category) << name;
    EXPECT_EQ(f.blocking, b.blocking) << name;
    EXPECT_EQ(f.family, b.family) << name;
    EXPECT_EQ(std::string(f.handles), b.handles) << name;
  }
}

// Every function of Gropp & Thakur's own classification keeps the category they gave it.
TEST(FunctionTable, AgreesWithThePapersClassification) {
  std::filesystem::path csv =
      std::filesystem::path(TSMPI_TEST_TABLE).parent_path().parent_path().parent_path() /
      "shared/reference/gropp-thakur-categories.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << csv << " is not beside the checkout";
  const std::map<std::string, std::string> spelling = {
      {"Comm I/O", "CommIO"},         {"Access Only", "AccessOnly"}, {"Update RefCount", "UpdateRef"},
      {"Read of List", "ReadList"},   {"Update List", "UpdateList"}, {"Allocate", "Allocate"},
      {"Own", "Own"},                 {"None", "None"},              {"Other", "Other"},
      {"Collective", "Collective"}};
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  int checked = 0;
  while (std::getline(in, line)) {
    auto comma = line.find(',');
    std::string upper = line.substr(0, comma), category = line.substr(comma + 1);
    for (const auto& f : tsmpi::kFunctions) {
      std::string name = f.name;
      for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (name != upper) continue;
      EXPECT_EQ(tsmpi::category_name(f.category), spelling.at(category)) << f.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 280);
}

// What tsmpi knows about each MPI function of this build: the row of
// codegen/mpi_functions.table, compiled in by the generator (function_table.cpp).
#pragma once
#include <cstdint>
#include <string_view>

#include "fn_ids.h"
#include "runtime/category.h"
#include "runtime/strategy.h"

namespace tsmpi {

enum class Family : std::uint8_t {
  kNone, kInit, kFinalize, kThreadlevel, kAbort, kSend, kRecv, kSendrecv,
  kProbe, kMprobe, kMrecv, kWait, kTest, kStart, kCancel,
  kBsend,   // buffered sends: use the attached buffer (Own, src/locking/buffer_lock.h)
  kBuffer,  // MPI_Buffer_attach/detach
};
const char* family_name(Family f);

// What the call does when a handle argument belongs to a thread-rank communicator (src/ranks/,
// the table's threadcomm column).
enum class ThreadRanks : std::uint8_t {
  kNone,      // no communicator, group or message argument
  kEngine,    // carried out by the thread-rank engine
  kComplete,  // request completion, start, cancel or free: the engine's loop for thread-ranks
  kRefuse,    // MPI_ERR_UNSUPPORTED_OPERATION through the error handler
  kRecord,    // makes an error handler or keyval whose callbacks the engine keeps (ranks/callbacks.h)
};
const char* thread_ranks_name(ThreadRanks t);

struct FunctionInfo {
  const char* name;
  Category category;
  bool blocking;
  int nonblocking_id;             // index into kFunctions, -1 if none in this MPI
  const char* nonblocking_name;   // as in the table, "-" if none
  Family family;
  const char* objects;            // "new:Comm", "free:Request", ... or "-"
  const char* handles;            // handle parameters in order, or "-"
  Strategy serial;                // what serialize mode does (derived by the generator)
  bool matched;                   // goes through the probe policy (src/matching/handlers.h)
  const char* ignored;            // arguments the standard says are ignored, and when; or "-"
  ThreadRanks threadcomm;         // on a thread-rank communicator (src/ranks/)
  // "" for a row of the table; for a function the table lacks, built with
  // -DTSMPI_UNKNOWN_FUNCTIONS=warn, the rule the generator classified it by (codegen/README.md).
  const char* derived;
  // Reads one object, named by a single handle argument that is significant everywhere, and
  // nothing else the hook would need to look at: kLifetimeRead can serve it (activation_rules.h).
  bool one_read;
  // "" or the tsmpi function the wrapper calls in place of PMPI_<name>, which adds what no MPI
  // has (codegen/generate.py's NATIVE_CALLS).
  const char* native;
};

extern const FunctionInfo kFunctions[fn::kCount];

// Index of a function by name, -1 if this build does not wrap it.
int find_function(std::string_view name);

// A communicator constructor: collective over its input communicator although Gropp & Thakur
// file most of them under Own (MPI_Comm_create_group is collective over its group only).
inline bool builds_communicator(const FunctionInfo& f) {
  return std::string_view(f.objects).starts_with("new:Comm") && std::string_view(f.handles).starts_with("Comm,") &&
         std::string_view(f.name) != "MPI_Comm_create_group";
}

}  // namespace tsmpi

// Object lifetime's rule for each MPI function: what its protection does, from the function's
// row of the classification table and the options. object_lifetime.cpp applies the rules;
// tsmpi-info --function describes them (runtime/describe.h). Pure functions of the table, linked
// into both.
#pragma once
#include <cstdint>
#include <string_view>

#include "runtime/function_table.h"
#include "runtime/handles.h"
#include "runtime/options.h"

namespace tsmpi::lifetime {

enum class Access : std::uint8_t {
  kNone,    // not checked
  kRead,    // shared lock on every object the call names
  kUpdate,  // exclusive lock on the object whose list it updates (Update List)
  kFree,    // exclusive lock on the object it frees
};

struct Rule {
  Access access = Access::kNone;
  Kind freed = Kind::kNone;  // kFree: the kind of object the call frees
  bool blocking = false;  // may wait for other processes: no lock is held across it
  bool locks = true;      // false: existence check only (communication calls under TSMPI_CHECK)
  bool creates = false;   // returns handles of tracked kinds (MPI_Comm_dup, MPI_Type_vector, ...)
};

// The rule of a function under the options.
Rule rule_for(const FunctionInfo& f, const Options& o);
// The kinds whose first object switches a read-only call on (0: on from MPI_Init): a call that
// reads objects and neither creates, frees nor rewrites a handle has nothing to check before
// the program made an object of its kinds.
std::uint32_t kinds_to_wait_for(const FunctionInfo& f, const Rule& r);
inline std::uint32_t kind_bit(Kind k) { return std::uint32_t{1} << static_cast<int>(k); }
// Whether the call may take the fast read (object_lifetime.h's FastRead): it only reads the
// objects it names (Access Only, Read List), waits for their kinds and for no other process.
bool fast_read_applies(const FunctionInfo& f, const Rule& r);

// Whether object lifetime keeps records of the kind (requests are the MPI's to check).
bool tracked(Kind k);
Kind kind_named(std::string_view name);
// Whether a table column (handles or objects) names a tracked kind; `messages`: count
// MPI_Message (tracked under TSMPI_CHECK only).
bool lists_tracked(std::string_view column, bool messages = true);

// Calls f(kind, item) for each item of a comma-separated table column ("Datatype[],Comm*",
// "new:Comm,free:Info").
template <class F>
void for_each_kind(std::string_view list, F&& f) {
  if (list == "-") return;
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    std::string_view kind = item.substr(item.find(':') == std::string_view::npos ? 0 : item.find(':') + 1);
    f(kind_named(kind.substr(0, kind.find_first_of("[*&"))), item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace tsmpi::lifetime

// The ten thread-safety categories of Gropp & Thakur (seed 000 §3).
#pragma once
#include <cstdint>

namespace tsmpi {

enum class Category : std::uint8_t {
  None,        // no thread-safety issue in correct programs
  AccessOnly,  // reads fixed data of an object (Comm_rank)
  UpdateRef,   // updates a reference count (Comm_group)
  CommIO,      // uses the communication or I/O system (Send, File_read)
  Collective,  // collective; ordering per communicator is the user's job (Bcast)
  ReadList,    // reads an element of a list (Info_get, Comm_get_attr)
  UpdateList,  // updates a list that may also be read (Info_set)
  Allocate,    // allocates or frees an object (Type_contiguous, Send_init)
  Own,         // manages its own thread safety (Buffer_attach, Comm_dup)
  Other,       // special cases (Abort, Finalize)
};
inline constexpr int kCategoryCount = 10;

const char* category_name(Category c);

}  // namespace tsmpi

// A message buffer as MPI describes it (address, count, datatype) and the copies between two of
// them. Between threads of one process a message is copied once, straight from the sender's
// buffer into the receiver's, when both datatypes are contiguous; otherwise it goes through the
// MPI's pack format (raw bytes on one host).
#pragma once
#include <mpi.h>

#include <cstddef>

namespace tsmpi::ranks {

struct TypedBuffer {
  const void* buf = nullptr;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_BYTE;
};

// Size in bytes of the packed data (count x size of the type); -1 for an invalid datatype.
long long packed_bytes(const TypedBuffer& b);
// True when the data is one contiguous run of packed_bytes() bytes starting at buf.
bool contiguous(const TypedBuffer& b);
// The same, answered without an MPI call (a predefined datatype), else false.
bool contiguous_without_mpi(const TypedBuffer& b);

// Packs b into `out` (packed_bytes(b) bytes).
void pack(const TypedBuffer& b, void* out);
// Unpacks `bytes` packed bytes into b (bytes <= packed_bytes(b)).
void unpack(const void* in, std::size_t bytes, const TypedBuffer& b);
// Copies `bytes` bytes of from's data into to (bytes <= both sizes).
void copy(const TypedBuffer& from, const TypedBuffer& to, std::size_t bytes);

// A buffer of `count` elements of `type` laid out as the type describes (for reductions):
// owns enough memory for the type's true extent.
class TypedScratch {
 public:
  TypedScratch(MPI_Count count, MPI_Datatype type);
  ~TypedScratch();
  TypedScratch(const TypedScratch&) = delete;
  TypedScratch& operator=(const TypedScratch&) = delete;
  void* data() const { return origin_; }  // the address MPI's buf argument would be
  TypedBuffer typed() const { return {origin_, count_, type_}; }

 private:
  char* memory_ = nullptr;
  void* origin_ = nullptr;
  MPI_Count count_;
  MPI_Datatype type_;
};

// Address of element i of a buffer of `type` (displacement in units of the type's extent).
void* element(const void* buf, MPI_Aint index, MPI_Datatype type);

}  // namespace tsmpi::ranks

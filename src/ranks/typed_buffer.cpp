#include "ranks/typed_buffer.h"

#include <climits>
#include <cstdlib>
#include <cstring>

#include "locking/serialize_lock.h"
#include "runtime/config.h"

namespace tsmpi::ranks {

namespace {
// Datatype queries are local MPI calls; in serialize mode they take its lock.
template <class F>
int query(F&& f) {
  return serial::locked(f);
}
}  // namespace

namespace {
// The predefined datatypes every message of a program is likely to use, with their sizes: found
// without a call into the MPI (these handles are constants and never freed).
struct Predefined {
  MPI_Datatype type;
  int size;
};
const Predefined* find_predefined(MPI_Datatype t) {
  static const Predefined table[] = {
      {MPI_BYTE, 1},          {MPI_CHAR, 1},           {MPI_SIGNED_CHAR, 1},  {MPI_UNSIGNED_CHAR, 1},
      {MPI_SHORT, sizeof(short)}, {MPI_UNSIGNED_SHORT, sizeof(short)}, {MPI_INT, sizeof(int)},
      {MPI_UNSIGNED, sizeof(int)}, {MPI_LONG, sizeof(long)}, {MPI_UNSIGNED_LONG, sizeof(long)},
      {MPI_LONG_LONG, sizeof(long long)}, {MPI_UNSIGNED_LONG_LONG, sizeof(long long)},
      {MPI_FLOAT, sizeof(float)}, {MPI_DOUBLE, sizeof(double)}, {MPI_INT8_T, 1}, {MPI_UINT8_T, 1},
      {MPI_INT16_T, 2}, {MPI_UINT16_T, 2}, {MPI_INT32_T, 4}, {MPI_UINT32_T, 4}, {MPI_INT64_T, 8},
      {MPI_UINT64_T, 8}, {MPI_AINT, sizeof(MPI_Aint)}, {MPI_COUNT, sizeof(MPI_Count)},
      {MPI_OFFSET, sizeof(MPI_Offset)}, {MPI_C_BOOL, sizeof(bool)}, {MPI_WCHAR, sizeof(wchar_t)},
  };
  // The calling thread's last answer first: a program sends mostly one type.
  static constinit TSMPI_TLS const Predefined* last = nullptr;
  if (last && last->type == t) return last;
  for (const Predefined& p : table)
    if (p.type == t) return last = &p;
  return nullptr;
}
}  // namespace

long long packed_bytes(const TypedBuffer& b) {
  if (const Predefined* p = find_predefined(b.type)) return static_cast<long long>(p->size) * b.count;
  MPI_Count size = 0;
  if (query([&] { return PMPI_Type_size_x(b.type, &size); }) != MPI_SUCCESS) return -1;
  return static_cast<long long>(size) * b.count;
}

bool contiguous_without_mpi(const TypedBuffer& b) { return find_predefined(b.type) != nullptr; }

bool contiguous(const TypedBuffer& b) {
  if (find_predefined(b.type)) return true;
  int ni, na, nd, combiner;
  if (query([&] { return PMPI_Type_get_envelope(b.type, &ni, &na, &nd, &combiner); }) != MPI_SUCCESS) return false;
  if (combiner != MPI_COMBINER_NAMED) return false;
  // Named pair types (MPI_FLOAT_INT, ...) may have padding between their members.
  MPI_Aint lb, extent;
  MPI_Count size;
  query([&] { return PMPI_Type_get_extent(b.type, &lb, &extent); });
  query([&] { return PMPI_Type_size_x(b.type, &size); });
  return lb == 0 && extent == static_cast<MPI_Aint>(size);
}

void pack(const TypedBuffer& b, void* out) {
  if (const Predefined* p = find_predefined(b.type)) {
    std::memcpy(out, b.buf, static_cast<std::size_t>(p->size) * static_cast<std::size_t>(b.count));
    return;
  }
  if (contiguous(b)) {
    std::memcpy(out, b.buf, static_cast<std::size_t>(packed_bytes(b)));
    return;
  }
  int position = 0;
  long long n = packed_bytes(b);
  query([&] {
    return PMPI_Pack(b.buf, static_cast<int>(b.count), b.type, out, static_cast<int>(n), &position, MPI_COMM_SELF);
  });
}

void unpack(const void* in, std::size_t bytes, const TypedBuffer& b) {
  if (bytes == 0) return;
  if (contiguous(b)) {
    std::memcpy(const_cast<void*>(b.buf), in, bytes);
    return;
  }
  MPI_Count size = 0;
  query([&] { return PMPI_Type_size_x(b.type, &size); });
  if (size == 0) return;
  // Whole elements only (a truncated message fills what fits).
  int count = static_cast<int>(bytes / static_cast<std::size_t>(size));
  int position = 0;
  query([&] {
    return PMPI_Unpack(in, static_cast<int>(bytes), &position, const_cast<void*>(b.buf), count, b.type,
                       MPI_COMM_SELF);
  });
}

void copy(const TypedBuffer& from, const TypedBuffer& to, std::size_t bytes) {
  if (bytes == 0) return;
  const bool from_flat = contiguous(from), to_flat = contiguous(to);
  if (from_flat && to_flat) {
    std::memcpy(const_cast<void*>(to.buf), from.buf, bytes);
  } else if (from_flat) {
    unpack(from.buf, bytes, to);
  } else {
    long long n = packed_bytes(from);
    char* tmp = static_cast<char*>(std::malloc(static_cast<std::size_t>(n) + 1));
    pack(from, tmp);
    unpack(tmp, bytes, to);
    std::free(tmp);
  }
}

TypedScratch::TypedScratch(MPI_Count count, MPI_Datatype type) : count_(count), type_(type) {
  MPI_Aint true_lb = 0, true_extent = 0, lb = 0, extent = 0;
  query([&] { return PMPI_Type_get_true_extent(type, &true_lb, &true_extent); });
  query([&] { return PMPI_Type_get_extent(type, &lb, &extent); });
  MPI_Aint span = count > 0 ? true_extent + (count - 1) * extent : 0;
  memory_ = static_cast<char*>(std::malloc(static_cast<std::size_t>(span) + 16));
  origin_ = memory_ - true_lb;
}

TypedScratch::~TypedScratch() { std::free(memory_); }

void* element(const void* buf, MPI_Aint index, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  query([&] { return PMPI_Type_get_extent(type, &lb, &extent); });
  return static_cast<char*>(const_cast<void*>(buf)) + index * extent;
}

}  // namespace tsmpi::ranks

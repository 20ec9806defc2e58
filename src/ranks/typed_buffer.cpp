#include "ranks/typed_buffer.h"

#include <climits>
#include <cstdlib>
#include <cstring>

#include "locking/serialize_lock.h"

namespace tsmpi::ranks {

namespace {
// Datatype queries are local MPI calls; in serialize mode they take its lock.
template <class F>
int query(F&& f) {
  return serial::locked(f);
}
}  // namespace

long long packed_bytes(const TypedBuffer& b) {
  MPI_Count size = 0;
  if (query([&] { return PMPI_Type_size_x(b.type, &size); }) != MPI_SUCCESS) return -1;
  return static_cast<long long>(size) * b.count;
}

bool contiguous(const TypedBuffer& b) {
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

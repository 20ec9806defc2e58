// A packed copy of a send buffer, for a send-receive whose receive may overwrite the buffer
// (MPI_Sendrecv_replace, MPI_Isendrecv_replace). Calls PMPI directly: in serialize mode the
// caller holds the lock. Overloads for int counts and the MPI-4 large-count (_c) forms.
#pragma once
#include "runtime/mpi_version.h"
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace tsmpi {

struct PackedCopy {
  std::vector<char> bytes;
  MPI_Count size = 0;  // bytes packed, to send as MPI_PACKED
  int rc = MPI_SUCCESS;
};

inline PackedCopy pack_copy(const void* buf, int count, MPI_Datatype type, MPI_Comm comm) {
  PackedCopy p;
  int room = 0, position = 0;
  if ((p.rc = PMPI_Pack_size(count, type, comm, &room)) != MPI_SUCCESS) return p;
  if (room < 0) {  // a negative count the MPI let through
    p.rc = MPI_ERR_COUNT;
    return p;
  }
  p.bytes.resize(static_cast<std::size_t>(room) + 1);  // + 1: never an empty buffer
  p.rc = PMPI_Pack(buf, count, type, p.bytes.data(), room, &position, comm);
  p.size = position;
  return p;
}

#if TSMPI_HAVE_LARGE_COUNT
inline PackedCopy pack_copy(const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm) {
  PackedCopy p;
  MPI_Count room = 0, position = 0;
  if ((p.rc = PMPI_Pack_size_c(count, type, comm, &room)) != MPI_SUCCESS) return p;
  if (room < 0) {
    p.rc = MPI_ERR_COUNT;
    return p;
  }
  p.bytes.resize(static_cast<std::size_t>(room) + 1);
  p.rc = PMPI_Pack_c(buf, count, type, p.bytes.data(), room, &position, comm);
  p.size = position;
  return p;
}
#endif

}  // namespace tsmpi

// The fields of MPI_Status the standard keeps hidden (the received size and the cancelled flag),
// written directly in the MPI's own layout: a status the program reads with MPI_Get_count,
// MPI_Get_elements or MPI_Test_cancelled then says what the MPI's calls would have set, without
// an MPI call (and serialize mode's lock) per completed receive. Both MPIs keep the size in
// bytes: Open MPI in _ucount with an int _cancelled; MPICH in count_lo and the upper bits of
// count_hi_and_cancelled, whose lowest bit is the flag (its MPIR_STATUS_SET_COUNT). Another MPI
// gets its own calls.
#pragma once
#include <mpi.h>

#include <cstddef>

namespace tsmpi {

#if defined(OPEN_MPI)
inline constexpr bool kStatusFieldsDirect = true;
inline void set_status_fields(MPI_Status* s, MPI_Count bytes, bool cancelled) {
  s->_ucount = static_cast<std::size_t>(bytes);
  s->_cancelled = cancelled ? 1 : 0;
}
#elif defined(MPICH)
inline constexpr bool kStatusFieldsDirect = true;
inline void set_status_fields(MPI_Status* s, MPI_Count bytes, bool cancelled) {
  const auto u = static_cast<unsigned long long>(bytes);
  s->count_lo = static_cast<int>(static_cast<unsigned int>(u));
  s->count_hi_and_cancelled = static_cast<int>(((u >> 32) << 1) | (cancelled ? 1u : 0u));
}
#else
inline constexpr bool kStatusFieldsDirect = false;
// The caller holds whatever lock its MPI calls need.
inline void set_status_fields(MPI_Status* s, MPI_Count bytes, bool cancelled) {
  PMPI_Status_set_elements_x(s, MPI_BYTE, bytes);
  PMPI_Status_set_cancelled(s, cancelled ? 1 : 0);
}
#endif

}  // namespace tsmpi

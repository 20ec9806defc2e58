// Messages a thread has probed and not yet received (mprobe and helper policies). A probe
// matches the message with MPI_Mprobe and keeps it here, for this thread only; the thread's next
// receive that can match it takes exactly that message (MPI_Mrecv), and a repeated probe returns
// it again. A thread that ends with reservations hands them to the process, so a probed message
// is never lost: MPI_Finalize reports and drains what nobody received (docs/probe-policies.md).
#pragma once
#include <mpi.h>

#include <cstdio>
#include <optional>

#include "runtime/config.h"
#include "runtime/thread_state.h"

namespace tsmpi::matching {

struct Reserved {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status{};
};

// Whether a message with this status satisfies a receive or probe for (source, tag).
inline bool envelope_matches(const MPI_Status& s, int source, int tag) {
  return (source == MPI_ANY_SOURCE || source == s.MPI_SOURCE) && (tag == MPI_ANY_TAG || tag == s.MPI_TAG);
}

// Fast check for the receive path: does this thread hold any reservation at all?
inline bool thread_has_reservations() { return tl_thread.reserved != 0; }

// The calling thread's earliest reservation on `comm` matching (source, tag), copied; nullopt if none.
std::optional<Reserved> find_reserved_slow(MPI_Comm comm, int source, int tag);
inline std::optional<Reserved> find_reserved(MPI_Comm comm, int source, int tag) {
  if (TSMPI_LIKELY(!thread_has_reservations())) return std::nullopt;
  return find_reserved_slow(comm, source, tag);
}
// As find_reserved, and removes it: the caller now owns the message.
std::optional<Reserved> take_reserved_slow(MPI_Comm comm, int source, int tag);
inline std::optional<Reserved> take_reserved(MPI_Comm comm, int source, int tag) {
  if (TSMPI_LIKELY(!thread_has_reservations())) return std::nullopt;
  return take_reserved_slow(comm, source, tag);
}
// Adds a matched message to the calling thread's reservations.
void reserve(const Reserved& r);

// The probe's status argument (which may be MPI_STATUS_IGNORE).
// A status for a single-completion call: its MPI_ERROR field is left as the application had it
// (MPI-4.0 §3.2.5).
inline void copy_status(MPI_Status* to, const MPI_Status& from) {
  if (to == MPI_STATUS_IGNORE) return;
  const int error = to->MPI_ERROR;
  *to = from;
  to->MPI_ERROR = error;
}
// A probe answered from the calling thread's reservations (a repeated probe): true if one
// matches, with its status.
bool probe_reserved_slow(MPI_Comm comm, int source, int tag, MPI_Status* status);
inline bool probe_reserved(MPI_Comm comm, int source, int tag, MPI_Status* status) {
  return thread_has_reservations() && probe_reserved_slow(comm, source, tag, status);
}
// The application's own matched probe served from the reservations: true if one matches; the
// application then owns the message.
bool hand_over_reserved_slow(MPI_Comm comm, int source, int tag, MPI_Message* message, MPI_Status* status);
inline bool hand_over_reserved(MPI_Comm comm, int source, int tag, MPI_Message* message, MPI_Status* status) {
  return thread_has_reservations() && hand_over_reserved_slow(comm, source, tag, message, status);
}
// Reserves the message a probe of the calling thread matched and gives the probe its status.
void reserve_probed(const Reserved& r, MPI_Status* status);

// One report line for a probed message never received (by default) or for `what` happened to it.
void report_unreceived(std::FILE* out, const char* rank_label, MPI_Comm comm, const MPI_Status& status,
                       const char* what = "probed message never received");

// Reservations left at finalize (every thread's, and those of threads that ended): printed
// one line each when `report`, received into scratch buffers so the MPI ends clean, counted.
std::size_t finish_unreceived(std::FILE* out, const char* rank_label, bool report);

}  // namespace tsmpi::matching

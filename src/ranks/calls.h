// What each generated wrapper whose table row says `engine` or `complete` calls when the call is
// on a thread-rank communicator (or, for completions, made by a thread-rank): one function per
// MPI function, named without MPI_ and _c; `auto` parameters take a call's int counts and its
// _c form's MPI_Count ones alike.
#pragma once
#include <mpi.h>

#include <type_traits>

#include "ranks/api.h"
#include "runtime/function_table.h"

namespace tsmpi::ranks::on {

using M = SendMode;

// ---- point-to-point ----
inline int Send(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c) { return api::send("MPI_Send", b, n, t, d, tag, c, M::kStandard); }
inline int Bsend(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c) { return api::send("MPI_Bsend", b, n, t, d, tag, c, M::kBuffered); }
inline int Ssend(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c) { return api::send("MPI_Ssend", b, n, t, d, tag, c, M::kSynchronous); }
inline int Rsend(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c) { return api::send("MPI_Rsend", b, n, t, d, tag, c, M::kReady); }
inline int Isend(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::isend("MPI_Isend", b, n, t, d, tag, c, M::kStandard, r); }
inline int Ibsend(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::isend("MPI_Ibsend", b, n, t, d, tag, c, M::kBuffered, r); }
inline int Issend(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::isend("MPI_Issend", b, n, t, d, tag, c, M::kSynchronous, r); }
inline int Irsend(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::isend("MPI_Irsend", b, n, t, d, tag, c, M::kReady, r); }
inline int Send_init(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::send_init("MPI_Send_init", b, n, t, d, tag, c, M::kStandard, r); }
inline int Bsend_init(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::send_init("MPI_Bsend_init", b, n, t, d, tag, c, M::kBuffered, r); }
inline int Ssend_init(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::send_init("MPI_Ssend_init", b, n, t, d, tag, c, M::kSynchronous, r); }
inline int Rsend_init(const void* b, auto n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request* r) { return api::send_init("MPI_Rsend_init", b, n, t, d, tag, c, M::kReady, r); }
inline int Recv(void* b, auto n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status* st) { return api::recv(b, n, t, s, tag, c, st); }
inline int Irecv(void* b, auto n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request* r) { return api::irecv(b, n, t, s, tag, c, r); }
inline int Recv_init(void* b, auto n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request* r) { return api::recv_init(b, n, t, s, tag, c, r); }
inline int Sendrecv(const void* sb, auto sn, MPI_Datatype st, int d, int stag, void* rb, auto rn, MPI_Datatype rt, int s,
                    int rtag, MPI_Comm c, MPI_Status* status) {
  return api::sendrecv(sb, sn, st, d, stag, rb, rn, rt, s, rtag, c, status);
}
inline int Sendrecv_replace(void* b, auto n, MPI_Datatype t, int d, int stag, int s, int rtag, MPI_Comm c, MPI_Status* st) {
  return api::sendrecv_replace(b, n, t, d, stag, s, rtag, c, st);
}
inline int Isendrecv(const void* sb, auto sn, MPI_Datatype st, int d, int stag, void* rb, auto rn, MPI_Datatype rt, int s,
                     int rtag, MPI_Comm c, MPI_Request* r) {
  return api::isendrecv(sb, sn, st, d, stag, rb, rn, rt, s, rtag, c, r);
}
inline int Isendrecv_replace(void* b, auto n, MPI_Datatype t, int d, int stag, int s, int rtag, MPI_Comm c, MPI_Request* r) {
  return api::isendrecv_replace(b, n, t, d, stag, s, rtag, c, r);
}
inline int Probe(int s, int tag, MPI_Comm c, MPI_Status* st) { return api::probe(s, tag, c, st); }
inline int Iprobe(int s, int tag, MPI_Comm c, int* flag, MPI_Status* st) { return api::iprobe(s, tag, c, flag, st); }
inline int Mprobe(int s, int tag, MPI_Comm c, MPI_Message* m, MPI_Status* st) { return api::mprobe(s, tag, c, m, st); }
inline int Improbe(int s, int tag, MPI_Comm c, int* flag, MPI_Message* m, MPI_Status* st) { return api::improbe(s, tag, c, flag, m, st); }
inline int Mrecv(void* b, auto n, MPI_Datatype t, MPI_Message* m, MPI_Status* st) { return api::mrecv(b, n, t, m, st); }
inline int Imrecv(void* b, auto n, MPI_Datatype t, MPI_Message* m, MPI_Request* r) { return api::imrecv(b, n, t, m, r); }

// ---- completion (the caller is a thread-rank) ----
inline int Wait(MPI_Request* r, MPI_Status* s) { return api::wait(r, s); }
inline int Test(MPI_Request* r, int* f, MPI_Status* s) { return api::test(r, f, s); }
inline int Waitall(int n, MPI_Request* r, MPI_Status* s) { return api::waitall(n, r, s); }
inline int Testall(int n, MPI_Request* r, int* f, MPI_Status* s) { return api::testall(n, r, f, s); }
inline int Waitany(int n, MPI_Request* r, int* i, MPI_Status* s) { return api::waitany(n, r, i, s); }
inline int Testany(int n, MPI_Request* r, int* i, int* f, MPI_Status* s) { return api::testany(n, r, i, f, s); }
inline int Waitsome(int n, MPI_Request* r, int* o, int* i, MPI_Status* s) { return api::waitsome(n, r, o, i, s); }
inline int Testsome(int n, MPI_Request* r, int* o, int* i, MPI_Status* s) { return api::testsome(n, r, o, i, s); }
inline int Request_get_status(MPI_Request r, int* f, MPI_Status* s) { return api::request_get_status(r, f, s); }
#if TSMPI_HAVE_MPI_4_1
inline int Request_get_status_any(int n, const MPI_Request* r, int* i, int* f, MPI_Status* s) {
  return api::request_get_status_any(n, r, i, f, s);
}
inline int Request_get_status_all(int n, const MPI_Request* r, int* f, MPI_Status* s) {
  return api::request_get_status_all(n, r, f, s);
}
inline int Request_get_status_some(int n, const MPI_Request* r, int* o, int* i, MPI_Status* s) {
  return api::request_get_status_some(n, r, o, i, s);
}
#endif
inline int Start(MPI_Request* r) { return api::start(r); }
inline int Startall(int n, MPI_Request* r) { return api::startall(n, r); }
inline int Cancel(MPI_Request* r) { return api::cancel(r); }
inline int Request_free(MPI_Request* r) { return api::request_free(r); }
inline MPI_Fint Request_c2f(MPI_Request r) { return api::request_c2f(r); }
inline MPI_Fint Comm_c2f(MPI_Comm c) { return api::comm_c2f(c); }
inline MPI_Fint Group_c2f(MPI_Group g) { return api::group_c2f(g); }
inline MPI_Fint Message_c2f(MPI_Message m) { return api::message_c2f(m); }

// ---- collectives ----
inline int Barrier(MPI_Comm c) { return api::barrier(c, nullptr); }
inline int Ibarrier(MPI_Comm c, MPI_Request* r) { return api::barrier(c, r); }
inline int Bcast(void* b, auto n, MPI_Datatype t, int root, MPI_Comm c) { return api::bcast(b, n, t, root, c, nullptr); }
inline int Ibcast(void* b, auto n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) { return api::bcast(b, n, t, root, c, r); }
inline int Gather(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, int root, MPI_Comm c) {
  return api::gather(sb, sn, st, rb, rn, rt, root, c, nullptr);
}
inline int Igather(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, int root, MPI_Comm c,
                   MPI_Request* r) {
  return api::gather(sb, sn, st, rb, rn, rt, root, c, r);
}
inline int Gatherv(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d, MPI_Datatype rt,
                   int root, MPI_Comm c) {
  return api::gatherv(sb, sn, st, rb, rn, d, rt, root, c, nullptr);
}
inline int Igatherv(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d, MPI_Datatype rt,
                    int root, MPI_Comm c, MPI_Request* r) {
  return api::gatherv(sb, sn, st, rb, rn, d, rt, root, c, r);
}
inline int Scatter(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, int root, MPI_Comm c) {
  return api::scatter(sb, sn, st, rb, rn, rt, root, c, nullptr);
}
inline int Iscatter(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, int root, MPI_Comm c,
                    MPI_Request* r) {
  return api::scatter(sb, sn, st, rb, rn, rt, root, c, r);
}
inline int Scatterv(const void* sb, const auto* sn, const auto* d, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt,
                    int root, MPI_Comm c) {
  return api::scatterv(sb, sn, d, st, rb, rn, rt, root, c, nullptr);
}
inline int Iscatterv(const void* sb, const auto* sn, const auto* d, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt,
                     int root, MPI_Comm c, MPI_Request* r) {
  return api::scatterv(sb, sn, d, st, rb, rn, rt, root, c, r);
}
inline int Allgather(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c) {
  return api::allgather(sb, sn, st, rb, rn, rt, c, nullptr);
}
inline int Iallgather(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c,
                      MPI_Request* r) {
  return api::allgather(sb, sn, st, rb, rn, rt, c, r);
}
inline int Allgatherv(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d, MPI_Datatype rt,
                      MPI_Comm c) {
  return api::allgatherv(sb, sn, st, rb, rn, d, rt, c, nullptr);
}
inline int Iallgatherv(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d,
                       MPI_Datatype rt, MPI_Comm c, MPI_Request* r) {
  return api::allgatherv(sb, sn, st, rb, rn, d, rt, c, r);
}
inline int Alltoall(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c) {
  return api::alltoall(sb, sn, st, rb, rn, rt, c, nullptr);
}
inline int Ialltoall(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c,
                     MPI_Request* r) {
  return api::alltoall(sb, sn, st, rb, rn, rt, c, r);
}
inline int Alltoallv(const void* sb, const auto* sn, const auto* sd, MPI_Datatype st, void* rb, const auto* rn,
                     const auto* rd, MPI_Datatype rt, MPI_Comm c) {
  return api::alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c, nullptr);
}
inline int Ialltoallv(const void* sb, const auto* sn, const auto* sd, MPI_Datatype st, void* rb, const auto* rn,
                      const auto* rd, MPI_Datatype rt, MPI_Comm c, MPI_Request* r) {
  return api::alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c, r);
}
inline int Alltoallw(const void* sb, const auto* sn, const auto* sd, const MPI_Datatype* st, void* rb, const auto* rn,
                     const auto* rd, const MPI_Datatype* rt, MPI_Comm c) {
  return api::alltoallw(sb, sn, sd, st, rb, rn, rd, rt, c, nullptr);
}
inline int Ialltoallw(const void* sb, const auto* sn, const auto* sd, const MPI_Datatype* st, void* rb, const auto* rn,
                      const auto* rd, const MPI_Datatype* rt, MPI_Comm c, MPI_Request* r) {
  return api::alltoallw(sb, sn, sd, st, rb, rn, rd, rt, c, r);
}
inline int Reduce(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  return api::reduce(sb, rb, n, t, op, root, c, nullptr);
}
inline int Ireduce(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c, MPI_Request* r) {
  return api::reduce(sb, rb, n, t, op, root, c, r);
}
inline int Allreduce(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return api::allreduce(sb, rb, n, t, op, c, nullptr);
}
inline int Iallreduce(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* r) {
  return api::allreduce(sb, rb, n, t, op, c, r);
}
inline int Reduce_scatter(const void* sb, void* rb, const auto* rn, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return api::reduce_scatter(sb, rb, rn, t, op, c, nullptr);
}
inline int Ireduce_scatter(const void* sb, void* rb, const auto* rn, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                           MPI_Request* r) {
  return api::reduce_scatter(sb, rb, rn, t, op, c, r);
}
inline int Reduce_scatter_block(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return api::reduce_scatter_block(sb, rb, n, t, op, c, nullptr);
}
inline int Ireduce_scatter_block(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                                 MPI_Request* r) {
  return api::reduce_scatter_block(sb, rb, n, t, op, c, r);
}
inline int Scan(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return api::scan(sb, rb, n, t, op, c, nullptr);
}
inline int Iscan(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* r) {
  return api::scan(sb, rb, n, t, op, c, r);
}
inline int Exscan(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return api::exscan(sb, rb, n, t, op, c, nullptr);
}
inline int Iexscan(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* r) {
  return api::exscan(sb, rb, n, t, op, c, r);
}

// ---- neighbourhood collectives (grids, graphs, distributed graphs) ----
inline int Neighbor_allgather(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c) {
  return api::neighbor_allgather(sb, sn, st, rb, rn, rt, c, nullptr);
}
inline int Ineighbor_allgather(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt,
                               MPI_Comm c, MPI_Request* r) {
  return api::neighbor_allgather(sb, sn, st, rb, rn, rt, c, r);
}
inline int Neighbor_allgatherv(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d,
                               MPI_Datatype rt, MPI_Comm c) {
  return api::neighbor_allgatherv(sb, sn, st, rb, rn, d, rt, c, nullptr);
}
inline int Ineighbor_allgatherv(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d,
                                MPI_Datatype rt, MPI_Comm c, MPI_Request* r) {
  return api::neighbor_allgatherv(sb, sn, st, rb, rn, d, rt, c, r);
}
inline int Neighbor_alltoall(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c) {
  return api::neighbor_alltoall(sb, sn, st, rb, rn, rt, c, nullptr);
}
inline int Ineighbor_alltoall(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c,
                              MPI_Request* r) {
  return api::neighbor_alltoall(sb, sn, st, rb, rn, rt, c, r);
}
inline int Neighbor_alltoallv(const void* sb, const auto* sn, const auto* sd, MPI_Datatype st, void* rb,
                              const auto* rn, const auto* rd, MPI_Datatype rt, MPI_Comm c) {
  return api::neighbor_alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c, nullptr);
}
inline int Ineighbor_alltoallv(const void* sb, const auto* sn, const auto* sd, MPI_Datatype st, void* rb,
                               const auto* rn, const auto* rd, MPI_Datatype rt, MPI_Comm c, MPI_Request* r) {
  return api::neighbor_alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c, r);
}
inline int Neighbor_alltoallw(const void* sb, const auto* sn, const MPI_Aint* sd, const MPI_Datatype* st, void* rb,
                              const auto* rn, const MPI_Aint* rd, const MPI_Datatype* rt, MPI_Comm c) {
  return api::neighbor_alltoallw(sb, sn, sd, st, rb, rn, rd, rt, c, nullptr);
}
inline int Ineighbor_alltoallw(const void* sb, const auto* sn, const MPI_Aint* sd, const MPI_Datatype* st, void* rb,
                               const auto* rn, const MPI_Aint* rd, const MPI_Datatype* rt, MPI_Comm c,
                               MPI_Request* r) {
  return api::neighbor_alltoallw(sb, sn, sd, st, rb, rn, rd, rt, c, r);
}

// ---- persistent collectives (MPI-4.0 §6.13; Open MPI 4.1: the MPIX_*_init of its pcollreq
// extension) ----
// A request whose MPI_Start runs the nonblocking form into it; the arguments are read at each
// start. `call`: the name this MPI exports, for errors and checking mode's reports.
inline const char* init_name(const char* mpi4, const char* mpix) { return find_function(mpi4) >= 0 ? mpi4 : mpix; }
#define TSMPI_PERSISTENT_ROOTED(base, root, ...)                                              \
  static const char* const call = init_name("MPI_" base "_init", "MPIX_" base "_init");      \
  return api::collective_init(call, c, r, root, [=](Request* p) { return __VA_ARGS__; })
#define TSMPI_PERSISTENT(base, ...) TSMPI_PERSISTENT_ROOTED(base, std::nullopt, __VA_ARGS__)
inline int Barrier_init(MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Barrier", api::barrier(c, {p, call}));
}
inline int Bcast_init(void* b, auto n, MPI_Datatype t, int root, MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT_ROOTED("Bcast", root, api::bcast(b, n, t, root, c, {p, call}));
}
inline int Gather_init(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, int root,
                       MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT_ROOTED("Gather", root, api::gather(sb, sn, st, rb, rn, rt, root, c, {p, call}));
}
inline int Gatherv_init(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d,
                        MPI_Datatype rt, int root, MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT_ROOTED("Gatherv", root, api::gatherv(sb, sn, st, rb, rn, d, rt, root, c, {p, call}));
}
inline int Scatter_init(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, int root,
                        MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT_ROOTED("Scatter", root, api::scatter(sb, sn, st, rb, rn, rt, root, c, {p, call}));
}
inline int Scatterv_init(const void* sb, const auto* sn, const auto* d, MPI_Datatype st, void* rb, auto rn,
                         MPI_Datatype rt, int root, MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT_ROOTED("Scatterv", root, api::scatterv(sb, sn, d, st, rb, rn, rt, root, c, {p, call}));
}
inline int Allgather_init(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c,
                          MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Allgather", api::allgather(sb, sn, st, rb, rn, rt, c, {p, call}));
}
inline int Allgatherv_init(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d,
                           MPI_Datatype rt, MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Allgatherv", api::allgatherv(sb, sn, st, rb, rn, d, rt, c, {p, call}));
}
inline int Alltoall_init(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt, MPI_Comm c,
                         MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Alltoall", api::alltoall(sb, sn, st, rb, rn, rt, c, {p, call}));
}
inline int Alltoallv_init(const void* sb, const auto* sn, const auto* sd, MPI_Datatype st, void* rb, const auto* rn,
                          const auto* rd, MPI_Datatype rt, MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Alltoallv", api::alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c, {p, call}));
}
inline int Alltoallw_init(const void* sb, const auto* sn, const auto* sd, const MPI_Datatype* st, void* rb,
                          const auto* rn, const auto* rd, const MPI_Datatype* rt, MPI_Comm c, MPI_Info,
                          MPI_Request* r) {
  TSMPI_PERSISTENT("Alltoallw", api::alltoallw(sb, sn, sd, st, rb, rn, rd, rt, c, {p, call}));
}
inline int Neighbor_allgather_init(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt,
                                   MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Neighbor_allgather", api::neighbor_allgather(sb, sn, st, rb, rn, rt, c, {p, call}));
}
inline int Neighbor_allgatherv_init(const void* sb, auto sn, MPI_Datatype st, void* rb, const auto* rn, const auto* d,
                                    MPI_Datatype rt, MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Neighbor_allgatherv", api::neighbor_allgatherv(sb, sn, st, rb, rn, d, rt, c, {p, call}));
}
inline int Neighbor_alltoall_init(const void* sb, auto sn, MPI_Datatype st, void* rb, auto rn, MPI_Datatype rt,
                                  MPI_Comm c, MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Neighbor_alltoall", api::neighbor_alltoall(sb, sn, st, rb, rn, rt, c, {p, call}));
}
inline int Neighbor_alltoallv_init(const void* sb, const auto* sn, const auto* sd, MPI_Datatype st, void* rb,
                                   const auto* rn, const auto* rd, MPI_Datatype rt, MPI_Comm c, MPI_Info,
                                   MPI_Request* r) {
  TSMPI_PERSISTENT("Neighbor_alltoallv", api::neighbor_alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c, {p, call}));
}
inline int Neighbor_alltoallw_init(const void* sb, const auto* sn, const MPI_Aint* sd, const MPI_Datatype* st,
                                   void* rb, const auto* rn, const MPI_Aint* rd, const MPI_Datatype* rt, MPI_Comm c,
                                   MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Neighbor_alltoallw", api::neighbor_alltoallw(sb, sn, sd, st, rb, rn, rd, rt, c, {p, call}));
}
inline int Reduce_init(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c, MPI_Info,
                       MPI_Request* r) {
  TSMPI_PERSISTENT_ROOTED("Reduce", root, api::reduce(sb, rb, n, t, op, root, c, {p, call}));
}
inline int Allreduce_init(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Info,
                          MPI_Request* r) {
  TSMPI_PERSISTENT("Allreduce", api::allreduce(sb, rb, n, t, op, c, {p, call}));
}
inline int Reduce_scatter_init(const void* sb, void* rb, const auto* rn, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                               MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Reduce_scatter", api::reduce_scatter(sb, rb, rn, t, op, c, {p, call}));
}
inline int Reduce_scatter_block_init(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                                     MPI_Info, MPI_Request* r) {
  TSMPI_PERSISTENT("Reduce_scatter_block", api::reduce_scatter_block(sb, rb, n, t, op, c, {p, call}));
}
inline int Scan_init(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Info,
                     MPI_Request* r) {
  TSMPI_PERSISTENT("Scan", api::scan(sb, rb, n, t, op, c, {p, call}));
}
inline int Exscan_init(const void* sb, void* rb, auto n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Info,
                       MPI_Request* r) {
  TSMPI_PERSISTENT("Exscan", api::exscan(sb, rb, n, t, op, c, {p, call}));
}
#undef TSMPI_PERSISTENT
#undef TSMPI_PERSISTENT_ROOTED

// ---- communicators, groups, attributes ----
inline int Comm_rank(MPI_Comm c, int* r) { return api::comm_rank(c, r); }
inline int Comm_size(MPI_Comm c, int* s) { return api::comm_size(c, s); }
inline int Comm_compare(MPI_Comm a, MPI_Comm b, int* r) { return api::comm_compare(a, b, r); }
inline int Comm_dup(MPI_Comm c, MPI_Comm* n) { return api::comm_dup(c, n); }
inline int Comm_dup_with_info(MPI_Comm c, MPI_Info, MPI_Comm* n) { return api::comm_dup(c, n); }
inline int Comm_idup(MPI_Comm c, MPI_Comm* n, MPI_Request* r) { return api::comm_idup(c, n, r, "MPI_Comm_idup"); }
inline int Comm_idup_with_info(MPI_Comm c, MPI_Info, MPI_Comm* n, MPI_Request* r) {
  return api::comm_idup(c, n, r, "MPI_Comm_idup_with_info");
}
inline int Comm_split(MPI_Comm c, int color, int key, MPI_Comm* n) { return api::comm_split(c, color, key, n); }
inline int Comm_split_type(MPI_Comm c, int type, int key, MPI_Info, MPI_Comm* n) { return api::comm_split_type(c, type, key, n); }
inline int Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm* n) { return api::comm_create(c, g, n); }
inline int Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm* n) { return api::comm_create_group(c, g, tag, n); }
inline int Comm_free(MPI_Comm* c) { return api::comm_free(c); }
inline int Comm_group(MPI_Comm c, MPI_Group* g) { return api::comm_group(c, g); }
inline int Comm_test_inter(MPI_Comm c, int* f) { return api::comm_test_inter(c, f); }
// Reached only for the engine's communicators (MPICH's MPIX_Comm_test_threadcomm): every one is a threadcomm or made from one.
inline int Comm_test_threadcomm(MPI_Comm, int* f) { *f = 1; return MPI_SUCCESS; }
inline int Topo_test(MPI_Comm c, int* s) { return api::topo_test(c, s); }
inline int Cart_create(MPI_Comm c, int nd, const int* dims, const int* periods, int reorder, MPI_Comm* n) {
  return api::cart_create(c, nd, dims, periods, reorder, n);
}
inline int Cart_sub(MPI_Comm c, const int* remain, MPI_Comm* n) { return api::cart_sub(c, remain, n); }
inline int Cartdim_get(MPI_Comm c, int* nd) { return api::cartdim_get(c, nd); }
inline int Cart_get(MPI_Comm c, int maxdims, int* dims, int* periods, int* coords) {
  return api::cart_get(c, maxdims, dims, periods, coords);
}
inline int Cart_rank(MPI_Comm c, const int* coords, int* rank) { return api::cart_rank(c, coords, rank); }
inline int Cart_coords(MPI_Comm c, int rank, int maxdims, int* coords) { return api::cart_coords(c, rank, maxdims, coords); }
inline int Cart_shift(MPI_Comm c, int dir, int disp, int* src, int* dst) { return api::cart_shift(c, dir, disp, src, dst); }
inline int Cart_map(MPI_Comm c, int nd, const int* dims, const int* periods, int* newrank) {
  return api::cart_map(c, nd, dims, periods, newrank);
}
inline int Graph_create(MPI_Comm c, int nnodes, const int* index, const int* edges, int reorder, MPI_Comm* n) {
  return api::graph_create(c, nnodes, index, edges, reorder, n);
}
inline int Graphdims_get(MPI_Comm c, int* nnodes, int* nedges) { return api::graphdims_get(c, nnodes, nedges); }
inline int Graph_get(MPI_Comm c, int maxindex, int maxedges, int* index, int* edges) {
  return api::graph_get(c, maxindex, maxedges, index, edges);
}
inline int Graph_neighbors_count(MPI_Comm c, int rank, int* n) { return api::graph_neighbors_count(c, rank, n); }
inline int Graph_neighbors(MPI_Comm c, int rank, int max, int* neighbors) {
  return api::graph_neighbors(c, rank, max, neighbors);
}
inline int Graph_map(MPI_Comm c, int nnodes, const int* index, const int* edges, int* newrank) {
  return api::graph_map(c, nnodes, index, edges, newrank);
}
inline int Dist_graph_create_adjacent(MPI_Comm c, int indegree, const int* sources, const int* sourceweights,
                                      int outdegree, const int* destinations, const int* destweights, MPI_Info,
                                      int reorder, MPI_Comm* n) {
  return api::dist_graph_create_adjacent(c, indegree, sources, sourceweights, outdegree, destinations, destweights,
                                         reorder, n);
}
inline int Dist_graph_create(MPI_Comm c, int n, const int* sources, const int* degrees, const int* destinations,
                             const int* weights, MPI_Info, int reorder, MPI_Comm* newcomm) {
  return api::dist_graph_create(c, n, sources, degrees, destinations, weights, reorder, newcomm);
}
inline int Dist_graph_neighbors_count(MPI_Comm c, int* indegree, int* outdegree, int* weighted) {
  return api::dist_graph_neighbors_count(c, indegree, outdegree, weighted);
}
inline int Dist_graph_neighbors(MPI_Comm c, int maxin, int* sources, int* sourceweights, int maxout, int* destinations,
                                int* destweights) {
  return api::dist_graph_neighbors(c, maxin, sources, sourceweights, maxout, destinations, destweights);
}
inline int Comm_set_attr(MPI_Comm c, int k, void* v) { return api::comm_set_attr(c, k, v); }
inline int Comm_get_attr(MPI_Comm c, int k, void* v, int* f) { return api::comm_get_attr(c, k, v, f); }
inline int Comm_delete_attr(MPI_Comm c, int k) { return api::comm_delete_attr(c, k); }
inline int Attr_put(MPI_Comm c, int k, void* v) { return api::comm_set_attr(c, k, v); }
inline int Attr_get(MPI_Comm c, int k, void* v, int* f) { return api::comm_get_attr(c, k, v, f); }
inline int Attr_delete(MPI_Comm c, int k) { return api::comm_delete_attr(c, k); }
inline int Comm_set_name(MPI_Comm c, const char* n) { return api::comm_set_name(c, n); }
inline int Comm_get_name(MPI_Comm c, char* n, int* l) { return api::comm_get_name(c, n, l); }
inline int Comm_set_errhandler(MPI_Comm c, MPI_Errhandler e) { return api::comm_set_errhandler(c, e); }
inline int Comm_get_errhandler(MPI_Comm c, MPI_Errhandler* e) { return api::comm_get_errhandler(c, e); }
inline int Errhandler_set(MPI_Comm c, MPI_Errhandler e) { return api::comm_set_errhandler(c, e); }
inline int Errhandler_get(MPI_Comm c, MPI_Errhandler* e) { return api::comm_get_errhandler(c, e); }
inline int Comm_call_errhandler(MPI_Comm c, int code) { return api::comm_call_errhandler(c, code); }
inline int Abort(MPI_Comm c, int code) { return api::abort(c, code); }
template <class N, class P>
int Pack(const void* in, N n, MPI_Datatype t, void* out, N size, P* position, MPI_Comm) {
  MPI_Count p = *position;
  int rc = api::pack(in, n, t, out, size, &p);
  *position = static_cast<P>(p);
  return rc;
}
template <class N>
int Pack_size(N n, MPI_Datatype t, MPI_Comm, N* size) {
  MPI_Count s = 0;
  int rc = api::pack_size(n, t, &s);
  *size = static_cast<N>(s);
  return rc;
}
template <class N, class P>
int Unpack(const void* in, N insize, P* position, void* out, N n, MPI_Datatype t, MPI_Comm) {
  MPI_Count p = *position;
  int rc = api::unpack(in, insize, &p, out, n, t);
  *position = static_cast<P>(p);
  return rc;
}
inline int Group_size(MPI_Group g, int* s) { return api::group_size(g, s); }
inline int Group_rank(MPI_Group g, int* r) { return api::group_rank(g, r); }
inline int Group_translate_ranks(MPI_Group a, int n, const int* ra, MPI_Group b, int* rb) {
  return api::group_translate_ranks(a, n, ra, b, rb);
}
inline int Group_compare(MPI_Group a, MPI_Group b, int* r) { return api::group_compare(a, b, r); }
inline int Group_free(MPI_Group* g) { return api::group_free(g); }
inline int Group_incl(MPI_Group g, int n, const int* r, MPI_Group* ng) { return api::group_incl(g, n, r, ng); }
inline int Group_excl(MPI_Group g, int n, const int* r, MPI_Group* ng) { return api::group_excl(g, n, r, ng); }
inline int Group_union(MPI_Group a, MPI_Group b, MPI_Group* n) { return api::group_union(a, b, n); }
inline int Group_intersection(MPI_Group a, MPI_Group b, MPI_Group* n) { return api::group_intersection(a, b, n); }
inline int Group_difference(MPI_Group a, MPI_Group b, MPI_Group* n) { return api::group_difference(a, b, n); }
inline int Group_range_incl(MPI_Group g, int n, int r[][3], MPI_Group* ng) { return api::group_range_incl(g, n, r, ng); }
inline int Group_range_excl(MPI_Group g, int n, int r[][3], MPI_Group* ng) { return api::group_range_excl(g, n, r, ng); }

}  // namespace tsmpi::ranks::on

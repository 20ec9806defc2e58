// Neighbourhood collectives on a topology of thread-ranks (MPI-4.0 §8.6), over the engine's
// point-to-point: a rank receives block j from its j-th source and sends its j-th block
// (allgather: its one block) to its j-th destination (topology.h, neighbours_of).
// On a grid, sources and destinations are per dimension the source and the destination of a
// shift by 1, and MPI_PROC_NULL ones are skipped (their receive blocks left as they are). A
// block sent to the destination arrives in the receiver's source block and the other way round,
// which matters where one rank is both (a periodic dimension of 1 or 2): the messages of one
// collective share a tag, so each dimension's receives are posted destination first, the order
// in which the neighbour sends to them. On a graph or distributed graph the receives are posted
// in source order and the sends made in destination order: the k-th message from a to b is the
// k-th block b expects from a (graph_topology.cpp lists both ends of an edge alike).
#include <utility>

#include "ranks/api.h"
#include "ranks/caller.h"
#include "ranks/collective_run.h"
#include "ranks/comm.h"
#include "ranks/topology.h"

namespace tsmpi::ranks {

using namespace coll;

namespace {

// send_of(j), recv_of(j): the blocks for and from neighbour j.
template <class SendOf, class RecvOf>
int exchange(const Coll& k, SendOf&& send_of, RecvOf&& recv_of) {
  const Neighbours n = neighbours_of(k.c, k.me);
  Batch b(k);
  if (n.kind == MPI_CART) {
    const std::vector<int>& s = n.sources;
    for (std::size_t j = 0; j < s.size(); j += 2) {
      if (s[j + 1] != MPI_PROC_NULL) b.recv(s[j + 1], recv_of(static_cast<int>(j + 1)));
      if (s[j] != MPI_PROC_NULL) b.recv(s[j], recv_of(static_cast<int>(j)));
    }
  } else {
    for (std::size_t j = 0; j < n.sources.size(); ++j) b.recv(n.sources[j], recv_of(static_cast<int>(j)));
  }
  for (std::size_t j = 0; j < n.destinations.size(); ++j)
    if (n.destinations[j] != MPI_PROC_NULL) b.send(n.destinations[j], send_of(static_cast<int>(j)));
  return b.wait();
}

// Runs the exchange, or refuses a communicator without a topology (MPI_ERR_TOPOLOGY).
template <class Algorithm>
int neighbourhood(MPI_Comm comm, CollRequest nb, const char* nonblocking, const char* blocking, Algorithm&& algorithm) {
  const char* call = nb.name(nonblocking, blocking);
  Caller k = caller(comm, call);
  if (!k) return k.rc;
  if (topology_kind(k.c, k.m->rank) == MPI_UNDEFINED) return k.fail(MPI_ERR_TOPOLOGY, call);
  return run(k, call, nb, -1, Path::kGeneric, std::forward<Algorithm>(algorithm));
}

}  // namespace

namespace api {

int neighbor_allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  return neighbourhood(comm, nb, "MPI_Ineighbor_allgather", "MPI_Neighbor_allgather", [=](const Coll& c) {
    return exchange(
        c, [&](int) { return TypedBuffer{sendbuf, sendcount, sendtype}; },
        [&](int j) { return at(recvbuf, static_cast<MPI_Aint>(j) * recvcount, recvcount, recvtype); });
  });
}

int neighbor_allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                        Counts recvcounts, Displs displs, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  return neighbourhood(comm, nb, "MPI_Ineighbor_allgatherv", "MPI_Neighbor_allgatherv", [=](const Coll& c) {
    return exchange(
        c, [&](int) { return TypedBuffer{sendbuf, sendcount, sendtype}; },
        [&](int j) { return at(recvbuf, displs[j], recvcounts[j], recvtype); });
  });
}

int neighbor_alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  return neighbourhood(comm, nb, "MPI_Ineighbor_alltoall", "MPI_Neighbor_alltoall", [=](const Coll& c) {
    return exchange(
        c, [&](int j) { return at(sendbuf, static_cast<MPI_Aint>(j) * sendcount, sendcount, sendtype); },
        [&](int j) { return at(recvbuf, static_cast<MPI_Aint>(j) * recvcount, recvcount, recvtype); });
  });
}

int neighbor_alltoallv(const void* sendbuf, Counts sendcounts, Displs sdispls, MPI_Datatype sendtype, void* recvbuf,
                       Counts recvcounts, Displs rdispls, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nb) {
  return neighbourhood(comm, nb, "MPI_Ineighbor_alltoallv", "MPI_Neighbor_alltoallv", [=](const Coll& c) {
    return exchange(
        c, [&](int j) { return at(sendbuf, sdispls[j], sendcounts[j], sendtype); },
        [&](int j) { return at(recvbuf, rdispls[j], recvcounts[j], recvtype); });
  });
}

int neighbor_alltoallw(const void* sendbuf, Counts sendcounts, Displs sdispls, const MPI_Datatype* sendtypes,
                       void* recvbuf, Counts recvcounts, Displs rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                       CollRequest nb) {
  return neighbourhood(comm, nb, "MPI_Ineighbor_alltoallw", "MPI_Neighbor_alltoallw", [=](const Coll& c) {
    return exchange(
        c, [&](int j) { return at_bytes(sendbuf, sdispls[j], sendcounts[j], sendtypes[j]); },
        [&](int j) { return at_bytes(recvbuf, rdispls[j], recvcounts[j], recvtypes[j]); });
  });
}

}  // namespace api
}  // namespace tsmpi::ranks

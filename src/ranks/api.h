// The engine's side of each MPI call on a thread-rank communicator (calls.h forwards the
// generated wrappers' arguments here, with every count widened to MPI_Count and every count or
// displacement array seen through Counts/Displs, so one function serves a call and its _c form).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "ranks/transport.h"
#include "runtime/mpi_version.h"

namespace tsmpi::ranks {

// A count or displacement array of either width (int/MPI_Count, int/MPI_Aint).
struct Counts {
  const int* i = nullptr;
  const MPI_Count* c = nullptr;
  Counts() = default;
  Counts(const int* p) : i(p) {}
  Counts(const MPI_Count* p) : c(p) {}
  MPI_Count operator[](int k) const { return i ? i[k] : c[k]; }
  bool null() const { return !i && !c; }
};
struct Displs {
  const int* i = nullptr;
  const MPI_Aint* a = nullptr;
  Displs() = default;
  Displs(const int* p) : i(p) {}
  Displs(const MPI_Aint* p) : a(p) {}
  MPI_Aint operator[](int k) const { return i ? i[k] : a[k]; }
};

struct Request;

// How a collective call completes: blocking (nullptr), into a new request (*out: MPI_Ibcast ...),
// or into a persistent collective request being started (MPI_Bcast_init's, at MPI_Start), which
// the call names in its errors and reports.
struct CollRequest {
  MPI_Request* out = nullptr;
  Request* started = nullptr;
  const char* init_call = nullptr;
  CollRequest(std::nullptr_t) {}
  CollRequest(MPI_Request* r) : out(r) {}
  CollRequest(Request* p, const char* call) : started(p), init_call(call) {}
  explicit operator bool() const { return out || started; }
  const char* name(const char* nonblocking, const char* blocking) const {
    return started ? init_call : out ? nonblocking : blocking;
  }
};

namespace api {
// Point-to-point.
int send(const char* call, const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
         SendMode mode);
int isend(const char* call, const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
          SendMode mode, MPI_Request* request);
int send_init(const char* call, const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm, SendMode mode, MPI_Request* request);
int recv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status);
int irecv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request);
int recv_init(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request);
int sendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status);
int sendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                     MPI_Comm comm, MPI_Status* status);
int isendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              MPI_Request* request);
int isendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source,
                      int recvtag, MPI_Comm comm, MPI_Request* request);
int probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);
int mrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message, MPI_Status* status);
int imrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message, MPI_Request* request);

// Completion of requests by a thread-rank (completion.cpp).
int wait(MPI_Request* request, MPI_Status* status);
int test(MPI_Request* request, int* flag, MPI_Status* status);
int waitall(int count, MPI_Request* requests, MPI_Status* statuses);
int testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses);
int waitany(int count, MPI_Request* requests, int* index, MPI_Status* status);
int testany(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status);
int waitsome(int incount, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses);
int testsome(int incount, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses);
int request_get_status(MPI_Request request, int* flag, MPI_Status* status);
#if TSMPI_HAVE_MPI_4_1
int request_get_status_any(int count, const MPI_Request* requests, int* index, int* flag, MPI_Status* status);
int request_get_status_all(int count, const MPI_Request* requests, int* flag, MPI_Status* statuses);
int request_get_status_some(int incount, const MPI_Request* requests, int* outcount, int* indices,
                            MPI_Status* statuses);
#endif
int start(MPI_Request* request);
int startall(int count, MPI_Request* requests);
int cancel(MPI_Request* request);
int request_free(MPI_Request* request);
// The Fortran handle of a request: the engine's are promoted to an MPI request (requests.h).
MPI_Fint request_c2f(MPI_Request request);
// The Fortran handles of communicators, groups and matched messages (fortran_handles.cpp).
MPI_Fint comm_c2f(MPI_Comm comm);
MPI_Fint group_c2f(MPI_Group group);
MPI_Fint message_c2f(MPI_Message message);

// Collectives (collectives.cpp). `nonblocking`: nullptr for the blocking form, the nonblocking
// form's request, or a persistent one being started (CollRequest).
int barrier(MPI_Comm comm, CollRequest nonblocking);
int bcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, CollRequest nonblocking);
int gather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nonblocking);
int gatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, Counts recvcounts,
            Displs displs, MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nonblocking);
int scatter(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nonblocking);
int scatterv(const void* sendbuf, Counts sendcounts, Displs displs, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, CollRequest nonblocking);
int allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
              MPI_Datatype recvtype, MPI_Comm comm, CollRequest nonblocking);
int allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, Counts recvcounts,
               Displs displs, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nonblocking);
int alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, CollRequest nonblocking);
int alltoallv(const void* sendbuf, Counts sendcounts, Displs sdispls, MPI_Datatype sendtype, void* recvbuf,
              Counts recvcounts, Displs rdispls, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nonblocking);
int alltoallw(const void* sendbuf, Counts sendcounts, Displs sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
              Counts recvcounts, Displs rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
              CollRequest nonblocking);
int reduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, CollRequest nonblocking);
int allreduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              CollRequest nonblocking);
int reduce_scatter(const void* sendbuf, void* recvbuf, Counts recvcounts, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, CollRequest nonblocking);
int reduce_scatter_block(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, CollRequest nonblocking);
int scan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         CollRequest nonblocking);
int exscan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
           CollRequest nonblocking);

// MPI_Bcast_init and the other persistent collectives (MPI-4.0 §6.13; Open MPI 4.1's MPIX_*_init):
// a persistent request of the calling thread-rank whose MPI_Start runs `start`, the collective's
// nonblocking form completing into it. The communicator and a rooted collective's root are
// checked here; the other arguments, read at each start, when it starts.
int collective_init(const char* call, MPI_Comm comm, MPI_Request* request, std::optional<int> root,
                    std::function<int(Request*)> start);

// Communicators, groups, attributes, names, error handlers (comm_ops.cpp).
int comm_rank(MPI_Comm comm, int* rank);
int comm_size(MPI_Comm comm, int* size);
int comm_compare(MPI_Comm a, MPI_Comm b, int* result);
int comm_dup(MPI_Comm comm, MPI_Comm* newcomm);
int comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request, const char* call);
int comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int comm_free(MPI_Comm* comm);
int comm_group(MPI_Comm comm, MPI_Group* group);
int comm_test_inter(MPI_Comm comm, int* flag);
int topo_test(MPI_Comm comm, int* status);
// Cartesian topologies (topology.cpp).
int cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* newcomm);
int cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm);
int cartdim_get(MPI_Comm comm, int* ndims);
int cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
int cart_rank(MPI_Comm comm, const int coords[], int* rank);
int cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int cart_shift(MPI_Comm comm, int direction, int disp, int* source, int* dest);
int cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank);
int graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm* newcomm);
int graphdims_get(MPI_Comm comm, int* nnodes, int* nedges);
int graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors);
int graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
int graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank);
int dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                               int outdegree, const int destinations[], const int destweights[], int reorder,
                               MPI_Comm* newcomm);
int dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
                      const int weights[], int reorder, MPI_Comm* newcomm);
int dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted);
int dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                         int destinations[], int destweights[]);
// Neighbourhood collectives on a Cartesian grid (collectives_neighbor.cpp).
int neighbor_allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nonblocking);
int neighbor_allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                        Counts recvcounts, Displs displs, MPI_Datatype recvtype, MPI_Comm comm,
                        CollRequest nonblocking);
int neighbor_alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, CollRequest nonblocking);
int neighbor_alltoallv(const void* sendbuf, Counts sendcounts, Displs sdispls, MPI_Datatype sendtype, void* recvbuf,
                       Counts recvcounts, Displs rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                       CollRequest nonblocking);
// Displacements in bytes.
int neighbor_alltoallw(const void* sendbuf, Counts sendcounts, Displs sdispls, const MPI_Datatype* sendtypes,
                       void* recvbuf, Counts recvcounts, Displs rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                       CollRequest nonblocking);
int comm_set_attr(MPI_Comm comm, int keyval, void* value);
int comm_get_attr(MPI_Comm comm, int keyval, void* value, int* flag);
// The MPI communicator that holds the calling thread-rank's value of `keyval` in comm (the
// process's for a predefined attribute), made if needed: where the MPI's Fortran attribute
// routines do their work (fortran_handles.cpp).
int attribute_comm(MPI_Comm comm, int keyval, MPI_Comm* holder, const char* call);
int comm_delete_attr(MPI_Comm comm, int keyval);
int comm_set_name(MPI_Comm comm, const char* name);
int comm_get_name(MPI_Comm comm, char* name, int* resultlen);
int comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler);
int comm_call_errhandler(MPI_Comm comm, int code);
int abort(MPI_Comm comm, int code);
int pack(const void* inbuf, MPI_Count incount, MPI_Datatype type, void* outbuf, MPI_Count outsize,
         MPI_Count* position);
int pack_size(MPI_Count incount, MPI_Datatype type, MPI_Count* size);
int unpack(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
           MPI_Datatype type);
int group_size(MPI_Group group, int* size);
int group_rank(MPI_Group group, int* rank);
int group_translate_ranks(MPI_Group a, int n, const int* ranks_a, MPI_Group b, int* ranks_b);
int group_compare(MPI_Group a, MPI_Group b, int* result);
int group_free(MPI_Group* group);
int group_incl(MPI_Group group, int n, const int* ranks, MPI_Group* newgroup);
int group_excl(MPI_Group group, int n, const int* ranks, MPI_Group* newgroup);
int group_union(MPI_Group a, MPI_Group b, MPI_Group* out);
int group_intersection(MPI_Group a, MPI_Group b, MPI_Group* out);
int group_difference(MPI_Group a, MPI_Group b, MPI_Group* out);
int group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup);
int group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup);
// MPI_Buffer_attach/detach by a thread of an address space's MPI process (address_space.cpp;
// reached through record::Buffer_attach/detach, buffered_sends.h): that process's buffer.
int buffer_attach(void* buffer, MPI_Count size);
int buffer_detach(void* buffer_addr, MPI_Count* size);
// Communicators from groups and split types (comm_create.cpp).
int comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
int comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm);
int comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Comm* newcomm);
}  // namespace api

}  // namespace tsmpi::ranks

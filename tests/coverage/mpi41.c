/* Coverage: MPI 4.1's functions (where mpi.h declares MPI >= 4.1: MPICH 4.2), and the handle
   conversions of operations, datatypes and sessions. Status accessors on a status of its own
   (MPI_Status_set/get_source/tag/error, MPI_Status_set_elements_c), on a received message too;
   MPI_Request_get_status_all/any/some on requests of a message exchange (nothing freed, every
   request then completed by MPI_Waitall); MPI_Type_get_value_index; MPI_Get_hw_resource_info;
   buffered sends through a communicator's attached buffer (MPI_Comm_attach_buffer[_c],
   MPI_Comm_flush_buffer, MPI_Comm_iflush_buffer, MPI_Comm_detach_buffer[_c]), the process's
   (MPI_Buffer_flush, MPI_Buffer_iflush) and a session's (MPI_Session_attach_buffer[_c], flush,
   iflush, detach[_c]). Every value received is checked. (MPICH 4.2.1's MPI_Comm_detach_buffer gives
   size 0 and another address, natively; the session's gives the buffer back.) */
// ranks: 2
#include "coverage.h"

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define HAVE_MPI_4_1 1
#else
#define HAVE_MPI_4_1 0
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "mpi41"), size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = 1 - rank;

  /* Handle conversions (MPI-2 and MPI-4's sessions). */
  MPI_Fint fop = MPI_Op_c2f(MPI_SUM), ftype = MPI_Type_c2f(MPI_INT);
  SAY("op c2f/f2c round trip %d, type c2f/f2c round trip %d", MPI_Op_f2c(fop) == MPI_SUM, MPI_Type_f2c(ftype) == MPI_INT);

#if HAVE_MPI_4_1
  /* Status accessors on a status of its own. */
  MPI_Status st;
  memset(&st, 0, sizeof st);
  int rc1 = MPI_Status_set_source(&st, 3), rc2 = MPI_Status_set_tag(&st, 42), rc3 = MPI_Status_set_error(&st, MPI_ERR_TAG);
  int src = -1, tag = -1, err = -1;
  int rc4 = MPI_Status_get_source(&st, &src), rc5 = MPI_Status_get_tag(&st, &tag), rc6 = MPI_Status_get_error(&st, &err);
  SAY("status set %d %d %d get %d %d %d: source %d tag %d error is MPI_ERR_TAG %d", rc1, rc2, rc3, rc4, rc5, rc6, src, tag,
      err == MPI_ERR_TAG);
  MPI_Count elements = -1;
  SAY("status_set_elements_c %d", MPI_Status_set_elements_c(&st, MPI_INT, 5));
  MPI_Get_elements_c(&st, MPI_INT, &elements);
  SAY("elements %lld", (long long)elements);

  /* Request status queries that free nothing. */
  int out[4], in[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; ++i) out[i] = 100 * rank + i;
  MPI_Request reqs[2];
  MPI_Irecv(in, 4, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(out, 4, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[1]);
  int flag = 0, index = -2, outcount = -2, indices[2];
  MPI_Status sts[2];
  for (int spins = 0; !flag && spins < 10000000; ++spins) MPI_Request_get_status_all(2, reqs, &flag, sts);
  SAY("get_status_all: complete %d, requests kept %d", flag, reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL);
  int rca = MPI_Request_get_status_any(2, reqs, &index, &flag, &sts[0]);
  int rcs = MPI_Request_get_status_some(2, reqs, &outcount, indices, sts);
  SAY("get_status_any rc %d flag %d index valid %d; get_status_some rc %d outcount %d", rca, flag, index == 0 || index == 1,
      rcs, outcount);
  MPI_Waitall(2, reqs, sts);
  int got_source = -1, got_tag = -1;
  MPI_Status_get_source(&sts[0], &got_source);
  MPI_Status_get_tag(&sts[0], &got_tag);
  CHECK(got_source == peer && got_tag == 5);
  for (int i = 0; i < 4; ++i) CHECK(in[i] == 100 * peer + i);
  SAY("received source is peer %d tag %d", got_source == peer, got_tag);

  /* Pair types. */
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  int rcv = MPI_Type_get_value_index(MPI_INT, MPI_INT, &pair);
  SAY("type_get_value_index(int, int) rc %d is MPI_2INT %d", rcv, pair == MPI_2INT);

  /* The machine's resources: what the keys are depends on it, only the call is recorded. */
  MPI_Info hw = MPI_INFO_NULL;
  int rch = MPI_Get_hw_resource_info(&hw);
  SAY("get_hw_resource_info rc %d info %d", rch, hw != MPI_INFO_NULL);
  if (hw != MPI_INFO_NULL) MPI_Info_free(&hw);

  /* Buffered sends through a communicator's buffer, then the process's, then a session's. */
  int bsize = 0;
  MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &bsize);
  bsize += MPI_BSEND_OVERHEAD;
  char* cbuf = malloc((size_t)bsize * 2);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  SAY("comm_attach_buffer %d", MPI_Comm_attach_buffer(dup, cbuf, bsize * 2));
  MPI_Bsend(out, 4, MPI_INT, peer, 6, dup);
  MPI_Recv(in, 4, MPI_INT, peer, 6, dup, MPI_STATUS_IGNORE);
  for (int i = 0; i < 4; ++i) CHECK(in[i] == 100 * peer + i);
  SAY("comm_flush_buffer %d", MPI_Comm_flush_buffer(dup));
  MPI_Request fr = MPI_REQUEST_NULL;
  SAY("comm_iflush_buffer %d", MPI_Comm_iflush_buffer(dup, &fr));
  MPI_Wait(&fr, MPI_STATUS_IGNORE);
  void* back = NULL;
  int back_size = -1;
  SAY("comm_detach_buffer %d size %d same %d", MPI_Comm_detach_buffer(dup, &back, &back_size), back_size == bsize * 2,
      back == cbuf);
  MPI_Count back_c = -1;
  SAY("comm_attach_buffer_c %d", MPI_Comm_attach_buffer_c(dup, cbuf, (MPI_Count)bsize * 2));
  SAY("comm_detach_buffer_c %d size %d", MPI_Comm_detach_buffer_c(dup, &back, &back_c), back_c == (MPI_Count)bsize * 2);
  MPI_Comm_free(&dup);

  MPI_Buffer_attach(cbuf, bsize * 2);
  MPI_Bsend(out, 4, MPI_INT, peer, 7, MPI_COMM_WORLD);
  MPI_Recv(in, 4, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < 4; ++i) CHECK(in[i] == 100 * peer + i);
  SAY("buffer_flush %d", MPI_Buffer_flush());
  SAY("buffer_iflush %d", MPI_Buffer_iflush(&fr));
  MPI_Wait(&fr, MPI_STATUS_IGNORE);
  MPI_Buffer_detach(&back, &back_size);

  MPI_Session session;
  MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
  SAY("session c2f/f2c round trip %d", MPI_Session_f2c(MPI_Session_c2f(session)) == session);
  SAY("session_attach_buffer %d", MPI_Session_attach_buffer(session, cbuf, bsize * 2));
  SAY("session_flush_buffer %d", MPI_Session_flush_buffer(session));
  SAY("session_iflush_buffer %d", MPI_Session_iflush_buffer(session, &fr));
  MPI_Wait(&fr, MPI_STATUS_IGNORE);
  SAY("session_detach_buffer %d size %d", MPI_Session_detach_buffer(session, &back, &back_size), back_size == bsize * 2);
  SAY("session_attach_buffer_c %d", MPI_Session_attach_buffer_c(session, cbuf, (MPI_Count)bsize * 2));
  SAY("session_detach_buffer_c %d size %d", MPI_Session_detach_buffer_c(session, &back, &back_c),
      back_c == (MPI_Count)bsize * 2);
  MPI_Session_finalize(&session);
  free(cbuf);
#else
  SAY("MPI %d.%d: no MPI 4.1 functions", MPI_VERSION, MPI_SUBVERSION);
  (void)peer;
#endif
  return cov_finish();
}

/* Coverage: bad arguments to point-to-point calls get the MPI's error class, through the
   communicator's error handler, never a crash: negative counts, ranks out of range, invalid tags
   (negative ones other than MPI_ANY_TAG in receives, MPI_ANY_TAG in sends, one above MPI_TAG_UB),
   MPI_DATATYPE_NULL, a NULL buffer with a nonzero count, MPI_COMM_NULL, NULL where a request or
   a count must be written, MPI_Bsend without an attached buffer, and bad requests given to the
   request calls. Blocking, nonblocking, persistent and probe forms.
   Every case runs twice on a duplicate of MPI_COMM_WORLD: with MPI_ERRORS_RETURN everywhere
   (the error must come back, no handler called), then with a counting error handler on the
   duplicate, MPI_COMM_WORLD and MPI_COMM_SELF, which records each call's error class and the
   communicator it was called on (calls on MPI_COMM_NULL or a null request go to
   MPI_COMM_WORLD's handler on both MPIs). A correct exchange on the duplicate afterwards shows
   nothing was left behind. Only errors the MPI detects, with the same outcome in every native
   run, are made: what one MPI does not detect (or crashes on natively) is left out for that MPI,
   with the reason. */
// ranks: 2
#include "bad_args.h"

static void cases(MPI_Comm c, int rank, int size, int tag_ub) {
  const int peer = 1 - rank, big = size + 3, bad = -7;
  int buf[4] = {0, 0, 0, 0}, flag = 0, count = 0, idx = 0;
  MPI_Request req = MPI_REQUEST_NULL, reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st;
  MPI_Message msg = MPI_MESSAGE_NULL;
  (void)peer;

  SAY(" MPI_Send");
  CASE("send count -1", MPI_Send(buf, -1, MPI_INT, peer, 0, c));
  CASE("send dest size+3", MPI_Send(buf, 1, MPI_INT, big, 0, c));
  CASE("send dest -7", MPI_Send(buf, 1, MPI_INT, bad, 0, c));
  CASE("send tag -3", MPI_Send(buf, 1, MPI_INT, peer, -3, c));
  CASE("send tag MPI_ANY_TAG", MPI_Send(buf, 1, MPI_INT, peer, MPI_ANY_TAG, c));
  if (tag_ub < 0x7fffffff) CASE("send tag MPI_TAG_UB+1", MPI_Send(buf, 1, MPI_INT, peer, tag_ub + 1, c));
  CASE("send MPI_DATATYPE_NULL", MPI_Send(buf, 1, MPI_DATATYPE_NULL, peer, 0, c));
  CASE("send NULL buffer count 1", MPI_Send(NULL, 1, MPI_INT, peer, 0, c));
  CASE("send MPI_COMM_NULL", MPI_Send(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL));

  SAY(" MPI_Ssend, MPI_Rsend, MPI_Bsend");
  CASE("ssend dest size+3", MPI_Ssend(buf, 1, MPI_INT, big, 0, c));
  CASE("ssend tag -3", MPI_Ssend(buf, 1, MPI_INT, peer, -3, c));
  CASE("ssend count -1", MPI_Ssend(buf, -1, MPI_INT, peer, 0, c));
  CASE("rsend dest -7", MPI_Rsend(buf, 1, MPI_INT, bad, 0, c));
  CASE("rsend MPI_DATATYPE_NULL", MPI_Rsend(buf, 1, MPI_DATATYPE_NULL, peer, 0, c));
  CASE("bsend dest size+3", MPI_Bsend(buf, 1, MPI_INT, big, 0, c));
  CASE("bsend tag -3", MPI_Bsend(buf, 1, MPI_INT, peer, -3, c));
#ifndef OPEN_MPI
  /* Open MPI 4.1.4 does not detect it: the send succeeds (to this rank, never received). */
  CASE("bsend no buffer attached", MPI_Bsend(buf, 1, MPI_INT, rank, 77, c));
  CASE("ibsend no buffer attached", MPI_Ibsend(buf, 1, MPI_INT, rank, 77, c, &req));
#endif
  CASE("buffer_attach size -1", MPI_Buffer_attach(buf, -1));

  SAY(" MPI_Recv");
  CASE("recv count -1", MPI_Recv(buf, -1, MPI_INT, peer, 0, c, &st));
  CASE("recv source size+3", MPI_Recv(buf, 1, MPI_INT, big, 0, c, &st));
  CASE("recv source -7", MPI_Recv(buf, 1, MPI_INT, bad, 0, c, &st));
  CASE("recv tag -3", MPI_Recv(buf, 1, MPI_INT, peer, -3, c, &st));
  if (tag_ub < 0x7fffffff) CASE("recv tag MPI_TAG_UB+1", MPI_Recv(buf, 1, MPI_INT, peer, tag_ub + 1, c, &st));
  CASE("recv MPI_DATATYPE_NULL", MPI_Recv(buf, 1, MPI_DATATYPE_NULL, peer, 0, c, &st));
  CASE("recv NULL buffer count 1", MPI_Recv(NULL, 1, MPI_INT, peer, 0, c, &st));
  CASE("recv MPI_COMM_NULL", MPI_Recv(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &st));
  CASE("recv any source, tag -3", MPI_Recv(buf, 1, MPI_INT, MPI_ANY_SOURCE, -3, c, &st));

  SAY(" MPI_Isend, MPI_Issend, MPI_Irsend, MPI_Irecv");
  CASE("isend count -1", MPI_Isend(buf, -1, MPI_INT, peer, 0, c, &req));
  CASE("isend dest size+3", MPI_Isend(buf, 1, MPI_INT, big, 0, c, &req));
  CASE("isend tag -3", MPI_Isend(buf, 1, MPI_INT, peer, -3, c, &req));
  CASE("isend MPI_DATATYPE_NULL", MPI_Isend(buf, 1, MPI_DATATYPE_NULL, peer, 0, c, &req));
  CASE("isend NULL buffer count 1", MPI_Isend(NULL, 1, MPI_INT, peer, 0, c, &req));
  CASE("isend MPI_COMM_NULL", MPI_Isend(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &req));
  CASE("isend NULL request", MPI_Isend(buf, 1, MPI_INT, peer, 0, c, NULL));
  CASE("issend dest -7", MPI_Issend(buf, 1, MPI_INT, bad, 0, c, &req));
  CASE("irsend tag MPI_ANY_TAG", MPI_Irsend(buf, 1, MPI_INT, peer, MPI_ANY_TAG, c, &req));
  CASE("irecv count -1", MPI_Irecv(buf, -1, MPI_INT, peer, 0, c, &req));
  CASE("irecv source size+3", MPI_Irecv(buf, 1, MPI_INT, big, 0, c, &req));
  CASE("irecv tag -3", MPI_Irecv(buf, 1, MPI_INT, peer, -3, c, &req));
  CASE("irecv MPI_DATATYPE_NULL", MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, peer, 0, c, &req));
  CASE("irecv NULL buffer count 1", MPI_Irecv(NULL, 1, MPI_INT, peer, 0, c, &req));
  CASE("irecv MPI_COMM_NULL", MPI_Irecv(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &req));
  CASE("irecv NULL request", MPI_Irecv(buf, 1, MPI_INT, peer, 0, c, NULL));

  SAY(" MPI_Sendrecv, MPI_Sendrecv_replace");
  CASE("sendrecv dest size+3",
       MPI_Sendrecv(buf, 1, MPI_INT, big, 0, buf + 1, 1, MPI_INT, peer, 0, c, &st));
  CASE("sendrecv source -7",
       MPI_Sendrecv(buf, 1, MPI_INT, peer, 0, buf + 1, 1, MPI_INT, bad, 0, c, &st));
  CASE("sendrecv send tag -3",
       MPI_Sendrecv(buf, 1, MPI_INT, peer, -3, buf + 1, 1, MPI_INT, peer, 0, c, &st));
  CASE("sendrecv recv tag -3",
       MPI_Sendrecv(buf, 1, MPI_INT, peer, 0, buf + 1, 1, MPI_INT, peer, -3, c, &st));
  CASE("sendrecv recv count -1",
       MPI_Sendrecv(buf, 1, MPI_INT, peer, 0, buf + 1, -1, MPI_INT, peer, 0, c, &st));
  CASE("sendrecv recv MPI_DATATYPE_NULL",
       MPI_Sendrecv(buf, 1, MPI_INT, peer, 0, buf + 1, 1, MPI_DATATYPE_NULL, peer, 0, c, &st));
  CASE("sendrecv MPI_COMM_NULL",
       MPI_Sendrecv(buf, 1, MPI_INT, peer, 0, buf + 1, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &st));
  CASE("sendrecv_replace count -1", MPI_Sendrecv_replace(buf, -1, MPI_INT, peer, 0, peer, 0, c, &st));
  CASE("sendrecv_replace dest size+3", MPI_Sendrecv_replace(buf, 1, MPI_INT, big, 0, peer, 0, c, &st));
  CASE("sendrecv_replace recv tag -3", MPI_Sendrecv_replace(buf, 1, MPI_INT, peer, 0, peer, -3, c, &st));

  SAY(" MPI_Send_init, MPI_Recv_init, MPI_Start");
  CASE("send_init dest size+3", MPI_Send_init(buf, 1, MPI_INT, big, 0, c, &req));
  CASE("send_init count -1", MPI_Send_init(buf, -1, MPI_INT, peer, 0, c, &req));
  CASE("recv_init tag -3", MPI_Recv_init(buf, 1, MPI_INT, peer, -3, c, &req));
  CASE("recv_init source -7", MPI_Recv_init(buf, 1, MPI_INT, bad, 0, c, &req));
  req = MPI_REQUEST_NULL;
  CASE("start MPI_REQUEST_NULL", MPI_Start(&req));

  SAY(" MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe");
  CASE("probe source size+3", MPI_Probe(big, 0, c, &st));
  CASE("probe source -7", MPI_Probe(bad, 0, c, &st));
  CASE("probe tag -3", MPI_Probe(peer, -3, c, &st));
  CASE("iprobe source size+3", MPI_Iprobe(big, 0, c, &flag, &st));
  CASE("iprobe tag -3", MPI_Iprobe(MPI_ANY_SOURCE, -3, c, &flag, &st));
#ifndef OPEN_MPI
  /* Open MPI 4.1.4 raises these on MPI_COMM_NULL itself, whose handler is MPI_ERRORS_ARE_FATAL:
     natively the job aborts whatever handler the program set. */
  CASE("probe MPI_COMM_NULL", MPI_Probe(peer, 0, MPI_COMM_NULL, &st));
  CASE("iprobe MPI_COMM_NULL", MPI_Iprobe(peer, 0, MPI_COMM_NULL, &flag, &st));
#endif
  CASE("mprobe source size+3", MPI_Mprobe(big, 0, c, &msg, &st));
  CASE("mprobe tag -3", MPI_Mprobe(peer, -3, c, &msg, &st));
  CASE("improbe source -7", MPI_Improbe(bad, 0, c, &flag, &msg, &st));
  CASE("improbe tag -3", MPI_Improbe(peer, -3, c, &flag, &msg, &st));
#ifndef OPEN_MPI /* Open MPI 4.1.4 raises it on MPI_COMM_NULL (MPI_ERRORS_ARE_FATAL): abort */
  msg = MPI_MESSAGE_NULL;
  CASE("mrecv MPI_MESSAGE_NULL", MPI_Mrecv(buf, 1, MPI_INT, &msg, &st));
#endif

  SAY(" requests");
  req = MPI_REQUEST_NULL;
  CASE("request_free MPI_REQUEST_NULL", MPI_Request_free(&req));
  CASE("waitall count -1", MPI_Waitall(-1, reqs, MPI_STATUSES_IGNORE));
  CASE("testall count -1", MPI_Testall(-1, reqs, &flag, MPI_STATUSES_IGNORE));
  CASE("waitany count -1", MPI_Waitany(-1, reqs, &idx, &st));
  CASE("waitall NULL array count 2", MPI_Waitall(2, NULL, MPI_STATUSES_IGNORE));
  CASE("wait NULL request", MPI_Wait(NULL, &st));
  CASE("test NULL request", MPI_Test(NULL, &flag, &st));
  st.MPI_SOURCE = 0;
  CASE("get_count MPI_DATATYPE_NULL", MPI_Get_count(&st, MPI_DATATYPE_NULL, &count));
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "bad_args");
  int size, flag = 0, *ub = NULL;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  int tag_ub = flag ? *ub : 32767;
  if (rank == 0) SAY("MPI_TAG_UB below INT_MAX %d", tag_ub < 0x7fffffff);

  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_dup(MPI_COMM_WORLD, &tested);
  for (int pass = 0; pass < 2; ++pass) {
    begin_pass(pass, eh);
    cases(tested, rank, size, tag_ub);
    end_pass();
    /* Nothing left behind: a correct exchange on the duplicate. */
    int out = 100 * pass + rank, in = -1;
    int rc = MPI_Sendrecv(&out, 1, MPI_INT, 1 - rank, 5, &in, 1, MPI_INT, 1 - rank, 5, tested,
                          MPI_STATUS_IGNORE);
    SAY("pass %d: exchange afterwards rc %d got %d", pass + 1, rc, in);
    CHECK(rc == MPI_SUCCESS && in == 100 * pass + 1 - rank);
  }
  MPI_Comm_free(&tested);
  MPI_Errhandler_free(&eh);
  return cov_finish();
}

/* Coverage: handle conversion between C and Fortran (MPI_X_c2f / MPI_X_f2c) for communicators,
   groups, infos, error handlers, requests (nonblocking and persistent), messages and statuses.
   Each kind makes the round trip C -> Fortran -> C and the converted handle is then used (a
   request waited on, a message received, a status read). Open MPI exports all of them; MPICH
   exports only the status ones (its handle conversions are macros in mpi.h, compiled the same). */
// ranks: 2
#include "coverage.h"

static int same_c = 0, checked = 0;
#define ROUND_TRIP(kind, h)                           \
  do {                                                \
    MPI_Fint f_ = MPI_##kind##_c2f(h);                \
    MPI_##kind back_ = MPI_##kind##_f2c(f_);          \
    ++checked;                                        \
    same_c += back_ == (h);                           \
  } while (0)

static int handler_calls = 0;
static void handler(MPI_Comm* comm, int* code, ...) {
  (void)comm, (void)code;
  ++handler_calls;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "comm_c2f");
  int peer = 1 - rank, rc;

  /* Communicators: predefined, null and a duplicate; the converted duplicate is used. */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  ROUND_TRIP(Comm, MPI_COMM_WORLD);
  ROUND_TRIP(Comm, MPI_COMM_SELF);
  ROUND_TRIP(Comm, MPI_COMM_NULL);
  ROUND_TRIP(Comm, dup);
  MPI_Fint fdup = MPI_Comm_c2f(dup), fworld = MPI_Comm_c2f(MPI_COMM_WORLD);
  MPI_Comm cdup = MPI_Comm_f2c(fdup);
  int r = -1, sum = -1;
  MPI_Comm_rank(cdup, &r);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, cdup);
  SAY("comm: dup and world distinct in Fortran %d, converted dup rank %d allreduce %d",
      fdup != fworld, r, sum);

  /* Groups. */
  MPI_Group g, self_g;
  MPI_Comm_group(dup, &g);
  MPI_Comm_group(MPI_COMM_SELF, &self_g);
  ROUND_TRIP(Group, g);
  ROUND_TRIP(Group, self_g);
  ROUND_TRIP(Group, MPI_GROUP_EMPTY);
  ROUND_TRIP(Group, MPI_GROUP_NULL);
  int gsize = -1;
  MPI_Group_size(MPI_Group_f2c(MPI_Group_c2f(g)), &gsize);
  SAY("group: converted size %d, distinct in Fortran %d", gsize,
      MPI_Group_c2f(g) != MPI_Group_c2f(self_g));
  MPI_Group_free(&self_g);
  MPI_Group_free(&g);

  /* Infos. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "key", "converted");
  ROUND_TRIP(Info, info);
  ROUND_TRIP(Info, MPI_INFO_NULL);
  char value[32] = "";
  int flag = 0;
  MPI_Info_get(MPI_Info_f2c(MPI_Info_c2f(info)), "key", sizeof value - 1, value, &flag);
  SAY("info: converted flag %d value '%s'", flag, value);
  MPI_Info_free(&info);

  /* Error handlers: a user one set through its converted handle, and the predefined ones. */
  MPI_Errhandler eh, got;
  MPI_Comm_create_errhandler(handler, &eh);
  ROUND_TRIP(Errhandler, eh);
  ROUND_TRIP(Errhandler, MPI_ERRORS_RETURN);
  ROUND_TRIP(Errhandler, MPI_ERRORS_ARE_FATAL);
  ROUND_TRIP(Errhandler, MPI_ERRHANDLER_NULL);
  MPI_Comm_set_errhandler(dup, MPI_Errhandler_f2c(MPI_Errhandler_c2f(eh)));
  MPI_Comm_get_errhandler(dup, &got);
  ROUND_TRIP(Errhandler, got);
  MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
  SAY("errhandler: set through converted handle is the user one %d, its calls %d", got == eh,
      handler_calls);
  MPI_Errhandler_free(&got);
  MPI_Errhandler_free(&eh);
  MPI_Comm_set_errhandler(dup, MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)));
  MPI_Comm_get_errhandler(dup, &got);
  SAY("errhandler: MPI_ERRORS_RETURN set through converted handle %d", got == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&got);

  /* Requests: a nonblocking receive and a persistent one, completed through converted handles. */
  int in = -1, out = 100 + rank;
  MPI_Request req;
  MPI_Irecv(&in, 1, MPI_INT, peer, 1, dup, &req);
  ROUND_TRIP(Request, req);
  MPI_Request creq = MPI_Request_f2c(MPI_Request_c2f(req));
  MPI_Send(&out, 1, MPI_INT, peer, 1, dup);
  MPI_Status st;
  rc = MPI_Wait(&creq, &st);
  SAY("request: wait on converted rc %d received %d source %d tag %d null after %d", rc, in,
      st.MPI_SOURCE, st.MPI_TAG, creq == MPI_REQUEST_NULL);
  ROUND_TRIP(Request, MPI_REQUEST_NULL);
  MPI_Request preq;
  MPI_Recv_init(&in, 1, MPI_INT, MPI_ANY_SOURCE, 2, dup, &preq);
  ROUND_TRIP(Request, preq);
  MPI_Request cpreq = MPI_Request_f2c(MPI_Request_c2f(preq));
  long psum = 0;
  for (int i = 0; i < 3; ++i) {
    in = -1;
    MPI_Start(&cpreq);
    int v = 10 * i + rank;
    MPI_Send(&v, 1, MPI_INT, peer, 2, dup);
    MPI_Wait(&preq, MPI_STATUS_IGNORE); /* waited on through the other handle */
    psum += in;
  }
  SAY("persistent request through converted handle: sum %ld still allocated %d", psum,
      preq != MPI_REQUEST_NULL);
  MPI_Request_free(&cpreq);

  /* Messages: a matched probe received through the converted handle. */
  out = 200 + rank;
  MPI_Send(&out, 1, MPI_INT, peer, 3, dup);
  MPI_Message msg;
  MPI_Mprobe(peer, 3, dup, &msg, &st);
  ROUND_TRIP(Message, msg);
  MPI_Message cmsg = MPI_Message_f2c(MPI_Message_c2f(msg));
  in = -1;
  rc = MPI_Mrecv(&in, 1, MPI_INT, &cmsg, &st);
  SAY("message: mrecv on converted rc %d received %d null after %d", rc, in, cmsg == MPI_MESSAGE_NULL);
  ROUND_TRIP(Message, MPI_MESSAGE_NULL);
  ROUND_TRIP(Message, MPI_MESSAGE_NO_PROC);
  MPI_Mprobe(MPI_PROC_NULL, 0, dup, &msg, &st);
  ROUND_TRIP(Message, msg);
  cmsg = MPI_Message_f2c(MPI_Message_c2f(msg));
  rc = MPI_Mrecv(&in, 0, MPI_INT, &cmsg, &st);
  SAY("message from MPI_PROC_NULL: no_proc %d mrecv rc %d source is PROC_NULL %d", msg == MPI_MESSAGE_NO_PROC,
      rc, st.MPI_SOURCE == MPI_PROC_NULL);

  /* Statuses: a receive's status through a Fortran status and back. */
  int arr[3] = {0, 0, 0}, sendarr[3] = {7, 8, 9};
  MPI_Sendrecv(sendarr, 3, MPI_INT, peer, 4, arr, 3, MPI_INT, peer, 4, dup, &st);
  st.MPI_ERROR = MPI_ERR_TAG; /* single-completion calls leave this field alone: give it a value */
  MPI_Fint fst[sizeof(MPI_Status) / sizeof(MPI_Fint) + 2]; /* Open MPI's mpi.h has no MPI_F_STATUS_SIZE */
  rc = MPI_Status_c2f(&st, fst);
  MPI_Status back;
  memset(&back, 0, sizeof back);
  int rc2 = MPI_Status_f2c(fst, &back);
  int count = -1;
  MPI_Get_count(&back, MPI_INT, &count);
  SAY("status: c2f rc %d f2c rc %d source %d tag %d count %d error is MPI_ERR_TAG %d, data %d %d %d",
      rc, rc2, back.MPI_SOURCE, back.MPI_TAG, count, back.MPI_ERROR == MPI_ERR_TAG, arr[0], arr[1],
      arr[2]);

  SAY("round trips %d, identical %d", checked, same_c);
  MPI_Comm_free(&dup);
  return cov_finish();
}

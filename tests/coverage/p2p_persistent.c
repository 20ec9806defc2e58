/* Coverage: persistent point-to-point: MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init,
   MPI_Rsend_init, MPI_Recv_init, MPI_Start, MPI_Startall over several rounds, completion by every
   MPI_Wait* / MPI_Test* form, MPI_Request_get_status, inactive requests, cancel of a started
   persistent receive and its restart, MPI_PROC_NULL, MPI_Request_free. */
// ranks: 2
#include "coverage.h"

enum { N = 5, ROUNDS = 3 };

static void fill(int* buf, int n, int base) {
  for (int i = 0; i < n; ++i) buf[i] = base + i;
}
static int same(const int* buf, int n, int base) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != base + i) return 0;
  return 1;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "p2p_persistent");
  int peer = 1 - rank;
  MPI_Comm comm = MPI_COMM_WORLD;
  int rc, count, flag;
  MPI_Status st;

  /* Standard mode with MPI_Start / MPI_Wait, three rounds on the same requests; the send buffer
     changes between rounds. */
  {
    int out[N], in[N];
    MPI_Request s, r;
    MPI_Send_init(out, N, MPI_INT, peer, 1, comm, &s);
    MPI_Recv_init(in, N, MPI_INT, peer, 1, comm, &r);
    int ok = 1;
    for (int round = 0; round < ROUNDS; ++round) {
      fill(out, N, 100 * round + rank);
      memset(in, 0, sizeof in);
      MPI_Start(&r);
      MPI_Start(&s);
      MPI_Wait(&s, MPI_STATUS_IGNORE);
      rc = MPI_Wait(&r, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      ok &= rc == MPI_SUCCESS && count == N && st.MPI_SOURCE == peer && st.MPI_TAG == 1 &&
            same(in, N, 100 * round + peer) && r != MPI_REQUEST_NULL && s != MPI_REQUEST_NULL;
    }
    SAY("send_init/recv_init %d rounds ok %d", ROUNDS, ok);
    CHECK(ok);
    /* An inactive persistent request: MPI_Wait and MPI_Test return at once, empty status. */
    rc = MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("wait on inactive rc %d source any %d tag any %d count %d request kept %d", rc,
        st.MPI_SOURCE == MPI_ANY_SOURCE, st.MPI_TAG == MPI_ANY_TAG, count, r != MPI_REQUEST_NULL);
    flag = -1;
    rc = MPI_Test(&s, &flag, &st);
    SAY("test on inactive rc %d flag %d", rc, flag);
    flag = -1;
    rc = MPI_Request_get_status(r, &flag, &st);
    SAY("get_status on inactive rc %d flag %d", rc, flag);
    rc = MPI_Request_free(&s);
    int rc2 = MPI_Request_free(&r);
    SAY("request_free of inactive rc %d %d null %d", rc, rc2,
        s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL);
  }

  /* All four send modes with MPI_Startall: rank 1 starts its four receives, then tells rank 0,
     which starts its four sends (the ready send finds its receive posted). Two rounds,
     completed by MPI_Waitall and then by an MPI_Testall loop. */
  if (rank == 0) {
    int out[4][N], one = 0;
    MPI_Pack_size(N, MPI_INT, comm, &one);
    int size = 2 * (one + MPI_BSEND_OVERHEAD);
    char* attached = malloc((size_t)size);
    MPI_Buffer_attach(attached, size);
    MPI_Request s[4];
    MPI_Send_init(out[0], N, MPI_INT, 1, 10, comm, &s[0]);
    MPI_Bsend_init(out[1], N, MPI_INT, 1, 11, comm, &s[1]);
    MPI_Ssend_init(out[2], N, MPI_INT, 1, 12, comm, &s[2]);
    MPI_Rsend_init(out[3], N, MPI_INT, 1, 13, comm, &s[3]);
    for (int round = 0; round < 2; ++round) {
      for (int k = 0; k < 4; ++k) fill(out[k], N, 1000 * (k + 1) + 10 * round);
      MPI_Recv(NULL, 0, MPI_INT, 1, 19, comm, MPI_STATUS_IGNORE);
      rc = MPI_Startall(4, s);
      MPI_Status sts[4];
      if (round == 0) {
        int rc2 = MPI_Waitall(4, s, sts);
        SAY("round 0 startall rc %d waitall rc %d", rc, rc2);
      } else {
        flag = 0;
        while (!flag) MPI_Testall(4, s, &flag, MPI_STATUSES_IGNORE);
        SAY("round 1 startall rc %d testall flag %d", rc, flag);
      }
    }
    for (int k = 0; k < 4; ++k) MPI_Request_free(&s[k]);
    void* detached;
    int detached_size;
    rc = MPI_Buffer_detach(&detached, &detached_size);
    SAY("detach rc %d same %d", rc, detached == (void*)attached && detached_size == size);
    free(attached);
  } else {
    int in[4][N];
    MPI_Request r[4];
    for (int k = 0; k < 4; ++k) MPI_Recv_init(in[k], N, MPI_INT, 0, 10 + k, comm, &r[k]);
    for (int round = 0; round < 2; ++round) {
      memset(in, 0, sizeof in);
      rc = MPI_Startall(4, r);
      MPI_Send(NULL, 0, MPI_INT, 0, 19, comm);
      MPI_Status sts[4];
      int rc2;
      if (round == 0) {
        rc2 = MPI_Waitall(4, r, sts);
      } else {
        flag = 0;
        while (!flag) rc2 = MPI_Testall(4, r, &flag, sts);
      }
      int ok = 1;
      for (int k = 0; k < 4; ++k) {
        MPI_Get_count(&sts[k], MPI_INT, &count);
        ok &= sts[k].MPI_TAG == 10 + k && count == N && same(in[k], N, 1000 * (k + 1) + 10 * round);
      }
      SAY("round %d startall rc %d completion rc %d four modes received ok %d", round, rc, rc2, ok);
      CHECK(ok);
    }
    for (int k = 0; k < 4; ++k) MPI_Request_free(&r[k]);
  }

  /* Persistent receives completed by MPI_Waitany, MPI_Waitsome, MPI_Testany, MPI_Testsome in an
     array that also holds MPI_REQUEST_NULL and an inactive persistent request. */
  {
    int in[3][N], out[3][N];
    MPI_Request r[5], s[3];
    r[1] = MPI_REQUEST_NULL;
    MPI_Recv_init(in[0], N, MPI_INT, peer, 20, comm, &r[0]);
    MPI_Recv_init(in[1], N, MPI_INT, peer, 21, comm, &r[2]);
    MPI_Recv_init(in[2], N, MPI_INT, MPI_ANY_SOURCE, 22, comm, &r[4]);
    MPI_Recv_init(NULL, 0, MPI_INT, peer, 29, comm, &r[3]); /* never started: inactive */
    for (int k = 0; k < 3; ++k) MPI_Send_init(out[k], N, MPI_INT, peer, 20 + k, comm, &s[k]);
    const char* names[4] = {"waitany", "waitsome", "testany", "testsome"};
    for (int form = 0; form < 4; ++form) {
      memset(in, 0, sizeof in);
      for (int k = 0; k < 3; ++k) fill(out[k], N, 2000 + 100 * form + 10 * k + rank);
      MPI_Start(&r[0]);
      MPI_Start(&r[2]);
      MPI_Start(&r[4]);
      MPI_Startall(3, s);
      int done = 0, index, outcount, indices[5], calls = 0;
      MPI_Status sts[5];
      for (;;) {
        ++calls;
        if (form == 0) {
          MPI_Waitany(5, r, &index, &st);
          if (index == MPI_UNDEFINED) break;
          done |= 1 << index;
        } else if (form == 1) {
          MPI_Waitsome(5, r, &outcount, indices, sts);
          if (outcount == MPI_UNDEFINED) break;
          for (int i = 0; i < outcount; ++i) done |= 1 << indices[i];
        } else if (form == 2) {
          MPI_Testany(5, r, &index, &flag, &st);
          if (flag && index == MPI_UNDEFINED) break;
          if (flag) done |= 1 << index;
        } else {
          MPI_Testsome(5, r, &outcount, indices, MPI_STATUSES_IGNORE);
          if (outcount == MPI_UNDEFINED) break;
          for (int i = 0; i < outcount; ++i) done |= 1 << indices[i];
        }
        CHECK(calls < 100000000);
      }
      MPI_Waitall(3, s, MPI_STATUSES_IGNORE);
      int ok = 1;
      for (int k = 0; k < 3; ++k) ok &= same(in[k], N, 2000 + 100 * form + 10 * k + peer);
      SAY("%s over persistent receives: mask %d data ok %d requests kept %d", names[form], done, ok,
          r[0] != MPI_REQUEST_NULL && r[2] != MPI_REQUEST_NULL && r[4] != MPI_REQUEST_NULL);
      CHECK(ok);
    }
    for (int k = 0; k < 5; ++k)
      if (r[k] != MPI_REQUEST_NULL) MPI_Request_free(&r[k]);
    for (int k = 0; k < 3; ++k) MPI_Request_free(&s[k]);
  }

  /* MPI_Request_get_status on a started persistent receive; MPI_Test to complete it. */
  {
    int in[N], out[N];
    MPI_Request r, s;
    MPI_Recv_init(in, N, MPI_INT, peer, 30, comm, &r);
    MPI_Start(&r);
    fill(out, N, 3000 + rank);
    MPI_Isend(out, N, MPI_INT, peer, 30, comm, &s);
    flag = 0;
    while (!flag) MPI_Request_get_status(r, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("get_status on started recv_init flag %d tag %d count %d data ok %d", flag, st.MPI_TAG,
        count, same(in, N, 3000 + peer));
    flag = 0;
    MPI_Test(&r, &flag, &st);
    SAY("then test flag %d tag %d request kept %d", flag, st.MPI_TAG, r != MPI_REQUEST_NULL);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);
  }

  /* MPI_Cancel of a started persistent receive nobody has sent to yet, then the same request
     started again and really received. */
  {
    int in[N], out[N], cancelled = -1;
    MPI_Request r;
    MPI_Recv_init(in, N, MPI_INT, peer, 40, comm, &r);
    MPI_Start(&r);
    rc = MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    SAY("cancel of started recv_init rc %d cancelled %d request kept %d", rc, cancelled,
        r != MPI_REQUEST_NULL);
    /* The peer may send tag 40 only once this receive is cancelled. */
    MPI_Sendrecv(NULL, 0, MPI_INT, peer, 41, NULL, 0, MPI_INT, peer, 41, comm, MPI_STATUS_IGNORE);
    memset(in, 0, sizeof in);
    MPI_Start(&r);
    fill(out, N, 4000 + rank);
    MPI_Send(out, N, MPI_INT, peer, 40, comm);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    SAY("restarted after cancel: cancelled %d data ok %d", cancelled, same(in, N, 4000 + peer));
    CHECK(same(in, N, 4000 + peer));
    MPI_Request_free(&r);
  }

  /* MPI_Request_free of an active persistent send (MPI allows it; the message still goes), after
     which rank 1 acknowledges. */
  if (rank == 0) {
    static int out[N];
    MPI_Request s;
    fill(out, N, 5000);
    MPI_Send_init(out, N, MPI_INT, 1, 50, comm, &s);
    MPI_Start(&s);
    rc = MPI_Request_free(&s);
    int ack = 0;
    MPI_Recv(&ack, 1, MPI_INT, 1, 51, comm, MPI_STATUS_IGNORE);
    SAY("request_free of active send_init rc %d null %d ack %d", rc, s == MPI_REQUEST_NULL, ack);
  } else {
    int in[N], ack;
    MPI_Recv(in, N, MPI_INT, 0, 50, comm, MPI_STATUS_IGNORE);
    ack = same(in, N, 5000);
    CHECK(ack);
    MPI_Send(&ack, 1, MPI_INT, 0, 51, comm);
  }

  /* Persistent requests with MPI_PROC_NULL. */
  {
    int in = 9, out = 8;
    MPI_Request r[5];
    MPI_Recv_init(&in, 1, MPI_INT, MPI_PROC_NULL, 60, comm, &r[0]);
    MPI_Send_init(&out, 1, MPI_INT, MPI_PROC_NULL, 60, comm, &r[1]);
    MPI_Ssend_init(&out, 1, MPI_INT, MPI_PROC_NULL, 60, comm, &r[2]);
    MPI_Rsend_init(&out, 1, MPI_INT, MPI_PROC_NULL, 60, comm, &r[3]);
    MPI_Bsend_init(&out, 1, MPI_INT, MPI_PROC_NULL, 60, comm, &r[4]);
    rc = MPI_Startall(5, r);
    MPI_Status sts[5];
    int rc2 = MPI_Waitall(5, r, sts);
    MPI_Get_count(&sts[0], MPI_INT, &count);
    SAY("proc_null persistent startall rc %d waitall rc %d source proc_null %d tag any %d count %d "
        "untouched %d",
        rc, rc2, sts[0].MPI_SOURCE == MPI_PROC_NULL, sts[0].MPI_TAG == MPI_ANY_TAG, count, in == 9);
    for (int k = 0; k < 5; ++k) MPI_Request_free(&r[k]);
  }
  return cov_finish();
}

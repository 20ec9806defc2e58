/* Coverage: nonblocking point-to-point in every send mode, every MPI_Wait* / MPI_Test* form
   (status arrays and MPI_STATUSES_IGNORE, arrays holding MPI_REQUEST_NULL, all-null arrays),
   MPI_Request_get_status, MPI_Request_free of an active send, MPI_Cancel + MPI_Test_cancelled of
   a receive, MPI_ERR_IN_STATUS from MPI_Waitall, and the MPI-4 MPI_Isendrecv(_replace).
   The order in which requests complete depends on timing, so only the set of completed indices
   is recorded. */
// ranks: 2
#include "coverage.h"

enum { N = 6 };

static void fill(int* buf, int n, int base) {
  for (int i = 0; i < n; ++i) buf[i] = base + i;
}
static int same(const int* buf, int n, int base) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != base + i) return 0;
  return 1;
}
#if !defined(OPEN_MPI) /* used by the MPI_Waitall truncation case only */
static int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}
#endif
/* An empty status (MPI-3.1 §3.7.3): source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0. */
static int is_empty(const MPI_Status* st) {
  int count = -1, cancelled = -1;
  MPI_Get_count(st, MPI_INT, &count);
  MPI_Test_cancelled(st, &cancelled);
  return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 &&
         cancelled == 0;
}

/* Rank 0 sends three messages with tags tag0, tag0+1, tag0+2 holding base + 100*k. */
static void send3(int tag0, int base) {
  int out[3][N];
  MPI_Request r[3];
  for (int k = 0; k < 3; ++k) {
    fill(out[k], N, base + 100 * k);
    MPI_Isend(out[k], N, MPI_INT, 1, tag0 + k, MPI_COMM_WORLD, &r[k]);
  }
  MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
}
/* Rank 1 posts the three receives at indices 0, 2, 4 of a five-request array, the others null. */
static void post3(MPI_Request* r, int in[][N], int tag0) {
  for (int i = 0; i < 5; ++i) r[i] = MPI_REQUEST_NULL;
  for (int k = 0; k < 3; ++k) {
    memset(in[k], 0, sizeof in[k]);
    MPI_Irecv(in[k], N, MPI_INT, 0, tag0 + k, MPI_COMM_WORLD, &r[2 * k]);
  }
}
static int check3(int in[][N], int base) {
  return same(in[0], N, base) && same(in[1], N, base + 100) && same(in[2], N, base + 200);
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "p2p_nonblocking");
  int peer = 1 - rank;
  MPI_Comm comm = MPI_COMM_WORLD;
  int rc, count, flag;
  MPI_Status st;
  MPI_Request req;

  /* MPI_Isend / MPI_Irecv / MPI_Wait. */
  {
    int out[N], in[N];
    fill(out, N, 10 + 100 * rank);
    memset(in, 0, sizeof in);
    MPI_Request rr, sr;
    MPI_Irecv(in, N, MPI_INT, peer, 1, comm, &rr);
    MPI_Isend(out, N, MPI_INT, peer, 1, comm, &sr);
    rc = MPI_Wait(&sr, &st);
    SAY("wait isend rc %d request null %d", rc, sr == MPI_REQUEST_NULL);
    rc = MPI_Wait(&rr, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("wait irecv rc %d null %d source %d tag %d count %d data ok %d", rc, rr == MPI_REQUEST_NULL,
        st.MPI_SOURCE, st.MPI_TAG, count, same(in, N, 10 + 100 * peer));
    CHECK(same(in, N, 10 + 100 * peer));
  }

  /* Every send mode, nonblocking: rank 1 posts the receives, then tells rank 0 to go (the ready
     send needs its receive posted); both complete everything with MPI_Waitall. */
  if (rank == 0) {
    int out[4][N], one = 0;
    MPI_Pack_size(N, MPI_INT, comm, &one);
    int size = one + MPI_BSEND_OVERHEAD;
    char* attached = malloc((size_t)size);
    MPI_Buffer_attach(attached, size);
    for (int k = 0; k < 4; ++k) fill(out[k], N, 1000 * (k + 1));
    MPI_Request r[4];
    MPI_Recv(NULL, 0, MPI_INT, 1, 40, comm, MPI_STATUS_IGNORE);
    MPI_Isend(out[0], N, MPI_INT, 1, 2, comm, &r[0]);
    MPI_Issend(out[1], N, MPI_INT, 1, 3, comm, &r[1]);
    MPI_Ibsend(out[2], N, MPI_INT, 1, 4, comm, &r[2]);
    MPI_Irsend(out[3], N, MPI_INT, 1, 5, comm, &r[3]);
    MPI_Status sts[4];
    rc = MPI_Waitall(4, r, sts);
    SAY("waitall of isend/issend/ibsend/irsend rc %d all null %d", rc,
        r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL &&
            r[3] == MPI_REQUEST_NULL);
    void* detached;
    int detached_size;
    rc = MPI_Buffer_detach(&detached, &detached_size);
    SAY("detach rc %d same %d", rc, detached == (void*)attached && detached_size == size);
    free(attached);
  } else {
    int in[4][N];
    MPI_Request r[4];
    memset(in, 0, sizeof in);
    for (int k = 0; k < 4; ++k) MPI_Irecv(in[k], N, MPI_INT, 0, 2 + k, comm, &r[k]);
    MPI_Send(NULL, 0, MPI_INT, 0, 40, comm);
    MPI_Status sts[4];
    rc = MPI_Waitall(4, r, sts);
    SAY("waitall of 4 irecv rc %d", rc);
    for (int k = 0; k < 4; ++k) {
      MPI_Get_count(&sts[k], MPI_INT, &count);
      SAY("  mode %d: source %d tag %d count %d data ok %d", k, sts[k].MPI_SOURCE, sts[k].MPI_TAG,
          count, same(in[k], N, 1000 * (k + 1)));
      CHECK(same(in[k], N, 1000 * (k + 1)));
    }
  }

  /* MPI_Waitany over an array with MPI_REQUEST_NULL entries, until MPI_UNDEFINED. */
  if (rank == 0) {
    send3(10, 100);
  } else {
    int in[3][N], index, done = 0;
    MPI_Request r[5];
    post3(r, in, 10);
    for (int round = 0; round < 4; ++round) {
      rc = MPI_Waitany(5, r, &index, &st);
      if (index == MPI_UNDEFINED) {
        SAY("waitany round %d: MPI_UNDEFINED rc %d empty status %d", round, rc, is_empty(&st));
        break;
      }
      done |= 1 << index;
      CHECK(rc == MPI_SUCCESS && st.MPI_TAG == 10 + index / 2 && r[index] == MPI_REQUEST_NULL);
    }
    SAY("waitany completed indices mask %d data ok %d", done, check3(in, 100));
    CHECK(check3(in, 100));
  }

  /* MPI_Waitsome with a status array, then with MPI_STATUSES_IGNORE. */
  for (int variant = 0; variant < 2; ++variant) {
    if (rank == 0) {
      send3(20 + 3 * variant, 200 + variant);
    } else {
      int in[3][N], outcount, indices[5], done = 0, calls = 0;
      MPI_Status sts[5];
      MPI_Request r[5];
      post3(r, in, 20 + 3 * variant);
      for (;;) {
        rc = MPI_Waitsome(5, r, &outcount, indices, variant ? MPI_STATUSES_IGNORE : sts);
        ++calls;
        if (outcount == MPI_UNDEFINED) break;
        CHECK(rc == MPI_SUCCESS && outcount >= 1);
        for (int i = 0; i < outcount; ++i) {
          done |= 1 << indices[i];
          if (!variant) CHECK(sts[i].MPI_TAG == 20 + indices[i] / 2);
        }
      }
      SAY("waitsome (%s) mask %d ended with MPI_UNDEFINED rc %d data ok %d",
          variant ? "statuses ignored" : "statuses", done, rc, check3(in, 200 + variant));
      CHECK(check3(in, 200 + variant) && calls >= 2 && calls <= 4);
    }
  }

  /* MPI_Test, MPI_Testany, MPI_Testall, MPI_Testsome loops. */
  if (rank == 0) {
    send3(30, 300);
    send3(33, 330);
    send3(36, 360);
  } else {
    int in[3][N], index, done = 0, outcount, indices[5];
    MPI_Request r[5];
    MPI_Status sts[5];

    /* MPI_Test on one request until it completes. */
    post3(r, in, 30);
    flag = 0;
    while (!flag) MPI_Test(&r[0], &flag, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("test: flag %d null %d tag %d count %d", flag, r[0] == MPI_REQUEST_NULL, st.MPI_TAG, count);
    /* MPI_Testany over the rest (index 0 now null too). */
    for (;;) {
      flag = 0;
      rc = MPI_Testany(5, r, &index, &flag, &st);
      if (!flag) continue;
      if (index == MPI_UNDEFINED) break;
      done |= 1 << index;
      CHECK(st.MPI_TAG == 30 + index / 2);
    }
    SAY("testany mask %d ends with flag 1 index MPI_UNDEFINED rc %d empty %d data ok %d", done, rc,
        is_empty(&st), check3(in, 300));
    CHECK(check3(in, 300));

    /* MPI_Testall with a status array. */
    post3(r, in, 33);
    flag = 0;
    while (!flag) rc = MPI_Testall(5, r, &flag, sts);
    SAY("testall rc %d tags %d %d %d nulls %d data ok %d", rc, sts[0].MPI_TAG, sts[2].MPI_TAG,
        sts[4].MPI_TAG, r[0] == MPI_REQUEST_NULL && r[4] == MPI_REQUEST_NULL, check3(in, 330));
    CHECK(check3(in, 330));

    /* MPI_Testsome with MPI_STATUSES_IGNORE, until MPI_UNDEFINED. */
    post3(r, in, 36);
    done = 0;
    for (;;) {
      rc = MPI_Testsome(5, r, &outcount, indices, MPI_STATUSES_IGNORE);
      if (outcount == MPI_UNDEFINED) break;
      for (int i = 0; i < outcount; ++i) done |= 1 << indices[i];
    }
    SAY("testsome mask %d rc %d data ok %d", done, rc, check3(in, 360));
    CHECK(check3(in, 360));
  }

  /* Arrays of MPI_REQUEST_NULL only, a zero-length array, MPI_REQUEST_NULL alone. */
  {
    MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[3];
    int index = -7, outcount = -7, indices[3];
    rc = MPI_Waitall(3, r, sts);
    SAY("null waitall rc %d empty %d", rc, is_empty(&sts[1]));
    rc = MPI_Waitall(0, r, MPI_STATUSES_IGNORE);
    SAY("zero-length waitall rc %d", rc);
    rc = MPI_Waitany(3, r, &index, &st);
    SAY("null waitany rc %d index undefined %d empty %d", rc, index == MPI_UNDEFINED,
        is_empty(&st));
    rc = MPI_Waitsome(3, r, &outcount, indices, sts);
    SAY("null waitsome rc %d outcount undefined %d", rc, outcount == MPI_UNDEFINED);
    flag = -1;
    rc = MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE);
    SAY("null testall rc %d flag %d", rc, flag);
    flag = -1, index = -7;
    rc = MPI_Testany(3, r, &index, &flag, MPI_STATUS_IGNORE);
    SAY("null testany rc %d flag %d index undefined %d", rc, flag, index == MPI_UNDEFINED);
    outcount = -7;
    rc = MPI_Testsome(3, r, &outcount, indices, MPI_STATUSES_IGNORE);
    SAY("null testsome rc %d outcount undefined %d", rc, outcount == MPI_UNDEFINED);
    req = MPI_REQUEST_NULL;
    rc = MPI_Wait(&req, &st);
    SAY("wait on null rc %d empty %d", rc, is_empty(&st));
    flag = -1;
    rc = MPI_Test(&req, &flag, &st);
    SAY("test on null rc %d flag %d empty %d", rc, flag, is_empty(&st));
    flag = -1;
    rc = MPI_Request_get_status(req, &flag, &st);
    SAY("get_status on null rc %d flag %d empty %d", rc, flag, is_empty(&st));
  }

  /* MPI_Request_get_status polls without freeing; the request is then completed by MPI_Wait. */
  if (rank == 0) {
    int out[N];
    fill(out, N, 500);
    MPI_Isend(out, N, MPI_INT, 1, 50, comm, &req);
    flag = 0;
    while (!flag) MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
    SAY("get_status isend flag %d request still there %d", flag, req != MPI_REQUEST_NULL);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    SAY("wait after get_status rc %d null %d", rc, req == MPI_REQUEST_NULL);
  } else {
    int in[N];
    memset(in, 0, sizeof in);
    MPI_Irecv(in, N, MPI_INT, 0, 50, comm, &req);
    flag = 0;
    while (!flag) MPI_Request_get_status(req, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("get_status irecv flag %d source %d tag %d count %d request still there %d data ok %d",
        flag, st.MPI_SOURCE, st.MPI_TAG, count, req != MPI_REQUEST_NULL, same(in, N, 500));
    memset(&st, 0, sizeof st);
    rc = MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("wait after get_status rc %d tag %d count %d", rc, st.MPI_TAG, count);
    CHECK(same(in, N, 500));
  }

  /* MPI_Request_free of an active send: the message is still delivered; rank 1 acknowledges. */
  if (rank == 0) {
    static int out[N];
    fill(out, N, 600);
    MPI_Isend(out, N, MPI_INT, 1, 60, comm, &req);
    rc = MPI_Request_free(&req);
    SAY("request_free of active isend rc %d null %d", rc, req == MPI_REQUEST_NULL);
    int ack = 0;
    MPI_Recv(&ack, 1, MPI_INT, 1, 61, comm, MPI_STATUS_IGNORE);
    SAY("ack %d", ack);
  } else {
    int in[N];
    memset(in, 0, sizeof in);
    MPI_Recv(in, N, MPI_INT, 0, 60, comm, MPI_STATUS_IGNORE);
    int ack = same(in, N, 600);
    CHECK(ack);
    MPI_Send(&ack, 1, MPI_INT, 0, 61, comm);
  }

  /* MPI_Cancel of receives nobody sends to (tag 999): completed by MPI_Wait, by an MPI_Test loop,
     and observed with MPI_Request_get_status; MPI_Test_cancelled says so. */
  {
    int in[N], cancelled = -1;
    MPI_Irecv(in, N, MPI_INT, peer, 999, comm, &req);
    rc = MPI_Cancel(&req);
    int rc2 = MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &cancelled);
    SAY("cancel irecv rc %d wait rc %d cancelled %d null %d", rc, rc2, cancelled,
        req == MPI_REQUEST_NULL);

    MPI_Irecv(in, N, MPI_INT, MPI_ANY_SOURCE, 999, comm, &req);
    MPI_Cancel(&req);
    flag = 0;
    while (!flag) MPI_Request_get_status(req, &flag, &st);
    MPI_Test_cancelled(&st, &cancelled);
    SAY("cancel any-source irecv: get_status flag %d cancelled %d", flag, cancelled);
    flag = 0;
    while (!flag) MPI_Test(&req, &flag, &st);
    MPI_Test_cancelled(&st, &cancelled);
    SAY("then test flag %d cancelled %d null %d", flag, cancelled, req == MPI_REQUEST_NULL);

    /* One cancelled receive and one real one in the same MPI_Waitall. */
    MPI_Request r[2];
    MPI_Status sts[2];
    int out = 700 + rank, got = -1;
    MPI_Irecv(in, N, MPI_INT, peer, 998, comm, &r[0]);
    MPI_Irecv(&got, 1, MPI_INT, peer, 71, comm, &r[1]);
    MPI_Cancel(&r[0]);
    MPI_Send(&out, 1, MPI_INT, peer, 71, comm);
    rc = MPI_Waitall(2, r, sts);
    int c0 = -1, c1 = -1;
    MPI_Test_cancelled(&sts[0], &c0);
    MPI_Test_cancelled(&sts[1], &c1);
    SAY("waitall cancelled+real rc %d cancelled %d %d got %d", rc, c0, c1, got);
    CHECK(got == 700 + peer && c0 == 1 && c1 == 0);
  }

  /* MPI_Waitall reports a truncated receive with MPI_ERR_IN_STATUS. Not on Open MPI: 4.1.4 then
     sometimes never returns from MPI_Waitall, natively as under tsmpi (found here under load:
     3 of 150 runs; comm_errors.c saw it natively). */
#if !defined(OPEN_MPI)
  if (rank == 0) {
    int out[N];
    fill(out, N, 800);
    MPI_Send(out, N, MPI_INT, 1, 80, comm);
    MPI_Send(out, 2, MPI_INT, 1, 81, comm);
  } else {
    int small[2], in[N];
    MPI_Request r[2];
    MPI_Status sts[2];
    memset(in, 0, sizeof in);
    MPI_Irecv(small, 2, MPI_INT, 0, 80, comm, &r[0]);
    MPI_Irecv(in, N, MPI_INT, 0, 81, comm, &r[1]);
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = -1;
    rc = MPI_Waitall(2, r, sts);
    /* The second request either completed (MPI_SUCCESS) or is still pending (MPI_ERR_PENDING,
       the request stays active: complete it). Which one depends on timing. */
    int second = err_class(sts[1].MPI_ERROR);
    if (second == MPI_ERR_PENDING) MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    SAY("waitall with truncation: err_in_status %d status errors truncate %d success or pending %d "
        "first request null %d data ok %d",
        err_class(rc) == MPI_ERR_IN_STATUS, err_class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE,
        second == MPI_SUCCESS || second == MPI_ERR_PENDING, r[0] == MPI_REQUEST_NULL,
        same(in, 2, 800));
    CHECK(same(in, 2, 800));
  }
#endif

  /* MPI_PROC_NULL requests complete at once with an empty-ish status. */
  {
    MPI_Request r[2];
    int in = 5, out = 6;
    MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 1, comm, &r[0]);
    MPI_Isend(&out, 1, MPI_INT, MPI_PROC_NULL, 1, comm, &r[1]);
    MPI_Status sts[2];
    rc = MPI_Waitall(2, r, sts);
    MPI_Get_count(&sts[0], MPI_INT, &count);
    SAY("proc_null irecv/isend rc %d source proc_null %d tag any %d count %d untouched %d", rc,
        sts[0].MPI_SOURCE == MPI_PROC_NULL, sts[0].MPI_TAG == MPI_ANY_TAG, count, in == 5);
  }

#if COV_MPI4
  /* MPI-4 MPI_Isendrecv and MPI_Isendrecv_replace. */
  {
    int out[N], in[N], io[N];
    fill(out, N, 900 + 10 * rank);
    memset(in, 0, sizeof in);
    rc = MPI_Isendrecv(out, N, MPI_INT, peer, 90, in, N, MPI_INT, peer, 90, comm, &req);
    /* MPICH 4.0.2 (ch4:ucx) does not fill the status of a completed MPI_Isendrecv(_replace)
       (source, tag and count are left as whatever was there), so it is not recorded. */
    int rc2 = MPI_Wait(&req, &st);
    SAY("isendrecv rc %d %d data ok %d", rc, rc2, same(in, N, 900 + 10 * peer));
    CHECK(same(in, N, 900 + 10 * peer));

    fill(io, N, 950 + 10 * rank);
    rc = MPI_Isendrecv_replace(io, N, MPI_INT, peer, 91, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req);
    flag = 0;
    while (!flag) MPI_Test(&req, &flag, &st);
    SAY("isendrecv_replace rc %d flag %d data ok %d", rc, flag, same(io, N, 950 + 10 * peer));
    CHECK(same(io, N, 950 + 10 * peer));

    /* Not made: MPI_Isendrecv(_replace) with MPI_PROC_NULL as destination crashes MPICH 4.0.2
       natively (segmentation fault in ucp_tag_send_nbx). */
  }
#endif
  return cov_finish();
}

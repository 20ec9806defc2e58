/* rk_p2p_modes: every point-to-point form between thread-ranks, each with its data checked.
   An OpenMP region of T threads per process (SPEC as in rk_layout: "A,B" gives process p the
   entry p mod 2), entered ROUNDS times on one threadcomm. r = thread-rank, N = size,
   left/right = ring neighbours (across processes at the seams).

   usage: rk_p2p_modes ROUNDS SPEC

     a. modes: Send, Ssend, Rsend, Bsend (buffer attached by the process before the region),
        Isend, Issend, Irsend, Ibsend to the right, each at 0 B, 4 B and 64 KiB; the receive
        (Irecv from the left) is posted before an MPI_Barrier so that Rsend is legal; status
        source, tag, MPI_Get_count and every element checked;
     b. MPI_Sendrecv and MPI_Sendrecv_replace around the ring (0 B, 40 B, 64 KiB);
     c. all pairs, self included: Isend to and Irecv from every rank (sizes by pair, 64 KiB for
        a third of them), one MPI_Waitall, the array of statuses checked;
     d. MPI_PROC_NULL: Send, Recv, Isend, Irecv, Sendrecv, Probe, Iprobe, Mprobe/Mrecv
        (status source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0);
     e. request arrays mixing threadcomm and MPI_COMM_WORLD requests (a message to this very
        process on MPI_COMM_WORLD, tag by thread-rank) completed with Waitall, Waitany,
        Waitsome, Testall, Testany, Testsome;
     f. MPI_Cancel of a receive nothing matches (MPI_Test_cancelled true), then a message with
        that envelope goes to the next receive;
     g. persistent Send_init/Recv_init, Startall + Waitall 50 times and Start + Wait 20 times,
        the payload changing per iteration;
     h. synchronous send: an Issend must not complete (MPI_Test false) before its receive is
        posted, which happens only after a barrier the sender has not yet entered;
     i. truncation: MPI_Recv and MPI_Irecv + MPI_Wait of 10 ints into 5: MPI_ERR_TRUNCATE
        (error class) returned, then traffic goes on;
     j. derived datatypes: a vector (4 blocks of 2 ints, stride 5) received as 8 contiguous ints
        and 8 contiguous ints received into the vector (gaps untouched), MPI_Get_count per type;
     k. MPI_Cancel of sends: an eager Isend (8 ints), an Issend (8 ints) and a 64 KiB Isend to
        the right, each cancelled before its receive is posted (a barrier between): to a
        thread-rank of this process each is cancelled (MPI_Test_cancelled true), the receiver's
        receive for it finds nothing and is itself cancelled; to another process the cancel may
        fail, and the sender tells the receiver which messages it must still take (data checked);
        then Iprobe finds none of the three envelopes;
     l. buffered sends take room in the buffer the process attached (thread-ranks share it): thread
        0 of each process detaches the big buffer (its address and size come back), MPI_Bsend
        then fails with MPI_ERR_BUFFER; it attaches one for 100 ints: MPI_Bsend and MPI_Ibsend of
        101 ints fail with MPI_ERR_BUFFER (Ibsend's at its start or its wait), 100 ints to itself
        go twice (a message to this process leaves the buffer once copied; data and status
        checked); detach returns the small buffer and its size; the big one is attached again.
        The other thread-ranks wait at barriers. */
#include <omp.h>

#include "ranks_util.h"

enum { kLarge = 16384 /* ints: 64 KiB */ };

static MPI_Comm tc;
static int N, T, offset;

#define STAGE(name)                       \
  do {                                    \
    if (r == offset) rk_set_stage(name); \
    MPI_OK(MPI_Barrier(tc));              \
  } while (0)

static void check_status(MPI_Status* st, int src, int tag, int count, MPI_Datatype type, const char* what) {
  int c = -1;
  MPI_Get_count(st, type, &c);
  CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && c == count,
        "%s: status source %d tag %d count %d, expected %d %d %d", what, st->MPI_SOURCE, st->MPI_TAG, c, src, tag, count);
}

static void part_modes(int r, int left, int right, int round) {
  static const char* names[8] = {"Send", "Ssend", "Rsend", "Bsend", "Isend", "Issend", "Irsend", "Ibsend"};
  static const int sizes[3] = {0, 1, kLarge};
  int* sbuf = malloc(kLarge * sizeof(int));
  int* rbuf = malloc(kLarge * sizeof(int));
  for (int m = 0; m < 8; ++m)
    for (int z = 0; z < 3; ++z) {
      int n = sizes[z], tag = 10 + m * 3 + z;
      MPI_Request rq = MPI_REQUEST_NULL, sq = MPI_REQUEST_NULL;
      memset(rbuf, 0xee, kLarge * sizeof(int));
      MPI_OK(MPI_Irecv(rbuf, n, MPI_INT, left, tag, tc, &rq));
      MPI_OK(MPI_Barrier(tc)); /* every receive of this step is posted: Rsend is legal */
      pattern_fill(sbuf, n, r, right, tag, round);
      switch (m) {
        case 0: MPI_OK(MPI_Send(sbuf, n, MPI_INT, right, tag, tc)); break;
        case 1: MPI_OK(MPI_Ssend(sbuf, n, MPI_INT, right, tag, tc)); break;
        case 2: MPI_OK(MPI_Rsend(sbuf, n, MPI_INT, right, tag, tc)); break;
        case 3: MPI_OK(MPI_Bsend(sbuf, n, MPI_INT, right, tag, tc)); break;
        case 4: MPI_OK(MPI_Isend(sbuf, n, MPI_INT, right, tag, tc, &sq)); break;
        case 5: MPI_OK(MPI_Issend(sbuf, n, MPI_INT, right, tag, tc, &sq)); break;
        case 6: MPI_OK(MPI_Irsend(sbuf, n, MPI_INT, right, tag, tc, &sq)); break;
        case 7: MPI_OK(MPI_Ibsend(sbuf, n, MPI_INT, right, tag, tc, &sq)); break;
      }
      MPI_Status st;
      MPI_OK(MPI_Wait(&rq, &st));
      MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
      CHECK(rq == MPI_REQUEST_NULL && sq == MPI_REQUEST_NULL, "%s: requests not MPI_REQUEST_NULL after MPI_Wait", names[m]);
      char what[64];
      snprintf(what, sizeof what, "%s of %d ints", names[m], n);
      check_status(&st, left, tag, n, MPI_INT, what);
      int bad = pattern_verify(rbuf, n, left, r, tag, round);
      CHECK(bad < 0, "%s: element %d is %d, expected %d", what, bad, bad < 0 ? 0 : rbuf[bad], bad < 0 ? 0 : pattern_val(left, r, tag, round, bad));
      if (n < kLarge) CHECK(rbuf[n] == (int)0xeeeeeeee, "%s: wrote past the count", what);
    }
  free(sbuf);
  free(rbuf);
}

static void part_sendrecv(int r, int left, int right, int round) {
  static const int sizes[3] = {0, 10, kLarge};
  int* sbuf = malloc(kLarge * sizeof(int));
  int* rbuf = malloc(kLarge * sizeof(int));
  for (int z = 0; z < 3; ++z) {
    int n = sizes[z], tag = 40 + z;
    MPI_Status st;
    pattern_fill(sbuf, n, r, right, tag, round);
    MPI_OK(MPI_Sendrecv(sbuf, n, MPI_INT, right, tag, rbuf, kLarge, MPI_INT, left, tag, tc, &st));
    check_status(&st, left, tag, n, MPI_INT, "Sendrecv");
    CHECK(pattern_verify(rbuf, n, left, r, tag, round) < 0, "Sendrecv of %d ints: wrong data", n);
    /* Sendrecv_replace: the buffer goes right and comes back from the left. */
    pattern_fill(sbuf, n, r, right, tag + 10, round);
    MPI_OK(MPI_Sendrecv_replace(sbuf, n, MPI_INT, right, tag + 10, left, tag + 10, tc, &st));
    check_status(&st, left, tag + 10, n, MPI_INT, "Sendrecv_replace");
    CHECK(pattern_verify(sbuf, n, left, r, tag + 10, round) < 0, "Sendrecv_replace of %d ints: wrong data", n);
  }
  free(sbuf);
  free(rbuf);
}

static int pair_count(int a, int b) { return (a + 2 * b) % 3 == 0 ? kLarge : (a * 5 + b) % 7; }

static void part_all_pairs(int r, int round) {
  int** sb = malloc(N * sizeof *sb);
  int** rb = malloc(N * sizeof *rb);
  MPI_Request* rq = malloc(2 * N * sizeof *rq);
  MPI_Status* st = malloc(2 * N * sizeof *st);
  for (int p = 0; p < N; ++p) {
    rb[p] = malloc((pair_count(p, r) + 1) * sizeof(int));
    MPI_OK(MPI_Irecv(rb[p], pair_count(p, r), MPI_INT, p, 70, tc, &rq[p]));
  }
  for (int k = 0; k < N; ++k) {
    int p = (r + k) % N; /* self first, then around the ring */
    int n = pair_count(r, p);
    sb[p] = malloc((n + 1) * sizeof(int));
    pattern_fill(sb[p], n, r, p, 70, round);
    MPI_OK(MPI_Isend(sb[p], n, MPI_INT, p, 70, tc, &rq[N + p]));
  }
  MPI_OK(MPI_Waitall(2 * N, rq, st));
  for (int p = 0; p < N; ++p) {
    check_status(&st[p], p, 70, pair_count(p, r), MPI_INT, "all pairs");
    int bad = pattern_verify(rb[p], pair_count(p, r), p, r, 70, round);
    CHECK(bad < 0, "all pairs: from %d element %d wrong", p, bad);
    CHECK(rq[p] == MPI_REQUEST_NULL && rq[N + p] == MPI_REQUEST_NULL, "all pairs: request not freed by Waitall");
    free(rb[p]);
    free(sb[p]);
  }
  free(sb);
  free(rb);
  free(rq);
  free(st);
}

/* MPICH before 4.2 completes an MPI_Irecv from MPI_PROC_NULL with source 0 and tag 0
   (pmodels/mpich#6805); as tests/mpi/probe_edges.c does, that status is accepted for that MPI
   (decided by its version string) and for MPI_Irecv only. */
static int mpich_null_quirk;
static void detect_quirks(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len, major = 0, minor = 0;
  MPI_Get_library_version(v, &len);
  const char* m = strstr(v, "MPICH Version:");
  if (m && sscanf(m + strlen("MPICH Version:"), " %d.%d", &major, &minor) == 2 && (major < 4 || (major == 4 && minor < 2)))
    mpich_null_quirk = 1;
}
static void check_null_status_q(MPI_Status* st, const char* what, int irecv_quirk) {
  int c = -1;
  MPI_Get_count(st, MPI_INT, &c);
  int ok = st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && c == 0;
  if (irecv_quirk && mpich_null_quirk) ok |= st->MPI_SOURCE == 0 && st->MPI_TAG == 0 && c == 0;
  CHECK(ok, "%s: status source %d tag %d count %d, expected MPI_PROC_NULL, MPI_ANY_TAG, 0", what, st->MPI_SOURCE,
        st->MPI_TAG, c);
}
static void check_null_status(MPI_Status* st, const char* what) { check_null_status_q(st, what, 0); }

static void part_proc_null(void) {
  int buf[4] = {1, 2, 3, 4};
  MPI_Status st;
  MPI_Request rq;
  MPI_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, tc));
  MPI_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, tc, &st));
  check_null_status(&st, "Recv(MPI_PROC_NULL)");
  CHECK(buf[0] == 1 && buf[3] == 4, "Recv(MPI_PROC_NULL) wrote the buffer");
  MPI_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, tc, &rq));
  MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, tc, &rq));
  MPI_OK(MPI_Wait(&rq, &st));
  check_null_status_q(&st, "Irecv(MPI_PROC_NULL)", 1);
  MPI_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1, tc, &st));
  check_null_status(&st, "Sendrecv(MPI_PROC_NULL)");
  MPI_OK(MPI_Probe(MPI_PROC_NULL, 1, tc, &st));
  check_null_status(&st, "Probe(MPI_PROC_NULL)");
  int flag = 0;
  MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 1, tc, &flag, &st));
  CHECK(flag, "Iprobe(MPI_PROC_NULL) flag false");
  check_null_status(&st, "Iprobe(MPI_PROC_NULL)");
  MPI_Message msg = MPI_MESSAGE_NULL;
  MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 1, tc, &msg, &st));
  CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) message is not MPI_MESSAGE_NO_PROC");
  check_null_status(&st, "Mprobe(MPI_PROC_NULL)");
  MPI_OK(MPI_Mrecv(buf, 4, MPI_INT, &msg, &st));
  check_null_status(&st, "Mrecv(MPI_MESSAGE_NO_PROC)");
  CHECK(buf[0] == 1 && buf[3] == 4, "PROC_NULL receives wrote the buffer");
}

/* e: [0] Irecv on tc from the left, [1] Irecv on MPI_COMM_WORLD from this process, [2] Isend
   on tc to the right, [3] Isend on MPI_COMM_WORLD to this process; tags by thread-rank. */
static void part_mixed(int r, int left, int right, int round) {
  static const char* how[6] = {"Waitall", "Waitany", "Waitsome", "Testall", "Testany", "Testsome"};
  for (int w = 0; w < 6; ++w) {
    int tcs[64], tcr[64] = {0}, ws[64], wr[64] = {0};
    int n = 16 + w;
    int ttag = 100 + w, wtag = 1000 + 64 * w + r;
    pattern_fill(tcs, n, r, right, ttag, round);
    pattern_fill(ws, n, r, r, wtag, round);
    MPI_Request rq[4];
    MPI_Status st[4];
    int done[4] = {0, 0, 0, 0};
    MPI_OK(MPI_Irecv(tcr, 64, MPI_INT, left, ttag, tc, &rq[0]));
    MPI_OK(MPI_Irecv(wr, 64, MPI_INT, rk_wrank, wtag, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Isend(tcs, n, MPI_INT, right, ttag, tc, &rq[2]));
    MPI_OK(MPI_Isend(ws, n, MPI_INT, rk_wrank, wtag, MPI_COMM_WORLD, &rq[3]));
    int completed = 0, spins = 0;
    switch (w) {
      case 0:
        MPI_OK(MPI_Waitall(4, rq, st));
        completed = 4;
        for (int i = 0; i < 4; ++i) done[i] = 1;
        break;
      case 1:
        while (completed < 4) {
          int idx = -1;
          MPI_Status s1;
          MPI_OK(MPI_Waitany(4, rq, &idx, &s1));
          CHECK(idx >= 0 && idx < 4 && !done[idx], "Waitany index %d", idx);
          if (idx < 0 || idx >= 4 || done[idx]) break;
          done[idx] = 1;
          st[idx] = s1;
          ++completed;
        }
        break;
      case 2:
        while (completed < 4) {
          int outc = -1, idx[4];
          MPI_Status s4[4];
          MPI_OK(MPI_Waitsome(4, rq, &outc, idx, s4));
          CHECK(outc >= 1 && outc <= 4, "Waitsome outcount %d", outc);
          if (outc < 1 || outc > 4) break;
          for (int i = 0; i < outc; ++i) {
            CHECK(!done[idx[i]], "Waitsome gave index %d twice", idx[i]);
            done[idx[i]] = 1;
            st[idx[i]] = s4[i];
            ++completed;
          }
        }
        break;
      case 3: {
        int flag = 0;
        while (!flag) {
          MPI_OK(MPI_Testall(4, rq, &flag, st));
          ++spins;
        }
        completed = 4;
        for (int i = 0; i < 4; ++i) done[i] = 1;
        break;
      }
      case 4:
        while (completed < 4) {
          int idx = -1, flag = 0;
          MPI_Status s1;
          MPI_OK(MPI_Testany(4, rq, &idx, &flag, &s1));
          if (!flag) continue;
          CHECK(idx >= 0 && idx < 4 && !done[idx], "Testany index %d", idx);
          if (idx < 0 || idx >= 4 || done[idx]) break;
          done[idx] = 1;
          st[idx] = s1;
          ++completed;
        }
        break;
      case 5:
        while (completed < 4) {
          int outc = -1, idx[4];
          MPI_Status s4[4];
          MPI_OK(MPI_Testsome(4, rq, &outc, idx, s4));
          CHECK(outc >= 0 && outc <= 4, "Testsome outcount %d", outc);
          if (outc < 0 || outc > 4) break;
          for (int i = 0; i < outc; ++i) {
            CHECK(!done[idx[i]], "Testsome gave index %d twice", idx[i]);
            done[idx[i]] = 1;
            st[idx[i]] = s4[i];
            ++completed;
          }
        }
        break;
    }
    CHECK(completed == 4, "%s completed %d of 4", how[w], completed);
    for (int i = 0; i < 4; ++i) CHECK(rq[i] == MPI_REQUEST_NULL, "%s: request %d not freed", how[w], i);
    char what[64];
    snprintf(what, sizeof what, "%s threadcomm receive", how[w]);
    if (done[0]) check_status(&st[0], left, ttag, n, MPI_INT, what);
    snprintf(what, sizeof what, "%s MPI_COMM_WORLD receive", how[w]);
    if (done[1]) check_status(&st[1], rk_wrank, wtag, n, MPI_INT, what);
    CHECK(pattern_verify(tcr, n, left, r, ttag, round) < 0, "%s: threadcomm data wrong", how[w]);
    CHECK(pattern_verify(wr, n, r, r, wtag, round) < 0, "%s: MPI_COMM_WORLD data wrong", how[w]);
    (void)spins;
  }
}

static void part_cancel(int r, int left, int right, int round) {
  MPI_Request rq;
  MPI_Status st;
  int buf[8], flag = 0;
  MPI_OK(MPI_Irecv(buf, 8, MPI_INT, left, 999, tc, &rq));
  MPI_OK(MPI_Cancel(&rq));
  MPI_OK(MPI_Wait(&rq, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag, "MPI_Test_cancelled false for a receive nothing matched (source %d)", left);
  MPI_OK(MPI_Irecv(buf, 8, MPI_INT, MPI_ANY_SOURCE, 998, tc, &rq));
  MPI_OK(MPI_Cancel(&rq));
  MPI_OK(MPI_Wait(&rq, &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag, "MPI_Test_cancelled false for an MPI_ANY_SOURCE receive nothing matched");
  MPI_OK(MPI_Barrier(tc));
  /* The cancelled receives must not take these. */
  int out[8];
  pattern_fill(out, 8, r, right, 999, round);
  MPI_OK(MPI_Sendrecv(out, 8, MPI_INT, right, 999, buf, 8, MPI_INT, left, 999, tc, &st));
  check_status(&st, left, 999, 8, MPI_INT, "after cancel");
  CHECK(pattern_verify(buf, 8, left, r, 999, round) < 0, "after cancel: wrong data");
}

static void part_persistent(int r, int left, int right, int round) {
  int sbuf[100], rbuf[100];
  MPI_Request rq[2];
  MPI_Status st[2];
  MPI_OK(MPI_Recv_init(rbuf, 100, MPI_INT, left, 400, tc, &rq[0]));
  MPI_OK(MPI_Send_init(sbuf, 100, MPI_INT, right, 400, tc, &rq[1]));
  for (int it = 0; it < 50; ++it) {
    pattern_fill(sbuf, 100, r, right, 400, round * 1000 + it);
    memset(rbuf, 0, sizeof rbuf);
    MPI_OK(MPI_Startall(2, rq));
    MPI_OK(MPI_Waitall(2, rq, st));
    check_status(&st[0], left, 400, 100, MPI_INT, "persistent Startall");
    CHECK(pattern_verify(rbuf, 100, left, r, 400, round * 1000 + it) < 0, "persistent iteration %d: wrong data", it);
    CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "persistent request freed by Waitall");
  }
  for (int it = 0; it < 20; ++it) {
    pattern_fill(sbuf, 100, r, right, 400, round * 1000 + 500 + it);
    MPI_OK(MPI_Start(&rq[0]));
    MPI_OK(MPI_Start(&rq[1]));
    MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&rq[0], &st[0]));
    check_status(&st[0], left, 400, 100, MPI_INT, "persistent Start");
    CHECK(pattern_verify(rbuf, 100, left, r, 400, round * 1000 + 500 + it) < 0, "persistent Start iteration %d: wrong data", it);
  }
  MPI_OK(MPI_Request_free(&rq[0]));
  MPI_OK(MPI_Request_free(&rq[1]));
}

static void part_ssend(int r, int left, int right, int round) {
  int out[4], in[4];
  MPI_Request sq;
  pattern_fill(out, 4, r, right, 500, round);
  MPI_OK(MPI_Issend(out, 4, MPI_INT, right, 500, tc, &sq));
  int early = 0;
  for (int i = 0; i < 5; ++i) {
    int flag = 0;
    MPI_OK(MPI_Test(&sq, &flag, MPI_STATUS_IGNORE));
    if (flag) early = 1;
    usleep(1000);
  }
  CHECK(!early, "MPI_Issend to %d completed before the receive was posted", right);
  MPI_OK(MPI_Barrier(tc)); /* receives are posted only after this */
  MPI_Status st;
  MPI_OK(MPI_Recv(in, 4, MPI_INT, left, 500, tc, &st));
  check_status(&st, left, 500, 4, MPI_INT, "Issend receive");
  CHECK(pattern_verify(in, 4, left, r, 500, round) < 0, "Issend: wrong data");
  if (!early) MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
}

static void* g_bbuf;
static int g_bsize;

static void part_bsend_room(int r, int round) {
  MPI_OK(MPI_Barrier(tc));
  if (omp_get_thread_num() == 0) {
    void* big = NULL;
    int big_size = -1;
    MPI_OK(MPI_Buffer_detach(&big, &big_size));
    CHECK(big == g_bbuf && big_size == g_bsize, "MPI_Buffer_detach: %p, %d bytes, expected %p, %d", big, big_size, g_bbuf, g_bsize);
    int one = r;
    int rc = MPI_Bsend(&one, 1, MPI_INT, r, 700, tc);
    CHECK(rk_error_class(rc) == MPI_ERR_BUFFER, "MPI_Bsend with no buffer attached: class %d, expected MPI_ERR_BUFFER", rk_error_class(rc));
    const int small_size = 100 * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char* small = malloc(small_size);
    MPI_OK(MPI_Buffer_attach(small, small_size));
    int out[101], in[101];
    pattern_fill(out, 101, r, r, 701, round);
    rc = MPI_Bsend(out, 101, MPI_INT, r, 701, tc);
    CHECK(rk_error_class(rc) == MPI_ERR_BUFFER, "MPI_Bsend of 101 ints into a buffer for 100: class %d, expected MPI_ERR_BUFFER", rk_error_class(rc));
    MPI_Request q = MPI_REQUEST_NULL;
    rc = MPI_Ibsend(out, 101, MPI_INT, r, 701, tc, &q);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE); /* reported at the start or the wait */
    CHECK(rk_error_class(rc) == MPI_ERR_BUFFER, "MPI_Ibsend of 101 ints into a buffer for 100: class %d, expected MPI_ERR_BUFFER", rk_error_class(rc));
    for (int k = 0; k < 2; ++k) {
      MPI_Status st;
      MPI_OK(MPI_Bsend(out, 100, MPI_INT, r, 702 + k, tc));
      MPI_OK(MPI_Recv(in, 101, MPI_INT, r, 702 + k, tc, &st));
      check_status(&st, r, 702 + k, 100, MPI_INT, "Bsend of 100 ints into a buffer for 100");
      CHECK(pattern_verify(in, 100, r, r, 701, round) < 0, "Bsend of 100 ints into a buffer for 100: wrong data");
    }
    int flag = 1;
    MPI_OK(MPI_Iprobe(r, 701, tc, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a buffered send that failed with MPI_ERR_BUFFER sent its message");
    void* back = NULL;
    int back_size = -1;
    MPI_OK(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == small && back_size == small_size, "MPI_Buffer_detach: %p, %d bytes, expected %p, %d", back, back_size, (void*)small, small_size);
    free(small);
    MPI_OK(MPI_Buffer_attach(big, big_size));
  }
  MPI_OK(MPI_Barrier(tc));
}

static void part_truncate(int r, int left, int right, int round) {
  int out[10], in[10];
  MPI_Request sq, rq;
  MPI_Status st;
  pattern_fill(out, 10, r, right, 600, round);
  MPI_OK(MPI_Isend(out, 10, MPI_INT, right, 600, tc, &sq));
  int rc = MPI_Recv(in, 5, MPI_INT, left, 600, tc, &st);
  CHECK(rk_error_class(rc) == MPI_ERR_TRUNCATE, "MPI_Recv of 10 ints into 5: class %d, expected MPI_ERR_TRUNCATE", rk_error_class(rc));
  MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Isend(out, 10, MPI_INT, right, 601, tc, &sq));
  MPI_OK(MPI_Irecv(in, 5, MPI_INT, left, 601, tc, &rq));
  rc = MPI_Wait(&rq, &st);
  CHECK(rk_error_class(rc) == MPI_ERR_TRUNCATE, "MPI_Wait on an Irecv of 10 ints into 5: class %d, expected MPI_ERR_TRUNCATE", rk_error_class(rc));
  MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  /* Traffic goes on. */
  MPI_OK(MPI_Sendrecv(out, 10, MPI_INT, right, 602, in, 10, MPI_INT, left, 602, tc, &st));
  CHECK(pattern_verify(in, 10, left, r, 600, round) < 0, "after truncation: wrong data");
  check_status(&st, left, 602, 10, MPI_INT, "after truncation");
}

static void part_datatypes(int r, int left, int right, int round) {
  MPI_Datatype vec;
  MPI_OK(MPI_Type_vector(4, 2, 5, MPI_INT, &vec));
  MPI_OK(MPI_Type_commit(&vec));
  int strided[20], flat[8], expect[8];
  for (int i = 0; i < 20; ++i) strided[i] = -1;
  pattern_fill(expect, 8, r, right, 700, round);
  for (int b = 0, k = 0; b < 4; ++b)
    for (int j = 0; j < 2; ++j) strided[b * 5 + j] = expect[k++];
  MPI_Status st;
  MPI_OK(MPI_Sendrecv(strided, 1, vec, right, 700, flat, 8, MPI_INT, left, 700, tc, &st));
  check_status(&st, left, 700, 8, MPI_INT, "vector sent, ints received");
  CHECK(pattern_verify(flat, 8, left, r, 700, round) < 0, "vector -> contiguous: wrong data");
  /* 8 contiguous ints into the vector: the gaps keep their value. */
  int back[20];
  for (int i = 0; i < 20; ++i) back[i] = 12345;
  pattern_fill(flat, 8, r, right, 701, round);
  MPI_OK(MPI_Sendrecv(flat, 8, MPI_INT, right, 701, back, 1, vec, left, 701, tc, &st));
  check_status(&st, left, 701, 1, vec, "ints sent, vector received");
  pattern_fill(expect, 8, left, r, 701, round);
  for (int b = 0, k = 0; b < 4; ++b)
    for (int j = 0; j < 5; ++j) {
      int want = j < 2 ? expect[k++] : 12345;
      CHECK(back[b * 5 + j] == want, "contiguous -> vector: element %d is %d, expected %d", b * 5 + j, back[b * 5 + j], want);
    }
  MPI_OK(MPI_Type_free(&vec));
}

static void part_send_cancel(int r, int left, int right, int round) {
  static const char* names[3] = {"eager Isend", "Issend", "64 KiB Isend"};
  static const int counts[3] = {8, 8, kLarge};
  int* sbuf[3];
  int* rbuf[3];
  MPI_Request sq[3], rq[3];
  MPI_Status st[3];
  int cancelled[3], theirs[3];
  for (int i = 0; i < 3; ++i) {
    sbuf[i] = malloc(counts[i] * sizeof(int));
    rbuf[i] = malloc(counts[i] * sizeof(int));
    pattern_fill(sbuf[i], counts[i], r, right, 990 + i, round);
  }
  MPI_OK(MPI_Isend(sbuf[0], counts[0], MPI_INT, right, 990, tc, &sq[0]));
  MPI_OK(MPI_Issend(sbuf[1], counts[1], MPI_INT, right, 991, tc, &sq[1]));
  MPI_OK(MPI_Isend(sbuf[2], counts[2], MPI_INT, right, 992, tc, &sq[2]));
  for (int i = 0; i < 3; ++i) MPI_OK(MPI_Cancel(&sq[i]));
  MPI_OK(MPI_Barrier(tc)); /* every cancel was made before any receive is posted */
  for (int i = 0; i < 3; ++i) MPI_OK(MPI_Irecv(rbuf[i], counts[i], MPI_INT, left, 990 + i, tc, &rq[i]));
  /* A send to another process that was not cancelled completes once its receive is posted. */
  MPI_OK(MPI_Waitall(3, sq, st));
  const int right_here = right >= offset && right < offset + T;
  for (int i = 0; i < 3; ++i) {
    MPI_OK(MPI_Test_cancelled(&st[i], &cancelled[i]));
    CHECK(!right_here || cancelled[i], "%s to thread-rank %d of this process: not cancelled", names[i], right);
  }
  MPI_OK(MPI_Sendrecv(cancelled, 3, MPI_INT, right, 995, theirs, 3, MPI_INT, left, 995, tc, MPI_STATUS_IGNORE));
  for (int i = 0; i < 3; ++i) {
    char what[64];
    snprintf(what, sizeof what, "receive of a %s %s", theirs[i] ? "cancelled" : "not cancelled", names[i]);
    if (theirs[i]) MPI_OK(MPI_Cancel(&rq[i]));
    MPI_OK(MPI_Wait(&rq[i], &st[i]));
    int flag = -1;
    MPI_OK(MPI_Test_cancelled(&st[i], &flag));
    CHECK(flag == theirs[i], "%s: MPI_Test_cancelled %d", what, flag);
    if (!theirs[i]) {
      check_status(&st[i], left, 990 + i, counts[i], MPI_INT, what);
      CHECK(pattern_verify(rbuf[i], counts[i], left, r, 990 + i, round) < 0, "%s: wrong data", what);
    }
  }
  for (int i = 0; i < 3; ++i) {
    int flag = 1;
    MPI_OK(MPI_Iprobe(left, 990 + i, tc, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message of tag %d (%s) is still there after its cancel", 990 + i, names[i]);
    free(sbuf[i]);
    free(rbuf[i]);
  }
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_p2p_modes");
  if (argc < 3) {
    rk_say("usage: rk_p2p_modes ROUNDS SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  T = rk_threads_of(argv[2], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  detect_quirks();
  /* The attached buffer: T threads, each with 64 KiB Bsend and Ibsend possibly in flight. */
  int bsize = T * 4 * (kLarge * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  void* bbuf = malloc(bsize);
  MPI_Buffer_attach(bbuf, bsize);
  g_bbuf = bbuf;
  g_bsize = bsize;
  rk_set_stage("MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
  for (int round = 0; round < rounds; ++round) {
#pragma omp parallel num_threads(T)
    {
      if (omp_get_num_threads() != T) MPI_Abort(MPI_COMM_WORLD, 5);
      MPI_OK(MPIX_Threadcomm_start(tc));
      int r = -1, n = -1;
      MPI_Comm_rank(tc, &r);
      MPI_Comm_size(tc, &n);
      rk_my = r;
      CHECK(n == N, "size %d, expected %d", n, N);
      int left = (r - 1 + N) % N, right = (r + 1) % N;
      STAGE("a. modes");
      part_modes(r, left, right, round);
      STAGE("b. sendrecv");
      part_sendrecv(r, left, right, round);
      STAGE("c. all pairs");
      part_all_pairs(r, round);
      STAGE("d. proc_null");
      part_proc_null();
      STAGE("e. mixed requests");
      part_mixed(r, left, right, round);
      STAGE("f. cancel");
      part_cancel(r, left, right, round);
      STAGE("g. persistent");
      part_persistent(r, left, right, round);
      STAGE("h. synchronous");
      part_ssend(r, left, right, round);
      STAGE("i. truncation");
      part_truncate(r, left, right, round);
      STAGE("j. datatypes");
      part_datatypes(r, left, right, round);
      STAGE("k. send cancel");
      part_send_cancel(r, left, right, round);
      STAGE("l. buffered-send room");
      part_bsend_room(r, round);
      STAGE("end of region");
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  int bs;
  MPI_Buffer_detach(&bbuf, &bs);
  free(bbuf);
  rk_say("rk_p2p_modes: rank %d: %d threads of %d thread-ranks, %d rounds\n", rk_wrank, T, N, rounds);
  return rk_finish();
}

/* asp_p2p: point-to-point between MPI processes of one and of different address spaces, every
   MPI process with several threads (MPI_THREAD_MULTIPLE within an MPI process).

   usage: asp_p2p [T [M [bsend|nobsend]]]   T threads attached to each MPI process (default 3),
                            M messages per sending thread and destination (default 8); nobsend
                            leaves out MPI_Bsend/MPI_Ibsend and the buffer each MPI process attaches

   The main thread initializes at MPIX_THREAD_ATTACH and starts K*T pthreads; thread t attaches
   to index t % K (its "role" is t / K). R = world rank, N = world size; tags carry the role,
   so the threads of an MPI process never take each other's messages unless a part says so.
     a. modes: ring R -> R+1 in every send mode, blocking and nonblocking (Send, Ssend, Bsend,
        Rsend, Isend, Issend, Ibsend, Irsend), 16 ints and 50000 ints (eager and rendezvous);
        the receive is posted first (so sends to oneself with N = 1 complete), Rsend after a
        "ready" message from the receiver; Bsend from a buffer each MPI process attaches itself;
        then MPI_Sendrecv and MPI_Sendrecv_replace around the ring; with the buffer detached, a
        buffered send with none attached and one larger than a new small buffer fail with
        MPI_ERR_BUFFER, one that fits it exactly goes (to the MPI process itself);
     b. order with MPI_ANY_SOURCE: every thread sends M numbered messages (8-12 ints) to every
        rank, itself included; the same role there receives them with (MPI_ANY_SOURCE, its tag):
        source, tag, MPI_Get_count, contents, and the numbers rise by one per source;
     c. (MPI_ANY_SOURCE, MPI_ANY_TAG) from every thread of the MPI process at once: each message
        (header: source, destination, tag, number) received exactly once over the process;
     d. probe -> allocate -> receive of sizes the receiver does not know (4 .. 20000 ints):
        MPI_Probe(ANY_SOURCE, ANY_TAG) + MPI_Recv(status source, status tag), MPI_Mprobe +
        MPI_Mrecv, an MPI_Iprobe loop + MPI_Recv, an MPI_Improbe loop + MPI_Imrecv + MPI_Wait,
        MPI_Probe + MPI_Recv_init(status source, status tag) + MPI_Start + MPI_Wait, from all threads of the MPI process at once: the message received is the one probed
        (count, header), each exactly once (no false match: tsmpi makes probe -> receive atomic
        per thread);
     e. MPI_Isend/MPI_Irecv to and from every rank, one MPI_Waitall;
     f. persistent MPI_Send_init/MPI_Ssend_init + MPI_Recv_init ring, MPI_Startall 5 times with
        new contents, MPI_Request_free.
   Parts are separated by MPI_Barrier (one thread per MPI process). The verdict comes from role
   0 of each MPI process; the main thread finalizes every MPI process after joining. */
#include <pthread.h>

#include "asp_util.h"

enum { kLarge = 50000, kProbeMax = 20000, kModes = 8 };
static int T = 3, M = 8, bsend = 1;
static pthread_barrier_t proc_barrier[ASP_MAXK], all_barrier;
static atomic_int* seen[ASP_MAXK]; /* per MPI process: [source][role][number] for parts c, d */

/* Every thread of the MPI process has finished the previous part; then all MPI processes. */
static void stage(int role, const char* name) {
  pthread_barrier_wait(&proc_barrier[asp_idx]);
  if (role == 0) {
    if (asp_idx == 0) asp_set_stage(name);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  pthread_barrier_wait(&proc_barrier[asp_idx]);
}

static const char* mode_name[kModes] = {"Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend"};

static void part_modes(int role) {
  int R = asp_rank, N = asp_N, right = (R + 1) % N, left = (R + N - 1) % N;
  int* out = malloc(sizeof(int) * kLarge);
  int* in = malloc(sizeof(int) * kLarge);
  for (int mode = 0; mode < kModes; ++mode)
    for (int large = 0; large < 2; ++large) {
      if (!bsend && (mode == 2 || mode == 6)) continue;
      int n = large ? kLarge : 16, tag = 100 + (mode * 2 + large) * 16 + role;
      MPI_Request rq, sq = MPI_REQUEST_NULL;
      MPI_Status st;
      pattern_fill(out, n, R, right, tag, 0);
      MPI_OK(MPI_Irecv(in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &rq));
      if (mode == 3 || mode == 7) { /* ready modes: the receiver tells us it has posted */
        MPI_Request ready;
        MPI_OK(MPI_Isend(NULL, 0, MPI_INT, left, 80 + role, MPI_COMM_WORLD, &ready));
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, right, 80 + role, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&ready, MPI_STATUS_IGNORE));
      }
      switch (mode) {
        case 0: MPI_OK(MPI_Send(out, n, MPI_INT, right, tag, MPI_COMM_WORLD)); break;
        case 1: MPI_OK(MPI_Ssend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD)); break;
        case 2: MPI_OK(MPI_Bsend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD)); break;
        case 3: MPI_OK(MPI_Rsend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD)); break;
        case 4: MPI_OK(MPI_Isend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq)); break;
        case 5: MPI_OK(MPI_Issend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq)); break;
        case 6: MPI_OK(MPI_Ibsend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq)); break;
        case 7: MPI_OK(MPI_Irsend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq)); break;
      }
      MPI_OK(MPI_Wait(&rq, &st));
      MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
      int cnt = -1, bad = pattern_verify(in, n, left, R, tag, 0);
      MPI_Get_count(&st, MPI_INT, &cnt);
      CHECK(bad < 0 && cnt == n && st.MPI_SOURCE == left && st.MPI_TAG == tag,
            "%s of %d ints from %d: count %d source %d tag %d, first wrong element %d", mode_name[mode],
            n, left, cnt, st.MPI_SOURCE, st.MPI_TAG, bad);
    }
  /* MPI_Sendrecv and MPI_Sendrecv_replace around the ring, large. */
  for (int replace = 0; replace < 2; ++replace) {
    int tag = 1000 + role + 16 * replace, cnt = -1;
    MPI_Status st;
    pattern_fill(out, kLarge, R, right, tag, 2);
    if (replace) {
      MPI_OK(MPI_Sendrecv_replace(out, kLarge, MPI_INT, right, tag, left, tag, MPI_COMM_WORLD, &st));
      memcpy(in, out, sizeof(int) * kLarge);
    } else {
      MPI_OK(MPI_Sendrecv(out, kLarge, MPI_INT, right, tag, in, kLarge, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
    }
    int bad = pattern_verify(in, kLarge, left, R, tag, 2);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(bad < 0 && cnt == kLarge && st.MPI_SOURCE == left, "%s from %d: count %d source %d, first wrong element %d",
          replace ? "Sendrecv_replace" : "Sendrecv", left, cnt, st.MPI_SOURCE, bad);
  }
  free(out);
  free(in);
}

/* The attached buffer's room (role 0 of each MPI process, its buffer detached): a buffered send
   with no buffer attached, and one larger than the buffer, fail with MPI_ERR_BUFFER (nothing is
   sent); one that fits exactly (count * 4 + MPI_BSEND_OVERHEAD) goes, to this MPI process itself,
   and the detach gives the buffer back. */
static int error_class(int rc) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}
static void part_buffer_room(void) {
  enum { kFit = 100 };
  int R = asp_rank, out[kFit + 1], in[kFit + 1], cnt = -1;
  for (int j = 0; j <= kFit; ++j) out[j] = R * 1000 + j;
  int rc = MPI_Bsend(out, 1, MPI_INT, R, 90, MPI_COMM_WORLD);
  CHECK(error_class(rc) == MPI_ERR_BUFFER, "MPI_Bsend with no buffer attached: class %d, expected MPI_ERR_BUFFER",
        error_class(rc));
  int size = kFit * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
  char* buf = malloc(size);
  MPI_OK(MPI_Buffer_attach(buf, size));
  MPI_Request rq;
  rc = MPI_Ibsend(out, kFit + 1, MPI_INT, R, 91, MPI_COMM_WORLD, &rq);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK(error_class(rc) == MPI_ERR_BUFFER, "MPI_Ibsend of %d ints into a buffer for %d: class %d, expected MPI_ERR_BUFFER",
        kFit + 1, kFit, error_class(rc));
  MPI_OK(MPI_Bsend(out, kFit, MPI_INT, R, 92, MPI_COMM_WORLD));
  MPI_Status st;
  /* Tag 92 only: the process's other threads already send it part b's messages. A message of
     tag 90 or 91 (the failed sends) would show in the Iprobe below. */
  MPI_OK(MPI_Recv(in, kFit + 1, MPI_INT, R, 92, MPI_COMM_WORLD, &st));
  int flag = 1;
  MPI_OK(MPI_Iprobe(R, 90, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the MPI_Bsend that failed for want of a buffer sent a message");
  MPI_OK(MPI_Iprobe(R, 91, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "the MPI_Ibsend that failed for want of room sent a message");
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK(st.MPI_TAG == 92 && cnt == kFit && in[kFit - 1] == out[kFit - 1] && in[0] == out[0],
        "the buffered message that fits: tag %d count %d", st.MPI_TAG, cnt);
  void* b = NULL;
  int sz = -1;
  MPI_OK(MPI_Buffer_detach(&b, &sz));
  CHECK(b == buf && sz == size, "MPI_Buffer_detach gave %p %d, attached %p %d", b, sz, (void*)buf, size);
  free(buf);
}

static void part_order(int role) {
  int R = asp_rank, N = asp_N, tag = 200 + role;
  int (*out)[12] = malloc(sizeof(int[12]) * N * M);
  MPI_Request* sq = malloc(sizeof(MPI_Request) * N * M);
  for (int d = 0; d < N; ++d)
    for (int s = 0; s < M; ++s) {
      pattern_fill(out[d * M + s], 8 + s % 5, R, d, tag, s);
      MPI_OK(MPI_Isend(out[d * M + s], 8 + s % 5, MPI_INT, d, tag, MPI_COMM_WORLD, &sq[d * M + s]));
    }
  int* next = calloc(N, sizeof(int));
  for (int k = 0; k < N * M; ++k) {
    int in[12], cnt = -1;
    MPI_Status st;
    MPI_OK(MPI_Recv(in, 12, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    int src = st.MPI_SOURCE;
    if (src < 0 || src >= N || st.MPI_TAG != tag) {
      CHECK(0, "ANY_SOURCE receive: source %d tag %d", src, st.MPI_TAG);
      continue;
    }
    int s = next[src]++;
    CHECK(cnt == 8 + s % 5 && pattern_verify(in, cnt, src, R, tag, s) < 0,
          "message %d from %d (tag %d): count %d or contents are another message's (order broken?)", s, src, tag, cnt);
  }
  for (int s = 0; s < N; ++s) CHECK(next[s] == M, "%d messages from %d, expected %d", next[s], s, M);
  MPI_OK(MPI_Waitall(N * M, sq, MPI_STATUSES_IGNORE));
  free(next);
  free(sq);
  free(out);
}

/* Marks message (src, role, number) received by this MPI process; it must be the first time. */
static void mark(int src, int role, int num, const char* how) {
  if (src < 0 || src >= asp_N || role < 0 || role >= T || num < 0 || num >= M) {
    CHECK(0, "%s: header (source %d, role %d, number %d) out of range", how, src, role, num);
    return;
  }
  int c = atomic_fetch_add(&seen[asp_idx][(src * T + role) * M + num], 1);
  CHECK(c == 0, "%s: message %d of role %d of rank %d received twice", how, num, role, src);
}
static void check_all_seen(const char* how) {
  for (int k = 0; k < asp_N * T * M; ++k) {
    int c = atomic_exchange(&seen[asp_idx][k], 0);
    CHECK(c == 1, "%s: message %d of role %d of rank %d received %d times", how, k % M, (k / M) % T, k / M / T, c);
  }
}

/* Header of parts c and d: source, role, number, length; then pattern_fill data. */
static int probe_len(int src, int role, int num) { return 4 + (num * 7919 + src * 31 + role * 17) % kProbeMax; }
static int* make_msg(int R, int d, int role, int num, int n, int tag) {
  int* m = malloc(sizeof(int) * n);
  m[0] = R, m[1] = role, m[2] = num, m[3] = n;
  pattern_fill(m + 4, n - 4, R, d, tag, num);
  return m;
}
static void check_msg(const int* m, int cnt, const MPI_Status* st, int tag, const char* how) {
  CHECK(cnt >= 4 && m[3] == cnt && m[0] == st->MPI_SOURCE && st->MPI_TAG == tag &&
            pattern_verify(m + 4, cnt - 4, m[0], asp_rank, tag, m[2]) < 0,
        "%s: received %d ints from %d tag %d, header says %d ints from %d", how, cnt, st->MPI_SOURCE,
        st->MPI_TAG, cnt >= 4 ? m[3] : -1, cnt >= 4 ? m[0] : -1);
  if (cnt >= 4) mark(m[0], m[1], m[2], how);
}

/* kind: 0 MPI_Recv(ANY_SOURCE, ANY_TAG); 1 Probe + Recv; 2 Mprobe + Mrecv; 3 Iprobe loop + Recv;
   4 Improbe loop + Imrecv + Wait; 5 Probe + Recv_init + Start + Wait. */
enum { kWildKinds = 6 };
static const char* wild_name[kWildKinds] = {"ANY_SOURCE+ANY_TAG", "Probe+Recv",     "Mprobe+Mrecv",
                                            "Iprobe+Recv",        "Improbe+Imrecv", "Probe+Recv_init+Start"};
static void part_wild(int role, int tag, int kind) {
  int R = asp_rank, N = asp_N, probe = kind > 0;
  int** out = malloc(sizeof(int*) * N * M);
  MPI_Request* sq = malloc(sizeof(MPI_Request) * N * M);
  for (int d = 0; d < N; ++d)
    for (int s = 0; s < M; ++s) {
      int n = probe ? probe_len(R, role, s) : 4 + s % 3;
      out[d * M + s] = make_msg(R, d, role, s, n, tag);
      MPI_OK(MPI_Isend(out[d * M + s], n, MPI_INT, d, tag, MPI_COMM_WORLD, &sq[d * M + s]));
    }
  const char* how = wild_name[kind];
  for (int k = 0; k < N * M; ++k) {
    MPI_Status st, pst;
    int cnt = -1, pcnt = -1, flag = 0;
    if (!probe) {
      int in[8];
      MPI_OK(MPI_Recv(in, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
      MPI_Get_count(&st, MPI_INT, &cnt);
      check_msg(in, cnt, &st, tag, how);
      continue;
    }
    MPI_Message msg = MPI_MESSAGE_NULL;
    switch (kind) {
      case 1:
      case 5: MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pst)); break;
      case 2: MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &pst)); break;
      case 3:
        while (!flag) MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &pst));
        break;
      case 4:
        while (!flag) MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &pst));
        break;
    }
    MPI_Get_count(&pst, MPI_INT, &pcnt);
    int* in = malloc(sizeof(int) * (pcnt > 0 ? pcnt : 1));
    if (kind == 2) {
      MPI_OK(MPI_Mrecv(in, pcnt, MPI_INT, &msg, &st));
    } else if (kind == 4) {
      MPI_Request rq;
      MPI_OK(MPI_Imrecv(in, pcnt, MPI_INT, &msg, &rq));
      MPI_OK(MPI_Wait(&rq, &st));
    } else if (kind == 5) { /* the persistent receive takes the message this thread probed */
      MPI_Request rq;
      MPI_OK(MPI_Recv_init(in, pcnt, MPI_INT, pst.MPI_SOURCE, pst.MPI_TAG, MPI_COMM_WORLD, &rq));
      MPI_OK(MPI_Start(&rq));
      MPI_OK(MPI_Wait(&rq, &st));
      MPI_OK(MPI_Request_free(&rq));
    } else {
      MPI_OK(MPI_Recv(in, pcnt, MPI_INT, pst.MPI_SOURCE, pst.MPI_TAG, MPI_COMM_WORLD, &st));
    }
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == pcnt && st.MPI_SOURCE == pst.MPI_SOURCE, "%s: probed %d ints from %d, received %d from %d",
          how, pcnt, pst.MPI_SOURCE, cnt, st.MPI_SOURCE);
    check_msg(in, cnt, &st, tag, how);
    free(in);
  }
  MPI_OK(MPI_Waitall(N * M, sq, MPI_STATUSES_IGNORE));
  for (int k = 0; k < N * M; ++k) free(out[k]);
  free(out);
  free(sq);
}

static void part_nonblocking(int role) {
  int R = asp_rank, N = asp_N, n = 1000, tag = 500 + role;
  int* out = malloc(sizeof(int) * n * N);
  int* in = malloc(sizeof(int) * n * N);
  MPI_Request* rq = malloc(sizeof(MPI_Request) * 2 * N);
  for (int s = 0; s < N; ++s) MPI_OK(MPI_Irecv(in + s * n, n, MPI_INT, s, tag, MPI_COMM_WORLD, &rq[s]));
  for (int d = 0; d < N; ++d) {
    pattern_fill(out + d * n, n, R, d, tag, 1);
    MPI_OK(MPI_Isend(out + d * n, n, MPI_INT, d, tag, MPI_COMM_WORLD, &rq[N + d]));
  }
  MPI_OK(MPI_Waitall(2 * N, rq, MPI_STATUSES_IGNORE));
  for (int s = 0; s < N; ++s) {
    int bad = pattern_verify(in + s * n, n, s, R, tag, 1);
    CHECK(bad < 0, "Irecv from %d: element %d wrong", s, bad);
  }
  free(rq);
  free(in);
  free(out);
}

static void part_persistent(int role) {
  int R = asp_rank, N = asp_N, n = 300, tag = 600 + role, right = (R + 1) % N, left = (R + N - 1) % N;
  int *out = malloc(sizeof(int) * n), *in = malloc(sizeof(int) * n);
  MPI_Request rq[2];
  MPI_OK(MPI_Recv_init(in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &rq[0]));
  if (role % 2)
    MPI_OK(MPI_Ssend_init(out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &rq[1]));
  else
    MPI_OK(MPI_Send_init(out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &rq[1]));
  for (int it = 0; it < 5; ++it) {
    pattern_fill(out, n, R, right, tag, it);
    MPI_OK(MPI_Startall(2, rq));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    int bad = pattern_verify(in, n, left, R, tag, it);
    CHECK(bad < 0, "persistent iteration %d from %d: element %d wrong", it, left, bad);
  }
  MPI_OK(MPI_Request_free(&rq[0]));
  MPI_OK(MPI_Request_free(&rq[1]));
  free(out);
  free(in);
}

static void* thread_main(void* arg) {
  int t = (int)(intptr_t)arg, i = t % asp_K, role = t / asp_K;
  asp_attach(i);
  void* bsend_buf = NULL;
  int bsend_size = T * 2 * (kLarge * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  if (role == 0) seen[i] = calloc((size_t)asp_N * T * M, sizeof(atomic_int));
  if (role == 0 && bsend) {
    bsend_buf = malloc(bsend_size);
    MPI_OK(MPI_Buffer_attach(bsend_buf, bsend_size)); /* this MPI process's own buffer */
  }
  stage(role, "a. modes");
  part_modes(role);
  stage(role, "b. order");
  if (role == 0 && bsend) {
    void* b;
    int sz;
    MPI_OK(MPI_Buffer_detach(&b, &sz));
    CHECK(b == bsend_buf && sz == bsend_size, "MPI_Buffer_detach gave %p %d, attached %p %d", b, sz, bsend_buf, bsend_size);
    free(bsend_buf);
    part_buffer_room();
  }
  part_order(role);
  for (int kind = 0; kind < kWildKinds; ++kind) {
    stage(role, wild_name[kind]);
    part_wild(role, 300 + kind, kind);
    stage(role, "c/d. check");
    if (role == 0) check_all_seen(wild_name[kind]);
  }
  stage(role, "e. nonblocking");
  part_nonblocking(role);
  stage(role, "f. persistent");
  part_persistent(role);
  pthread_barrier_wait(&all_barrier); /* every check of the address space done */
  if (role == 0) {
    if (asp_idx == 0) asp_set_stage("verdict");
    asp_verdict();
    free(seen[i]);
  }
  return NULL;
}

int main(int argc, char** argv) {
  asp_init(&argc, &argv, "asp_p2p", MPIX_THREAD_ATTACH);
  if (argc > 1) T = atoi(argv[1]);
  if (argc > 2) M = atoi(argv[2]);
  if (argc > 3) bsend = strcmp(argv[3], "nobsend") != 0;
  if (T < 1 || T > 16 || M < 1) {
    asp_say("asp_p2p: usage: asp_p2p [T (1..16) [M]]: FAILED\n");
    return 2;
  }
  int K = asp_K, nthreads = K * T;
  for (int i = 0; i < K; ++i) pthread_barrier_init(&proc_barrier[i], NULL, T);
  pthread_barrier_init(&all_barrier, NULL, nthreads);
  pthread_t* th = malloc(sizeof(pthread_t) * nthreads);
  for (int t = 0; t < nthreads; ++t) pthread_create(&th[t], NULL, thread_main, (void*)(intptr_t)t);
  for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
  /* The initializing thread, never attached, finalizes every MPI process of the address space. */
  int rc = MPI_Finalize(), failed = 0;
  for (int i = 0; i <= ASP_MAXK; ++i) failed += atomic_load(&asp_failures[i]);
  if (rc != MPI_SUCCESS) asp_say("asp_p2p: pid %d: MPI_Finalize returned %d: FAILED\n", (int)getpid(), rc);
  return failed || rc != MPI_SUCCESS ? 1 : 0;
}

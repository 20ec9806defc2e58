/* probe_edges: edge cases of "probe -> receive" in threaded programs, one sub-test per block,
   each printing its name and verdict. Exactly 2 ranks; rank 1 receives with several threads
   where that matters.

   usage: probe_edges [THREADS]       (THREADS receiving threads on rank 1, default 4)

     g. probed but never received: a thread probes (0, tag 77) on MPI_COMM_WORLD; with
        PROBE_EDGES_LEAK=1 it never receives it (the program must still work and end normally),
        otherwise it receives it. Run first, so that everything after runs with the leak.
     a. empty messages probed and received by threads with each pattern (s,t), (s,*), (*,t),
        (*,*): status count 0, source and tag right, each message exactly once.
     b. MPI_PROC_NULL: Probe, Iprobe, Recv, Irecv+Wait, persistent receive, Sendrecv,
        Sendrecv_replace, Mprobe+Mrecv, Improbe+Imrecv (status MPI_PROC_NULL, MPI_ANY_TAG, 0).
     c. after a probe the same thread's next receive gets the probed message, whatever the
        receive: MPI_Recv, MPI_Irecv+MPI_Wait, MPI_Sendrecv, MPI_Sendrecv_replace, persistent
        MPI_Recv_init+MPI_Start+MPI_Wait, MPI_Startall/MPI_Waitall of two persistent requests
        started three times, the application's own MPI_Mprobe/MPI_Mrecv (MPI_Improbe/MPI_Imrecv),
        an MPI_Iprobe loop then MPI_Recv; threads on overlapping patterns, contents checked.
        The persistent receive of the Startall family is made with the probe's own pattern
        (possibly wildcards) and a 100000-byte count, started together with a receive of a
        message the thread sends itself on another communicator; before each restart the
        thread probes again. Sendrecv(_replace) send their part to rank 0 (acknowledgements).
     d. repeated probe: Probe twice, Iprobe then Probe, Probe then Iprobe before receiving: both
        statuses describe the same message and the receive gets it.
     e. MPI_Cancel of posted receives nothing matches (MPI_Test_cancelled true), then normal
        receives still work; a cancel racing with a matching message (either outcome is right,
        the message must arrive exactly once).
     f. Isend/Irecv traffic completed with Waitany, Waitsome and Testall over arrays mixing
        normal and persistent requests, threads on both ranks.

   In a, c, d rank 0 sends a known set of messages; the threads on rank 1 stop at a "release"
   message, of which rank 0 sends THREADS per tag once rank 1 has received all the data (so no
   thread can be left waiting, whichever thread received what); the main thread receives the
   releases nobody took. With several threads thread 0 always probes with a full wildcard, so
   data never stays unreceived while the other threads wait on exhausted (source, tag) pairs.

   PROBE_TEST_NATIVE_MPROBE=1: probes become MPI_Mprobe/MPI_Improbe and receives MPI_Mrecv/
   MPI_Imrecv (natively correct with many threads); d then runs with one thread. Without it,
   THREADS=1 is natively correct too. PROBE_TEST_WATCHDOG=SECONDS (default 60, 0 = off):
   abort with a diagnosis when rank 1 receives nothing for that long. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

enum { kMaxBytes = 100000, kCanary = 16, kHdr = 16, kCtrlTag = 900, kAckTag = 901, kMaxThreads = 64 };
enum { kData = 0x0da7a001, kRelease = 0x0da7a002, kAck = 0x0da7a003, kTerminal = 0x0da7a004 };
typedef struct {
  int32_t kind, tag, seq, bytes;
} Hdr;

static int rank, peer, nthreads, native_mprobe, leak;
static double watchdog = 60;

static void pause_ns(long ns) {
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&ts, NULL);
}
static void backoff(int n) {
  if (n < 8) sched_yield();
  else pause_ns(n < 64 ? 20000 : 200000);
}
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static unsigned char fill_byte(int seq, int tag, int i) { return (unsigned char)(seq * 7 + tag * 13 + i + (i >> 8)); }

/* A receive buffer of `bytes` plus slack (Open MPI 4.1 writes a truncated rendezvous message
   past the end of the buffer) and a canary after `bytes`. */
static unsigned char* alloc_buf(int bytes) {
  unsigned char* b = malloc((size_t)bytes + kMaxBytes + kCanary);
  memset(b + bytes, 0xa5, kCanary);
  return b;
}
static void check_canary(const unsigned char* b, int bytes, const char* how) {
  for (int k = 0; k < kCanary; ++k)
    if (b[bytes + k] != 0xa5) {
      CHECK(0, "%s: the receive wrote past the end of its %d-byte buffer", how, bytes);
      return;
    }
}

/* Runs fn on n threads while the calling thread polls `poll` (if any) until it returns 0. */
static void run_threads_polling(int n, thread_fn fn, void* args, size_t arg_size, int (*poll)(void)) {
  pthread_t tids[kMaxThreads];
  for (int i = 0; i < n; ++i) pthread_create(&tids[i], NULL, fn, (char*)args + i * arg_size);
  if (poll)
    while (poll()) pause_ns(1000000);
  for (int i = 0; i < n; ++i) pthread_join(tids[i], NULL);
}

static int subtest_start;
static void subtest_begin(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  subtest_start = atomic_load(&test_failures);
}
static void subtest_end(const char* name) {
  int mine = atomic_load(&test_failures) - subtest_start;
  printf("probe_edges: rank %d: %s: %s\n", rank, name, mine ? "FAILED" : "ok");
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- a, c, d: rank 0 sends a known set of messages, rank 1's threads probe and receive ---- */
typedef struct {
  int n;      /* data messages */
  int zero;   /* all empty */
  int mode;   /* 0: empty messages (a), 1: receive families (c), 2: repeated probe (d) */
  int threads;
} Spec;
static const int kTags[] = {3, 4, 6};
enum { kNTags = 3 };
static int plan_tag(int seq) { return kTags[(seq * 7 + seq / 5) % kNTags]; }
static int plan_bytes(const Spec* sp, int seq) {
  if (sp->zero) return 0;
  if (seq % 9 == 4) return 70000 + (seq * 997) % 29000; /* rendezvous on both MPIs */
  return kHdr + (seq * 37) % 600;
}
static int tag_index(int tag) {
  for (int i = 0; i < kNTags; ++i)
    if (kTags[i] == tag) return i;
  return -1;
}

static void serve(const Spec* sp, MPI_Comm comm) {
  int T = sp->threads, nsends = 0;
  MPI_Request* sends = malloc((sp->n + kNTags * T) * sizeof *sends);
  unsigned char** bufs = malloc((sp->n + kNTags * T) * sizeof *bufs);
  for (int seq = 0; seq < sp->n; ++seq) {
    int bytes = plan_bytes(sp, seq), tag = plan_tag(seq);
    unsigned char* b = malloc(bytes ? bytes : 1);
    if (bytes) {
      Hdr h = {kData, tag, seq, bytes};
      memcpy(b, &h, sizeof h);
      for (int i = kHdr; i < bytes; ++i) b[i] = fill_byte(seq, tag, i);
    }
    bufs[nsends] = b;
    MPI_Isend(b, bytes, MPI_BYTE, 1, tag, comm, &sends[nsends++]);
  }
  int ctrl = 0, done = 0;
  long acks = 0;
  unsigned char* ack = malloc(kMaxBytes);
  MPI_Request reqs[2];
  MPI_Irecv(&ctrl, 1, MPI_INT, 1, kCtrlTag, comm, &reqs[0]);
  MPI_Irecv(ack, kMaxBytes, MPI_BYTE, 1, kAckTag, comm, &reqs[1]);
  while (!done) {
    int idx = MPI_UNDEFINED, flag = 0;
    MPI_Status st;
    for (int k = 0; !flag; ++k) {
      MPI_Testany(2, reqs, &idx, &flag, &st);
      if (!flag) backoff(k);
    }
    if (idx == 0) { /* everything arrived: release every thread */
      for (int ti = 0; ti < kNTags; ++ti)
        for (int t = 0; t < T; ++t) {
          Hdr* h = malloc(sizeof *h);
          *h = (Hdr){kRelease, kTags[ti], -1, kHdr};
          bufs[nsends] = (unsigned char*)h;
          MPI_Isend(h, kHdr, MPI_BYTE, 1, kTags[ti], comm, &sends[nsends++]);
        }
    } else if (idx == 1) {
      int b = -1;
      Hdr h = {0, 0, 0, 0};
      MPI_Get_count(&st, MPI_BYTE, &b);
      if (b >= kHdr) memcpy(&h, ack, sizeof h);
      if (b == kHdr && h.kind == kTerminal) {
        CHECK(h.seq == acks, "rank 1 sent %d acknowledgements, %ld arrived", h.seq, acks);
        CHECK(reqs[0] == MPI_REQUEST_NULL, "finished without a release request");
        done = 1;
      } else {
        ++acks; /* from MPI_Sendrecv (a header) or MPI_Sendrecv_replace (header, or 0xee bytes) */
        int good = b >= kHdr ? h.kind == kAck : 1;
        for (int i = 0; i < b && b < kHdr; ++i) good &= ack[i] == 0xee;
        CHECK(good, "acknowledgement of %d bytes is wrong", b);
        MPI_Irecv(ack, kMaxBytes, MPI_BYTE, 1, kAckTag, comm, &reqs[1]);
      }
    } else {
      CHECK(0, "nothing left to wait for");
      break;
    }
  }
  for (int flag = 0, k = 0; !flag; ++k) {
    MPI_Testall(nsends, sends, &flag, MPI_STATUSES_IGNORE);
    if (!flag) backoff(k);
  }
  for (int i = 0; i < nsends; ++i) free(bufs[i]);
  free(bufs);
  free(sends);
  free(ack);
}

/* rank 1 state of the current sub-test */
static const Spec* cur;
static atomic_long data_count, acks_sent, receives_done;
static atomic_int threads_finished;
static atomic_int* seen;
static atomic_long zero_seen[kNTags], remaining[kNTags];
static long zero_expected[kNTags];

typedef struct {
  int index;
  MPI_Comm comm, side;
  uint64_t rng;
} RArg;

static int choose_tag(RArg* a) {
  a->rng = a->rng * 6364136223846793005ull + 1442695040888963407ull;
  int start = (int)((a->rng >> 33) % kNTags);
  for (int k = 0; k < kNTags; ++k)
    if (atomic_load(&remaining[(start + k) % kNTags]) > 0) return kTags[(start + k) % kNTags];
  return kTags[start]; /* no data left: a release will come on every tag */
}

/* Probe for (src, tag): blocking or an Iprobe loop; matched: MPI_Mprobe/MPI_Improbe. */
static void do_probe(int src, int tag, MPI_Comm comm, int use_iprobe, int matched, MPI_Message* msg,
                     MPI_Status* st) {
  if (!use_iprobe) {
    if (matched) MPI_Mprobe(src, tag, comm, msg, st);
    else MPI_Probe(src, tag, comm, st);
    return;
  }
  int flag = 0;
  for (int k = 0; !flag; ++k) {
    if (matched) MPI_Improbe(src, tag, comm, &flag, msg, st);
    else MPI_Iprobe(src, tag, comm, &flag, st);
    if (!flag) backoff(k);
  }
}

/* Checks a probe's status against its pattern; returns its byte count. Yields first: the gap
   between probe and receive (the malloc) is where another thread can take the message. */
static int probed_bytes(const MPI_Status* st, int src, int tag, const char* how) {
  int b = -1, ints = -2;
  sched_yield();
  MPI_Get_count(st, MPI_BYTE, &b);
  MPI_Get_count(st, MPI_INT, &ints);
  int tag_ok = tag == MPI_ANY_TAG ? tag_index(st->MPI_TAG) >= 0 : st->MPI_TAG == tag;
  CHECK(st->MPI_SOURCE == 0 && tag_ok && b >= 0 && b <= kMaxBytes && ints == (b % 4 ? MPI_UNDEFINED : b / 4),
        "%s: probe (%d, %d) returned source %d tag %d, %d bytes, %d ints", how, src, tag, st->MPI_SOURCE,
        st->MPI_TAG, b, ints);
  (void)src;
  return b >= 0 && b <= kMaxBytes ? b : 0;
}

/* Checks a received message against its probe; returns 1 for data, 2 for a release. */
static int classify(const unsigned char* buf, int rc, const MPI_Status* rst, int probed, const MPI_Status* pst,
                    const char* how) {
  int fallback = atomic_load(&data_count) < cur->n ? 1 : 2; /* what an unidentifiable message counts as */
  if (rc != MPI_SUCCESS) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(0, "%s: receive of probed (tag %d, %d bytes) failed with error class %d%s", how, pst->MPI_TAG, probed,
          cls, cls == MPI_ERR_TRUNCATE ? " (MPI_ERR_TRUNCATE: false match)" : "");
    return fallback;
  }
  int b = -1;
  MPI_Get_count(rst, MPI_BYTE, &b);
  if (rst->MPI_SOURCE != 0 || rst->MPI_TAG != pst->MPI_TAG || b != probed)
    CHECK(0, "%s: false match: probed (source %d tag %d, %d bytes), received (source %d tag %d, %d bytes)", how,
          pst->MPI_SOURCE, pst->MPI_TAG, probed, rst->MPI_SOURCE, rst->MPI_TAG, b);
  int ti = tag_index(rst->MPI_TAG);
  if (ti < 0 || rst->MPI_SOURCE != 0 || b < 0) {
    CHECK(0, "%s: received from source %d tag %d", how, rst->MPI_SOURCE, rst->MPI_TAG);
    return fallback;
  }
  if (b == 0) {
    CHECK(cur->zero, "%s: unexpected empty message on tag %d", how, rst->MPI_TAG);
    atomic_fetch_add(&zero_seen[ti], 1);
    atomic_fetch_sub(&remaining[ti], 1);
    return 1;
  }
  Hdr h;
  if (b < kHdr) {
    CHECK(0, "%s: %d-byte message", how, b);
    return fallback;
  }
  memcpy(&h, buf, sizeof h);
  if (h.kind == kRelease && h.tag == rst->MPI_TAG && h.bytes == b) return 2;
  if (h.kind != kData || h.seq < 0 || h.seq >= cur->n || h.tag != rst->MPI_TAG || plan_tag(h.seq) != h.tag ||
      plan_bytes(cur, h.seq) != b || h.bytes != b) {
    CHECK(0, "%s: bad message: kind %x tag %d seq %d bytes %d, status tag %d, %d bytes", how, (unsigned)h.kind, h.tag,
          h.seq, h.bytes, rst->MPI_TAG, b);
    return fallback;
  }
  for (int i = kHdr; i < b; ++i)
    if (buf[i] != fill_byte(h.seq, h.tag, i)) {
      CHECK(0, "%s: message %d byte %d is %d, want %d", how, h.seq, i, buf[i], fill_byte(h.seq, h.tag, i));
      break;
    }
  atomic_fetch_add(&seen[h.seq], 1);
  atomic_fetch_sub(&remaining[ti], 1);
  return 1;
}

/* Counts a classified message; returns 1 when the thread must stop (it got its release). */
static int account(int what) {
  atomic_fetch_add(&receives_done, 1);
  if (what == 1) atomic_fetch_add(&data_count, 1);
  return what == 2;
}

static const char* const kFamilies[] = {"MPI_Recv", "MPI_Irecv+MPI_Wait", "MPI_Sendrecv", "MPI_Sendrecv_replace",
                                        "MPI_Recv_init+MPI_Start", "MPI_Startall/MPI_Waitall", "MPI_Mprobe/MPI_Mrecv",
                                        "MPI_Iprobe loop+MPI_Recv"};

/* Family 5: r1 a persistent receive with the probe's own pattern, r2 one of a message the
   thread sends itself on the side communicator; started together three times, each time after
   a probe. */
static int startall_rounds(RArg* a, int it, int src, int tag, int use_iprobe) {
  const char* how = kFamilies[5];
  unsigned char* buf = alloc_buf(kMaxBytes);
  int side_in[2], side_out[2], stop = 0;
  MPI_Request r[2];
  if (!native_mprobe) MPI_Recv_init(buf, kMaxBytes, MPI_BYTE, src, tag, a->comm, &r[0]);
  MPI_Recv_init(side_in, 2, MPI_INT, 1, a->index, a->side, &r[1]);
  for (int round = 0; round < 3 && !stop; ++round) {
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status pst, sts[2];
    MPI_Request send;
    do_probe(src, tag, a->comm, use_iprobe ^ (round & 1), native_mprobe, &msg, &pst);
    int bytes = probed_bytes(&pst, src, tag, how), rc;
    side_out[0] = a->index;
    side_out[1] = it * 3 + round;
    side_in[0] = side_in[1] = -1;
    MPI_Isend(side_out, 2, MPI_INT, 1, a->index, a->side, &send);
    if (native_mprobe) {
      MPI_Request both[2];
      MPI_Imrecv(buf, bytes, MPI_BYTE, &msg, &both[0]);
      MPI_Start(&r[1]);
      both[1] = r[1];
      rc = MPI_Waitall(2, both, sts);
    } else {
      MPI_Startall(2, r);
      rc = MPI_Waitall(2, r, sts);
    }
    if (rc == MPI_ERR_IN_STATUS) rc = sts[0].MPI_ERROR;
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    CHECK(side_in[0] == side_out[0] && side_in[1] == side_out[1] && sts[1].MPI_SOURCE == 1 &&
              sts[1].MPI_TAG == a->index,
          "%s: round %d: side message (%d, %d) from %d tag %d, want (%d, %d)", how, round, side_in[0], side_in[1],
          sts[1].MPI_SOURCE, sts[1].MPI_TAG, side_out[0], side_out[1]);
    check_canary(buf, kMaxBytes, how);
    stop = account(classify(buf, rc, &sts[0], bytes, &pst, how));
  }
  if (!native_mprobe) MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
  free(buf);
  return stop;
}

/* One probe and one receive by family `fam`; returns 1 when the thread must stop. */
static int receive_family(RArg* a, int fam, int it, int src, int tag, int use_iprobe) {
  const char* how = kFamilies[fam];
  MPI_Comm comm = a->comm;
  MPI_Status pst, rst;
  MPI_Message msg = MPI_MESSAGE_NULL;
  MPI_Request r;
  int rc = MPI_SUCCESS, bytes;
  unsigned char* buf;
  if (fam == 5) return startall_rounds(a, it, src, tag, use_iprobe);
  if (fam == 6) { /* the application's own matched probe */
    do_probe(src, tag, comm, use_iprobe, 1, &msg, &pst);
    bytes = probed_bytes(&pst, src, tag, how);
    buf = alloc_buf(bytes);
    if (!use_iprobe) {
      rc = MPI_Mrecv(buf, bytes, MPI_BYTE, &msg, &rst);
    } else {
      MPI_Imrecv(buf, bytes, MPI_BYTE, &msg, &r);
      rc = MPI_Wait(&r, &rst);
    }
    CHECK(msg == MPI_MESSAGE_NULL, "%s: message handle not released", how);
  } else {
    if (fam == 7) use_iprobe = 1;
    do_probe(src, tag, comm, use_iprobe, native_mprobe, &msg, &pst);
    bytes = probed_bytes(&pst, src, tag, how);
    buf = alloc_buf(bytes);
    int s = pst.MPI_SOURCE, t = pst.MPI_TAG;
    Hdr ack = {kAck, t, it, kHdr};
    if (fam == 3) { /* what Sendrecv_replace sends back */
      if (bytes >= kHdr) memcpy(buf, &ack, sizeof ack);
      else memset(buf, 0xee, bytes);
    }
    if (native_mprobe) {
      MPI_Request send = MPI_REQUEST_NULL;
      if (fam == 2) MPI_Isend(&ack, kHdr, MPI_BYTE, 0, kAckTag, comm, &send);
      if (fam == 3) { /* the reply must be sent from a copy: the receive overwrites buf */
        unsigned char* copy = malloc(bytes + 1);
        memcpy(copy, buf, bytes);
        MPI_Send(copy, bytes, MPI_BYTE, 0, kAckTag, comm);
        free(copy);
      }
      if (fam == 1 || fam == 4) {
        MPI_Imrecv(buf, bytes, MPI_BYTE, &msg, &r);
        rc = MPI_Wait(&r, &rst);
      } else {
        rc = MPI_Mrecv(buf, bytes, MPI_BYTE, &msg, &rst);
      }
      MPI_Wait(&send, MPI_STATUS_IGNORE);
      if (fam == 2 || fam == 3) atomic_fetch_add(&acks_sent, 1);
    } else {
      switch (fam) {
        case 1:
          MPI_Irecv(buf, bytes, MPI_BYTE, s, t, comm, &r);
          rc = MPI_Wait(&r, &rst);
          break;
        case 2:
          rc = MPI_Sendrecv(&ack, kHdr, MPI_BYTE, 0, kAckTag, buf, bytes, MPI_BYTE, s, t, comm, &rst);
          atomic_fetch_add(&acks_sent, 1);
          break;
        case 3:
          rc = MPI_Sendrecv_replace(buf, bytes, MPI_BYTE, 0, kAckTag, s, t, comm, &rst);
          atomic_fetch_add(&acks_sent, 1);
          break;
        case 4:
          MPI_Recv_init(buf, bytes, MPI_BYTE, s, t, comm, &r);
          MPI_Start(&r);
          rc = MPI_Wait(&r, &rst);
          MPI_Request_free(&r);
          break;
        default: /* 0, 7 */
          rc = MPI_Recv(buf, bytes, MPI_BYTE, s, t, comm, &rst);
      }
    }
  }
  check_canary(buf, bytes, how);
  int stop = account(classify(buf, rc, &rst, bytes, &pst, how));
  free(buf);
  return stop;
}

/* d: probe twice before receiving; returns 1 when the thread must stop. */
static int receive_repeated(RArg* a, int it, int src, int tag) {
  static const char* const names[] = {"Probe, Probe", "Iprobe loop, Probe", "Probe, Iprobe loop"};
  int v = it % 3;
  MPI_Status s1, s2, rst;
  do_probe(src, tag, a->comm, v == 1, 0, NULL, &s1);
  do_probe(src, tag, a->comm, v == 2, 0, NULL, &s2);
  int b1 = probed_bytes(&s1, src, tag, names[v]), b2 = probed_bytes(&s2, src, tag, names[v]);
  CHECK(s1.MPI_SOURCE == s2.MPI_SOURCE && s1.MPI_TAG == s2.MPI_TAG && b1 == b2,
        "%s: first probe saw (source %d, tag %d, %d bytes), second (source %d, tag %d, %d bytes)", names[v],
        s1.MPI_SOURCE, s1.MPI_TAG, b1, s2.MPI_SOURCE, s2.MPI_TAG, b2);
  unsigned char* buf = alloc_buf(b1);
  int rc = MPI_Recv(buf, b1, MPI_BYTE, s1.MPI_SOURCE, s1.MPI_TAG, a->comm, &rst);
  check_canary(buf, b1, names[v]);
  int stop = account(classify(buf, rc, &rst, b1, &s1, names[v]));
  free(buf);
  return stop;
}

static void* receiver_thread(void* p) {
  RArg* a = p;
  int T = cur->threads;
  for (int it = 0;; ++it) {
    /* pattern kinds 0: (s,t) 1: (s,*) 2: (*,t) 3: (*,*); thread 0 of several: wildcards only */
    int kind = T > 1 && a->index == 0 ? 1 + 2 * (it % 2) : (it + a->index) % 4;
    int tag = choose_tag(a);
    int src = kind <= 1 ? 0 : MPI_ANY_SOURCE;
    int ptag = kind == 0 || kind == 2 ? tag : MPI_ANY_TAG;
    int use_iprobe = (it / 4 + a->index) % 2, stop;
    if (cur->mode == 2) {
      stop = receive_repeated(a, it, src, ptag);
    } else {
      static const int kEmptyFamilies[] = {0, 1, 6, 7};
      int fam = cur->mode == 0 ? kEmptyFamilies[(it + a->index) % 4] : (it + a->index) % 8;
      stop = receive_family(a, fam, it, src, ptag, use_iprobe);
    }
    if (stop) break;
  }
  atomic_fetch_add(&threads_finished, 1);
  return NULL;
}

/* Rank 1's main thread while the receiving threads run: tells rank 0 to send the releases
   once all data is in, waits for the threads to finish, and aborts when nothing is received
   for `watchdog` seconds. Returns 0 when every thread is done. */
static MPI_Comm release_comm;
static int released;
static long watch_count;
static double watch_time;
static int threads_running(void) {
  long c = atomic_load(&receives_done);
  double t = now();
  if (c != watch_count) {
    watch_count = c;
    watch_time = t;
  } else if (watchdog > 0 && t - watch_time > watchdog) {
    printf("probe_edges: rank 1: watchdog: nothing received for %.0f s, %ld of %d data messages in, %d of %d "
           "threads done\n", watchdog, (long)atomic_load(&data_count), cur->n, (int)atomic_load(&threads_finished),
           cur->threads);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  if (!released && atomic_load(&data_count) >= cur->n) {
    int cmd = 1; /* all data is in: rank 0 now sends the releases */
    MPI_Send(&cmd, 1, MPI_INT, 0, kCtrlTag, release_comm);
    released = 1;
  }
  return atomic_load(&threads_finished) < cur->threads;
}

static void receiving_subtest(const char* name, Spec sp) {
  subtest_begin();
  MPI_Comm comm, side;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); /* a truncated receive is counted, not fatal */
  MPI_Comm_dup(MPI_COMM_WORLD, &side);
  if (rank == 0) {
    serve(&sp, comm);
  } else {
    cur = &sp;
    atomic_store(&data_count, 0);
    atomic_store(&acks_sent, 0);
    atomic_store(&receives_done, 0);
    seen = calloc(sp.n, sizeof *seen);
    for (int ti = 0; ti < kNTags; ++ti) {
      atomic_store(&zero_seen[ti], 0);
      atomic_store(&remaining[ti], 0);
      zero_expected[ti] = 0;
    }
    for (int seq = 0; seq < sp.n; ++seq) {
      atomic_fetch_add(&remaining[tag_index(plan_tag(seq))], 1);
      if (plan_bytes(&sp, seq) == 0) zero_expected[tag_index(plan_tag(seq))]++;
    }
    RArg args[kMaxThreads];
    for (int t = 0; t < sp.threads; ++t) args[t] = (RArg){t, comm, side, 0x1234567ull * (t + 1)};
    watch_count = -1;
    watch_time = now();
    int failures_before = atomic_load(&test_failures);
    release_comm = comm;
    released = 0;
    atomic_store(&threads_finished, 0);
    run_threads_polling(sp.threads, receiver_thread, args, sizeof args[0], threads_running);
    CHECK(released, "threads finished before all data was in");
    /* receive the releases nobody took: THREADS per tag were sent, each thread took one */
    long left = (long)kNTags * sp.threads - sp.threads;
    unsigned char* b = malloc(kMaxBytes);
    int accounting_ok = atomic_load(&test_failures) == failures_before;
    double quiet = now();
    while (left > 0) {
      MPI_Status st;
      if (!accounting_ok) { /* after a false match the counts may be off: poll, stop after 5 s */
        int flag = 0;
        MPI_Iprobe(0, MPI_ANY_TAG, comm, &flag, &st);
        if (!flag) {
          if (now() - quiet > 5) break;
          backoff(100);
          continue;
        }
        quiet = now();
      }
      MPI_Recv(b, kMaxBytes, MPI_BYTE, 0, MPI_ANY_TAG, comm, &st);
      int n = -1;
      Hdr h = {0, 0, 0, 0};
      MPI_Get_count(&st, MPI_BYTE, &n);
      if (n >= kHdr) memcpy(&h, b, sizeof h);
      CHECK(n == kHdr && h.kind == kRelease, "left over: a %d-byte message (kind %x) on tag %d", n, (unsigned)h.kind,
            st.MPI_TAG);
      --left;
    }
    free(b);
    Hdr term = {kTerminal, 0, (int)atomic_load(&acks_sent), kHdr};
    MPI_Send(&term, kHdr, MPI_BYTE, 0, kAckTag, comm);
    long missing = 0, twice = 0;
    for (int seq = 0; seq < sp.n; ++seq) {
      if (plan_bytes(&sp, seq) == 0) continue;
      int k = atomic_load(&seen[seq]);
      missing += k == 0;
      twice += k > 1;
    }
    CHECK(missing == 0 && twice == 0, "%ld messages missing, %ld received more than once", missing, twice);
    for (int ti = 0; ti < kNTags; ++ti)
      CHECK(atomic_load(&zero_seen[ti]) == zero_expected[ti], "tag %d: %ld empty messages received, %ld sent",
            kTags[ti], (long)atomic_load(&zero_seen[ti]), zero_expected[ti]);
    printf("probe_edges: rank 1: %s: %d messages, %d threads, %ld acknowledgements\n", name, sp.n, sp.threads,
           (long)atomic_load(&acks_sent));
    free(seen);
  }
  MPI_Comm_free(&side);
  MPI_Comm_free(&comm);
  subtest_end(name);
}


/* ---- b: MPI_PROC_NULL ---- */
/* MPICH before 4.2 completes an MPI_Irecv from MPI_PROC_NULL with source 0 and tag 0
   (pmodels/mpich#6805, fixed by #6819), and MPICH up to 4.2 (4.2.1 measured) a persistent one with
   MPI_ANY_SOURCE; for those MPIs (decided by the version string, not by what the calls return)
   exactly those statuses are accepted. */
static int mpich_irecv_null_quirk, mpich_persistent_null_quirk;
enum { kStrict, kIrecvQuirk, kPersistentQuirk };
static void detect_quirks(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len, major = 0, minor = 0;
  MPI_Get_library_version(v, &len);
  const char* m = strstr(v, "MPICH Version:");
  if (!m || sscanf(m + strlen("MPICH Version:"), " %d.%d", &major, &minor) != 2) return;
  mpich_irecv_null_quirk = major < 4 || (major == 4 && minor < 2);
  mpich_persistent_null_quirk = major < 4 || (major == 4 && minor <= 2);
  if (mpich_persistent_null_quirk && rank == 0)
    printf("probe_edges: note: MPICH %d.%d: accepting its statuses for %spersistent receives (MPI_ANY_SOURCE) from "
           "MPI_PROC_NULL\n", major, minor, mpich_irecv_null_quirk ? "MPI_Irecv (source 0, tag 0) and " : "");
}
static void check_null_status(const MPI_Status* st, const char* what, int iter, int quirk) {
  int n = -1;
  MPI_Get_count(st, MPI_INT, &n);
  int ok = st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && n == 0;
  if (mpich_irecv_null_quirk && quirk == kIrecvQuirk) ok |= st->MPI_SOURCE == 0 && st->MPI_TAG == 0 && n == 0;
  if (mpich_persistent_null_quirk && quirk == kPersistentQuirk)
    ok |= st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0;
  CHECK(ok, "%s (iteration %d): status source %d tag %d count %d, want MPI_PROC_NULL, MPI_ANY_TAG, 0", what, iter,
        st->MPI_SOURCE, st->MPI_TAG, n);
}
static void* proc_null_thread(void* p) {
  int t = *(int*)p, buf[4] = {0}, flag;
  MPI_Status st;
  MPI_Request r;
  MPI_Message msg;
  for (int i = 0; i < 20; ++i) {
    int tag = i % 2 ? MPI_ANY_TAG : 5 + t;
    MPI_Probe(MPI_PROC_NULL, tag, MPI_COMM_WORLD, &st);
    check_null_status(&st, "MPI_Probe", i, kStrict);
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, tag, MPI_COMM_WORLD, &flag, &st);
    CHECK(flag, "MPI_Iprobe(MPI_PROC_NULL) flag false");
    check_null_status(&st, "MPI_Iprobe", i, kStrict);
    MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, tag, MPI_COMM_WORLD, &st);
    check_null_status(&st, "MPI_Recv", i, kStrict);
    MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, tag, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    check_null_status(&st, "MPI_Irecv+MPI_Wait", i, kIrecvQuirk);
    MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, tag, MPI_COMM_WORLD, &r);
    for (int k = 0; k < 2; ++k) {
      MPI_Start(&r);
      MPI_Wait(&r, &st);
      check_null_status(&st, "MPI_Recv_init+MPI_Start+MPI_Wait", i, kPersistentQuirk);
    }
    MPI_Request_free(&r);
    MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, buf, 4, MPI_INT, MPI_PROC_NULL, tag, MPI_COMM_WORLD, &st);
    check_null_status(&st, "MPI_Sendrecv", i, kStrict);
    MPI_Sendrecv_replace(buf, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_PROC_NULL, tag, MPI_COMM_WORLD, &st);
    check_null_status(&st, "MPI_Sendrecv_replace", i, kStrict);
    msg = MPI_MESSAGE_NULL;
    MPI_Mprobe(MPI_PROC_NULL, tag, MPI_COMM_WORLD, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) message is not MPI_MESSAGE_NO_PROC");
    check_null_status(&st, "MPI_Mprobe", i, kStrict);
    MPI_Mrecv(buf, 4, MPI_INT, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv(MPI_MESSAGE_NO_PROC) left the handle");
    check_null_status(&st, "MPI_Mrecv", i, kStrict);
    flag = 0;
    msg = MPI_MESSAGE_NULL;
    MPI_Improbe(MPI_PROC_NULL, tag, MPI_COMM_WORLD, &flag, &msg, &st);
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d, message not NO_PROC", flag);
    check_null_status(&st, "MPI_Improbe", i, kStrict);
    MPI_Imrecv(buf, 4, MPI_INT, &msg, &r);
    MPI_Wait(&r, &st);
    check_null_status(&st, "MPI_Imrecv+MPI_Wait", i, kStrict);
  }
  return NULL;
}

/* ---- e: cancel ---- */
static MPI_Comm cancel_comm, silent_comm;
static MPI_Request persistent[kMaxThreads];
static atomic_int cancelled_race, completed_race;
static int cancel_buf[kMaxThreads][4];

/* Phase 1, before rank 0 sends anything on cancel_comm: cancel receives that nothing matches. */
static void* cancel_phase1(void* p) {
  int t = *(int*)p, buf[4], flag;
  MPI_Status st;
  MPI_Request r;
  MPI_Irecv(buf, 4, MPI_INT, 0, 500 + t, cancel_comm, &r); /* tag 500 + t is never sent */
  MPI_Cancel(&r);
  MPI_Wait(&r, &st);
  flag = 0;
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag && r == MPI_REQUEST_NULL, "thread %d: unmatched MPI_Irecv(0, %d) not cancelled", t, 500 + t);
  MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, silent_comm, &r); /* nothing is ever sent there */
  MPI_Cancel(&r);
  MPI_Wait(&r, &st);
  flag = 0;
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag, "thread %d: unmatched MPI_Irecv(ANY_SOURCE, ANY_TAG) not cancelled", t);
  /* a persistent receive, started and cancelled now, restarted in phase 2 */
  MPI_Recv_init(cancel_buf[t], 2, MPI_INT, 0, 550 + t, cancel_comm, &persistent[t]);
  MPI_Start(&persistent[t]);
  MPI_Cancel(&persistent[t]);
  MPI_Wait(&persistent[t], &st);
  flag = 0;
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag, "thread %d: unmatched persistent receive not cancelled", t);
  return NULL;
}

/* Phase 2: rank 0 has sent tags 550 + t, 600 + t, 700 + t. */
static void* cancel_phase2(void* p) {
  int t = *(int*)p, buf[4] = {-1, -1, -1, -1}, flag, n = -1;
  MPI_Status st, pst;
  MPI_Request r;
  /* normal receives work after the cancels: probe, then Irecv + Wait */
  MPI_Probe(0, 600 + t, cancel_comm, &pst);
  MPI_Get_count(&pst, MPI_INT, &n);
  CHECK(n == 2, "thread %d: probed %d ints on tag %d, want 2", t, n, 600 + t);
  MPI_Irecv(buf, 2, MPI_INT, 0, 600 + t, cancel_comm, &r);
  MPI_Wait(&r, &st);
  CHECK(buf[0] == t && buf[1] == 600 && st.MPI_TAG == 600 + t, "thread %d: got (%d, %d) tag %d after cancels", t,
        buf[0], buf[1], st.MPI_TAG);
  /* the cancelled persistent request, started again, matches its message */
  MPI_Start(&persistent[t]);
  MPI_Wait(&persistent[t], &st);
  flag = 1;
  MPI_Test_cancelled(&st, &flag);
  CHECK(!flag && cancel_buf[t][0] == t && cancel_buf[t][1] == 550,
        "thread %d: restarted persistent receive got (%d, %d), cancelled %d", t, cancel_buf[t][0], cancel_buf[t][1], flag);
  MPI_Request_free(&persistent[t]);
  /* a cancel racing with a matching message: either outcome, the message arrives once */
  buf[0] = buf[1] = -1;
  MPI_Irecv(buf, 2, MPI_INT, 0, 700 + t, cancel_comm, &r);
  MPI_Cancel(&r);
  MPI_Wait(&r, &st);
  flag = 0;
  MPI_Test_cancelled(&st, &flag);
  if (flag) {
    atomic_fetch_add(&cancelled_race, 1);
    MPI_Recv(buf, 2, MPI_INT, 0, 700 + t, cancel_comm, &st);
  } else {
    atomic_fetch_add(&completed_race, 1);
  }
  CHECK(buf[0] == t && buf[1] == 700, "thread %d: raced cancel: got (%d, %d)", t, buf[0], buf[1]);
  return NULL;
}

/* ---- f: request arrays mixing normal and persistent requests ---- */
static MPI_Comm traffic_comm;
enum { kSmall = 64, kLarge = 20000, kIters = 30 };
static int tvalue(int src, int t, int k, int which, int i) { return src * 10000000 + t * 100000 + k * 1000 + which * 100 + i % 97; }
static void* traffic_thread(void* p) {
  int t = *(int*)p, base = 2000 + 10 * t;
  int *in1 = malloc(kSmall * sizeof(int)), *in2 = malloc(kSmall * sizeof(int)), *in3 = malloc(kLarge * sizeof(int));
  int *out1 = malloc(kSmall * sizeof(int)), *out2 = malloc(kSmall * sizeof(int)), *out3 = malloc(kLarge * sizeof(int));
  MPI_Request p1, p2, reqs[6];
  MPI_Recv_init(in1, kSmall, MPI_INT, peer, base + 0, traffic_comm, &p1);
  MPI_Recv_init(in2, kSmall, MPI_INT, peer, base + 1, traffic_comm, &p2);
  for (int k = 0; k < kIters; ++k) {
    int large = k % 4 == 1 ? kLarge : kSmall; /* sometimes rendezvous */
    for (int i = 0; i < kSmall; ++i) {
      out1[i] = tvalue(rank, t, k, 1, i);
      out2[i] = tvalue(rank, t, k, 2, i);
    }
    for (int i = 0; i < large; ++i) out3[i] = tvalue(rank, t, k, 3, i);
    memset(in1, 0xff, kSmall * sizeof(int));
    memset(in2, 0xff, kSmall * sizeof(int));
    reqs[0] = p1;
    reqs[1] = p2;
    MPI_Startall(2, reqs);
    MPI_Irecv(in3, kLarge, MPI_INT, peer, base + 2, traffic_comm, &reqs[2]);
    MPI_Isend(out1, kSmall, MPI_INT, peer, base + 0, traffic_comm, &reqs[3]);
    MPI_Isend(out2, kSmall, MPI_INT, peer, base + 1, traffic_comm, &reqs[4]);
    MPI_Isend(out3, large, MPI_INT, peer, base + 2, traffic_comm, &reqs[5]);
    MPI_Status sts[6];
    int got[6] = {0}, completions = 0;
    if (k % 3 == 0) { /* Waitany until nothing is active (persistent requests turn inactive) */
      for (;;) {
        int idx;
        MPI_Status st;
        MPI_Waitany(6, reqs, &idx, &st);
        if (idx == MPI_UNDEFINED) break;
        got[idx]++;
        sts[idx] = st;
        ++completions;
      }
    } else if (k % 3 == 1) {
      for (;;) {
        int out, idx[6];
        MPI_Status st[6];
        MPI_Waitsome(6, reqs, &out, idx, st);
        if (out == MPI_UNDEFINED) break;
        for (int j = 0; j < out; ++j) {
          got[idx[j]]++;
          sts[idx[j]] = st[j];
          ++completions;
        }
      }
    } else {
      int flag = 0;
      for (int n = 0; !flag; ++n) {
        MPI_Testall(6, reqs, &flag, sts);
        if (!flag) backoff(n);
      }
      for (int j = 0; j < 6; ++j) got[j] = 1;
      completions = 6;
    }
    CHECK(completions == 6, "thread %d iteration %d: %d completions, want 6", t, k, completions);
    for (int j = 0; j < 6; ++j) CHECK(got[j] == 1, "thread %d iteration %d: request %d completed %d times", t, k, j, got[j]);
    CHECK(reqs[0] == p1 && reqs[1] == p2, "thread %d: a persistent request handle changed", t);
    CHECK(reqs[2] == MPI_REQUEST_NULL && reqs[5] == MPI_REQUEST_NULL, "thread %d: a completed request not freed", t);
    int n3 = -1;
    MPI_Get_count(&sts[2], MPI_INT, &n3);
    CHECK(n3 == large && sts[2].MPI_SOURCE == peer && sts[0].MPI_TAG == base && sts[1].MPI_TAG == base + 1,
          "thread %d iteration %d: statuses wrong (count %d)", t, k, n3);
    for (int i = 0; i < kSmall; ++i)
      if (in1[i] != tvalue(peer, t, k, 1, i) || in2[i] != tvalue(peer, t, k, 2, i)) {
        CHECK(0, "thread %d iteration %d: persistent receive data wrong at %d", t, k, i);
        break;
      }
    for (int i = 0; i < large; ++i)
      if (in3[i] != tvalue(peer, t, k, 3, i)) {
        CHECK(0, "thread %d iteration %d: Irecv data wrong at %d", t, k, i);
        break;
      }
  }
  MPI_Request_free(&p1);
  MPI_Request_free(&p2);
  free(in1), free(in2), free(in3), free(out1), free(out2), free(out3);
  return NULL;
}

/* ---- g: probed but never received ---- */
static void* leak_thread(void* p) {
  int t = *(int*)p, buf[8], n = -1;
  MPI_Status st;
  MPI_Message msg = MPI_MESSAGE_NULL;
  int tag = t == 0 ? 77 : 78;
  if (native_mprobe) MPI_Mprobe(0, tag, MPI_COMM_WORLD, &msg, &st);
  else MPI_Probe(0, tag, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == tag && n == 8, "probe (0, %d): source %d tag %d count %d", tag,
        st.MPI_SOURCE, st.MPI_TAG, n);
  if (t == 0 && leak) return NULL; /* probed, never received */
  if (native_mprobe) MPI_Mrecv(buf, 8, MPI_INT, &msg, &st);
  else MPI_Recv(buf, 8, MPI_INT, 0, tag, MPI_COMM_WORLD, &st);
  for (int i = 0; i < 8; ++i) CHECK(buf[i] == tag * 100 + i, "tag %d int %d is %d", tag, i, buf[i]);
  return NULL;
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "probe_edges", &rank, &peer);
  nthreads = argc > 1 ? atoi(argv[1]) : 4;
  if (nthreads < 1 || nthreads > kMaxThreads) {
    if (rank == 0) printf("usage: probe_edges [THREADS 1..%d]\n", kMaxThreads);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* e = getenv("PROBE_TEST_NATIVE_MPROBE");
  native_mprobe = e && !strcmp(e, "1");
  e = getenv("PROBE_EDGES_LEAK");
  leak = e && !strcmp(e, "1");
  e = getenv("PROBE_TEST_WATCHDOG");
  if (e) watchdog = atof(e);
  /* MPICH 4.0 raises errors of MPI_Wait/MPI_Test on MPI_COMM_WORLD's error handler, not on
     the request's communicator: without this a truncated receive completed by MPI_Wait aborts
     instead of being counted. Every result is checked, so nothing goes unnoticed. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int ids[kMaxThreads];
  for (int i = 0; i < kMaxThreads; ++i) ids[i] = i;
  double start = MPI_Wtime();

  /* g first: everything after runs with the probed message left behind (PROBE_EDGES_LEAK=1) */
  subtest_begin();
  if (rank == 0) {
    int m[8];
    for (int tag = 77; tag <= 79; ++tag) {
      for (int i = 0; i < 8; ++i) m[i] = tag * 100 + i;
      MPI_Send(m, 8, MPI_INT, 1, tag, MPI_COMM_WORLD);
    }
  } else {
    run_threads(2, leak_thread, ids, sizeof ids[0]);
    int buf[8];
    MPI_Status st;
    MPI_Probe(0, 79, MPI_COMM_WORLD, &st);
    MPI_Recv(buf, 8, MPI_INT, 0, 79, MPI_COMM_WORLD, &st);
    CHECK(buf[0] == 7900 && buf[7] == 7907, "tag 79: got %d..%d", buf[0], buf[7]);
  }
  subtest_end(leak ? "g. probed but never received (PROBE_EDGES_LEAK=1: tag 77 left unreceived)"
                   : "g. probed but never received (PROBE_EDGES_LEAK unset: tag 77 received)");

  receiving_subtest("a. empty messages, every pattern", (Spec){400, 1, 0, nthreads});

  subtest_begin();
  detect_quirks();
  run_threads(nthreads, proc_null_thread, ids, sizeof ids[0]);
  subtest_end("b. MPI_PROC_NULL");

  receiving_subtest("c. probe then each receive family", (Spec){600, 0, 1, nthreads});
  receiving_subtest("d. repeated probe", (Spec){300, 0, 2, native_mprobe ? 1 : nthreads});

  subtest_begin();
  MPI_Comm_dup(MPI_COMM_WORLD, &cancel_comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &silent_comm);
  if (rank == 1) run_threads(nthreads, cancel_phase1, ids, sizeof ids[0]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    static const int kCancelTags[] = {550, 600, 700};
    for (int k = 0; k < 3; ++k) {
      if (k == 2) pause_ns(20000000); /* so that some cancels of tag 700 + t come first */
      for (int t = 0; t < nthreads; ++t) {
        int m[2] = {t, kCancelTags[k]};
        MPI_Send(m, 2, MPI_INT, 1, kCancelTags[k] + t, cancel_comm);
      }
    }
  } else {
    run_threads(nthreads, cancel_phase2, ids, sizeof ids[0]);
    printf("probe_edges: rank 1: e: racing cancels: %d cancelled, %d completed\n", (int)atomic_load(&cancelled_race),
           (int)atomic_load(&completed_race));
  }
  MPI_Comm_free(&silent_comm);
  MPI_Comm_free(&cancel_comm);
  subtest_end("e. MPI_Cancel of receives");

  subtest_begin();
  MPI_Comm_dup(MPI_COMM_WORLD, &traffic_comm);
  run_threads(nthreads, traffic_thread, ids, sizeof ids[0]);
  MPI_Comm_free(&traffic_comm);
  subtest_end("f. Waitany/Waitsome/Testall over normal and persistent requests");

  if (rank == 1)
    printf("probe_edges: rank 1: %d threads, %s, %.2f s\n", nthreads, native_mprobe ? "mprobe+mrecv" : "probe+recv",
           MPI_Wtime() - start);
  return test_finish();
}

/* scale_probe: hundreds of threads of one rank polling with MPI_Iprobe on mixed patterns, then
   malloc + MPI_Recv of what they probed -- the probe -> receive idiom as a real code with many
   threads writes it: a tight MPI_Iprobe loop, no backoff of its own.

   usage: scale_probe THREADS MESSAGES_PER_SENDER          (2 or more ranks)
   Ranks 1..n-1 send MESSAGES_PER_SENDER messages each to rank 0, on the tags 3, 4, 7, 9 in turn,
   of 0..2000 bytes (every 50th of 40..80 KB: rendezvous on both MPIs), with MPI_Send. A message
   starts with (source, tag, sequence number, byte count) and is filled from them.

   Rank 0 runs THREADS threads. Receive i of a thread uses pattern i % 4 of (s,t), (s,*), (*,t),
   (*,*), with s and t taken anew at each MPI_Iprobe among the channels that still have messages,
   polls until it finds one, allocates MPI_Get_count bytes and receives the probed source and tag. Checked: the received message is the probed one (size, envelope, no
   truncation), its header and fill, sequence numbers rising per (thread, source, tag), every
   message exactly once. Prints the receive rate.

   PROBE_TEST_NATIVE_MPROBE=1: MPI_Improbe + MPI_Mrecv instead (correct without tsmpi). */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#include "test_util.h"

enum { kTags = 4, kHeader = 4 };
static const int kTagValues[kTags] = {3, 4, 7, 9};

static int rank, size, threads, per_sender, native_mprobe;
static long total;
static atomic_long received, false_matches, corrupt, order_violations, *remaining; /* [source][tag] */
static atomic_int* seen;                                                             /* [source][seq] */

static int bytes_of(int source, int seq) {
  uint32_t h = (uint32_t)(source * 2654435761u) ^ (uint32_t)(seq * 40503u);
  h ^= h >> 13;
  if (seq % 50 == 49) return 40000 + (int)(h % 40000);
  return seq % 17 == 0 ? 0 : kHeader * 4 + (int)(h % 2000);
}
static int tag_index(int tag) {
  for (int i = 0; i < kTags; ++i)
    if (kTagValues[i] == tag) return i;
  return -1;
}
static unsigned char fill(const int32_t* h, int i) { return (unsigned char)(h[0] * 7 + h[1] * 13 + h[2] + i); }
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_sender(void) {
  unsigned char* buf = malloc(80000 + 64);
  for (int seq = 0; seq < per_sender; ++seq) {
    int bytes = bytes_of(rank, seq), tag = kTagValues[seq % kTags];
    int32_t h[kHeader] = {rank, tag, seq, bytes};
    if (bytes) {
      memcpy(buf, h, sizeof h);
      for (int i = (int)sizeof h; i < bytes; ++i) buf[i] = fill(h, i);
    }
    MPI_Send(buf, bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
  }
  free(buf);
}

static long chan(int s, int ti) { return (long)s * kTags + ti; }

static long left_for(int src, int tag) {
  long sum = 0;
  for (int s = 1; s < size; ++s)
    for (int ti = 0; ti < kTags; ++ti)
      if ((src == MPI_ANY_SOURCE || s == src) && (tag == MPI_ANY_TAG || kTagValues[ti] == tag))
        sum += atomic_load(&remaining[chan(s, ti)]);
  return sum;
}

/* A pattern of the given kind over a channel that still has messages; 0 if none has any. */
static int choose(uint64_t* rng, int kind, int* src, int* tag) {
  int n = (size - 1) * kTags;
  *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
  int start = (int)((*rng >> 33) % (uint64_t)n);
  for (int k = 0; k < n; ++k) {
    int i = (start + k) % n, s = 1 + i / kTags, ti = i % kTags;
    if (atomic_load(&remaining[chan(s, ti)]) <= 0) continue;
    *src = kind == 0 || kind == 1 ? s : MPI_ANY_SOURCE;
    *tag = kind == 0 || kind == 2 ? kTagValues[ti] : MPI_ANY_TAG;
    return 1;
  }
  return 0;
}

static void check(int index, int* last, const unsigned char* buf, int bytes, const MPI_Status* probed,
                  const MPI_Status* got, int rc) {
  int got_bytes = -1;
  MPI_Get_count(got, MPI_BYTE, &got_bytes);
  int src = probed->MPI_SOURCE, ti = tag_index(probed->MPI_TAG);
  if (rc != MPI_SUCCESS || got->MPI_SOURCE != src || got->MPI_TAG != probed->MPI_TAG || got_bytes != bytes ||
      src < 1 || src >= size || ti < 0) {
    atomic_fetch_add(&false_matches, 1);
    printf("scale_probe: thread %d probed (%d, %d, %d bytes), received (%d, %d, %d bytes), rc %d\n", index, src,
           probed->MPI_TAG, bytes, got->MPI_SOURCE, got->MPI_TAG, got_bytes, rc);
    return;
  }
  int32_t h[kHeader] = {src, probed->MPI_TAG, -1, 0};
  if (bytes) memcpy(h, buf, sizeof h);
  int seq = h[2];
  if (bytes == 0) { /* empty: the next empty sequence number of the channel is unknown, count it */
    atomic_fetch_sub(&remaining[chan(src, ti)], 1);
    atomic_fetch_add(&received, 1);
    return;
  }
  int ok = h[0] == src && h[1] == probed->MPI_TAG && seq >= 0 && seq < per_sender && h[3] == bytes &&
           bytes_of(src, seq) == bytes;
  for (int i = (int)sizeof h; ok && i < bytes; ++i) ok = buf[i] == fill(h, i);
  if (!ok) {
    atomic_fetch_add(&corrupt, 1);
    printf("scale_probe: thread %d: corrupt message from %d tag %d seq %d\n", index, src, probed->MPI_TAG, seq);
    return;
  }
  if (seq <= last[chan(src, ti)]) atomic_fetch_add(&order_violations, 1);
  last[chan(src, ti)] = seq;
  atomic_fetch_add(&seen[(long)src * per_sender + seq], 1);
  atomic_fetch_sub(&remaining[chan(src, ti)], 1);
  atomic_fetch_add(&received, 1);
}

static void* receiver(void* arg) {
  int index = *(int*)arg;
  int* last = malloc(size * kTags * sizeof *last);
  for (int i = 0; i < size * kTags; ++i) last[i] = -1;
  uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(index + 1);
  for (long i = index;; ++i) {
    int src, tag, flag = 0;
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    /* A pattern over a channel chosen anew at each poll: a sender blocked in a rendezvous send on
       one channel sends nothing more on the others until that one is received. */
    while (!flag && choose(&rng, (int)(i % 4), &src, &tag)) {
      int rc = native_mprobe ? MPI_Improbe(src, tag, MPI_COMM_WORLD, &flag, &msg, &st)
                             : MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &st);
      if (rc != MPI_SUCCESS) {
        atomic_fetch_add(&false_matches, 1);
        break;
      }
    }
    if (!flag) {
      if (left_for(MPI_ANY_SOURCE, MPI_ANY_TAG) == 0) break;
      continue;
    }
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    unsigned char* buf = malloc(bytes ? bytes : 1);
    MPI_Status got;
    int rc = native_mprobe ? MPI_Mrecv(buf, bytes, MPI_BYTE, &msg, &got)
                           : MPI_Recv(buf, bytes, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &got);
    check(index, last, buf, bytes, &st, &got, rc);
    free(buf);
  }
  free(last);
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "scale_probe");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || size < 2) {
    if (rank == 0) printf("usage: scale_probe THREADS MESSAGES_PER_SENDER (2 or more ranks)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  threads = atoi(argv[1]);
  per_sender = atoi(argv[2]);
  native_mprobe = getenv("PROBE_TEST_NATIVE_MPROBE") && atoi(getenv("PROBE_TEST_NATIVE_MPROBE"));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  total = (long)(size - 1) * per_sender;
  remaining = calloc(size * kTags, sizeof *remaining);
  seen = calloc((size_t)size * per_sender, sizeof *seen);
  for (int s = 1; s < size; ++s)
    for (int seq = 0; seq < per_sender; ++seq) atomic_fetch_add(&remaining[chan(s, seq % kTags)], 1);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  if (rank == 0) {
    int* index = malloc(threads * sizeof *index);
    for (int t = 0; t < threads; ++t) index[t] = t;
    run_threads(threads, receiver, index, sizeof *index);
    free(index);
    double dt = now() - t0;
    long missing = 0, twice = 0;
    for (int s = 1; s < size; ++s)
      for (int seq = 0; seq < per_sender; ++seq) {
        int n = atomic_load(&seen[(long)s * per_sender + seq]);
        if (bytes_of(s, seq) == 0) continue; /* empty ones are counted per channel */
        missing += n == 0;
        twice += n > 1;
      }
    long left = left_for(MPI_ANY_SOURCE, MPI_ANY_TAG);
    CHECK(atomic_load(&received) == total && left == 0 && missing == 0 && twice == 0,
          "received %ld of %ld, %ld left, %ld missing, %ld twice", atomic_load(&received), total, left, missing,
          twice);
    CHECK(false_matches == 0 && corrupt == 0 && order_violations == 0, "false matches %ld corrupt %ld order %ld",
          atomic_load(&false_matches), atomic_load(&corrupt), atomic_load(&order_violations));
    printf("scale_probe: rank 0: %d threads received %ld messages, false matches %ld, order violations %ld, "
           "rate %.0f/s\n", threads, atomic_load(&received), atomic_load(&false_matches),
           atomic_load(&order_violations), atomic_load(&received) / dt);
  } else {
    run_sender();
  }
  free(remaining);
  free(seen);
  return test_finish();
}

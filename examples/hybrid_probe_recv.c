/* An unmodified hybrid MPI+threads program of the kind tsmpi exists for: the last rank runs
   THREADS threads that each loop "MPI_Probe(any source, any tag) -> malloc(size) -> MPI_Recv(the
   probed source and tag)", the other ranks send MESSAGES messages of varying sizes on a few tags.
   With several receiving threads one thread can receive the message another thread probed (a
   false match): the size it allocated is then wrong, or the receive is truncated. The program
   counts these, and checks that every message arrived exactly once with intact contents.

   usage: hybrid_probe_recv THREADS MESSAGES      (run on 2 or more ranks)
   It always terminates: after its data each sender sends THREADS end markers per tag, and a
   thread stops at its first end marker, so a thread waiting on a stolen message's (source, tag)
   always finds one more; the main thread then drains what is left. */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kTags = 4, kHeader = 4 };
static const int kSizes[] = {16, 64, 512, 4096, 32768};
enum { kSizeCount = sizeof kSizes / sizeof kSizes[0] };

typedef struct { int source, seq, tag, size; } Header; /* seq < 0: end marker */

static int threads, messages, senders, receiver;
static atomic_int* seen;          /* per (sender, seq): how often received */
static atomic_long false_matches, truncated, corrupt, received_by_threads;

static int message_size(int seq) { return kSizes[(seq / kTags) % kSizeCount]; }
static unsigned char fill(const Header* h, int i) { return (unsigned char)(h->seq * 13 + h->source * 7 + i); }

static void check_payload(const unsigned char* buf, int bytes) {
  Header h;
  memcpy(&h, buf, sizeof h);
  if (h.seq < 0) return;
  if (h.source < 0 || h.source >= senders || h.seq >= messages) { atomic_fetch_add(&corrupt, 1); return; }
  atomic_fetch_add(&seen[h.source * messages + h.seq], 1);
  if (bytes != h.size) { atomic_fetch_add(&corrupt, 1); return; }
  for (int i = (int)sizeof h; i < h.size; ++i)
    if (buf[i] != fill(&h, i)) { atomic_fetch_add(&corrupt, 1); return; }
}

/* Returns 1 when the message was an end marker. */
static int receive_probed(MPI_Comm comm) {
  MPI_Status probed, got;
  MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &probed);
  int bytes;
  MPI_Get_count(&probed, MPI_BYTE, &bytes);
  unsigned char* buf = malloc(bytes);
  int rc = MPI_Recv(buf, bytes, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, comm, &got);
  int end = 0;
  if (rc != MPI_SUCCESS) { /* MPI_ERR_TRUNCATE: a larger message than the probed one; its */
    atomic_fetch_add(&false_matches, 1); /* contents are lost (the buffer may hold nothing) */
    atomic_fetch_add(&truncated, 1);
  } else {
    int got_bytes;
    MPI_Get_count(&got, MPI_BYTE, &got_bytes);
    Header h;
    memcpy(&h, buf, sizeof h);
    if (got_bytes != bytes) atomic_fetch_add(&false_matches, 1);
    check_payload(buf, got_bytes);
    end = h.seq < 0;
  }
  free(buf);
  atomic_fetch_add(&received_by_threads, 1);
  return end;
}

static void* receiver_thread(void* arg) {
  MPI_Comm comm = *(MPI_Comm*)arg;
  while (!receive_probed(comm)) {
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  threads = argc > 1 ? atoi(argv[1]) : 4;
  messages = argc > 2 ? atoi(argv[2]) : 4000;
  if (provided < MPI_THREAD_MULTIPLE || size < 2 || threads < 1 || messages < 1) {
    if (rank == 0) fprintf(stderr, "hybrid_probe_recv: needs MPI_THREAD_MULTIPLE, 2+ ranks, THREADS MESSAGES > 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  senders = size - 1;
  receiver = size - 1;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); /* count truncation instead of aborting */
  double start = MPI_Wtime();

  if (rank != receiver) {
    unsigned char* buf = malloc(kSizes[kSizeCount - 1]);
    for (int seq = 0; seq < messages; ++seq) {
      Header h = {rank, seq, seq % kTags, message_size(seq)};
      memcpy(buf, &h, sizeof h);
      for (int i = (int)sizeof h; i < h.size; ++i) buf[i] = fill(&h, i);
      MPI_Send(buf, h.size, MPI_BYTE, receiver, h.tag, comm);
    }
    for (int tag = 0; tag < kTags; ++tag)
      for (int t = 0; t < threads; ++t) {
        Header h = {rank, -1, tag, (int)sizeof(Header)};
        MPI_Send(&h, sizeof h, MPI_BYTE, receiver, tag, comm);
      }
    free(buf);
  } else {
    seen = calloc((size_t)senders * messages, sizeof *seen);
    pthread_t* tids = malloc(threads * sizeof *tids);
    for (int t = 0; t < threads; ++t) pthread_create(&tids[t], NULL, receiver_thread, &comm);
    for (int t = 0; t < threads; ++t) pthread_join(tids[t], NULL);
    long total = (long)senders * (messages + kTags * threads);
    for (long left = total - received_by_threads; left > 0; --left) {
      unsigned char* buf = malloc(kSizes[kSizeCount - 1]);
      MPI_Status st;
      MPI_Recv(buf, kSizes[kSizeCount - 1], MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
      int bytes;
      MPI_Get_count(&st, MPI_BYTE, &bytes);
      check_payload(buf, bytes);
      free(buf);
    }
    long lost = 0, duplicated = 0;
    for (long i = 0; i < (long)senders * messages; ++i) {
      if (seen[i] == 0) ++lost;
      if (seen[i] > 1) ++duplicated;
    }
    double seconds = MPI_Wtime() - start;
    printf("hybrid_probe_recv: %d threads, %ld messages from %d senders in %.3f s: "
           "%ld false matches (%ld truncated), %ld corrupt\n",
           threads, (long)senders * messages, senders, seconds, (long)false_matches, (long)truncated,
           (long)corrupt);
    /* A truncated receive destroys one message (an end marker or data): data lost that way is
       the race's damage, anything else is a bug. */
    int accounted = duplicated == 0 && corrupt == 0 && lost <= truncated;
    if (accounted)
      printf("hybrid_probe_recv: all %ld messages accounted for (%ld destroyed by truncation)\n",
             (long)senders * messages, lost);
    else
      printf("hybrid_probe_recv: %ld messages lost (%ld truncated), %ld received twice\n", lost,
             (long)truncated, duplicated);
    fflush(stdout);
    free(tids);
    free(seen);
    if (!accounted) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}

/* asp_finalize: MPI processes of one address space finalize at different times.

   usage: asp_finalize staggered|mixed [ROUNDS]   (ROUNDS of traffic per stage, default 20)

   MPI_Init_thread(MPIX_THREAD_ATTACH); one pthread per MPI process, thread i attached to index
   i. Before any finalize, communicators live_f = the MPI processes with index >= f (of every
   address space) are made by MPI_Comm_split. Stage f = 0 .. K-1: the processes with index >= f
   exchange ROUNDS rounds of messages around the ring of live_f (MPI_Sendrecv, 1000 ints, data
   checked) and an MPI_Allreduce over it; then the processes with index f give their verdict
   (failures summed over live_f: everything seen so far) and leave:
     - staggered: each calls MPI_Finalize from its thread (MPI_Finalized true there, while the
       MPI processes still working see false); the last one ends the MPI underneath;
     - mixed: index 0 calls MPI_Finalize from its thread, the others leave without finalizing
       and the main thread (which initialized MPI, never attached) calls MPI_Finalize once
       after joining, for every MPI process of its address space that has not finalized (with
       K = 1 there is none left: a second MPI_Finalize would be erroneous).
   Each MPI process prints "asp_finalize: rank R: ok" before it leaves. */
#include <pthread.h>

#include "asp_util.h"

static int mixed, rounds = 20;
static MPI_Comm live[ASP_MAXK][ASP_MAXK]; /* [index][f] */

static void traffic(MPI_Comm c, int f) {
  int r, n;
  MPI_OK(MPI_Comm_rank(c, &r));
  MPI_OK(MPI_Comm_size(c, &n));
  CHECK(n == asp_N / asp_K * (asp_K - f), "live_%d has %d MPI processes", f, n);
  int right = (r + 1) % n, left = (r + n - 1) % n, len = 1000;
  int *out = malloc(sizeof(int) * len), *in = malloc(sizeof(int) * len);
  for (int k = 0; k < rounds; ++k) {
    pattern_fill(out, len, r, right, f, k);
    MPI_OK(MPI_Sendrecv(out, len, MPI_INT, right, f, in, len, MPI_INT, left, f, c, MPI_STATUS_IGNORE));
    int bad = pattern_verify(in, len, left, r, f, k);
    CHECK(bad < 0, "stage %d round %d: element %d from %d wrong", f, k, bad, left);
  }
  long long sum = -1, mine = asp_rank;
  MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, c));
  long long want = 0;
  for (int w = 0; w < asp_N; ++w) want += w % asp_K >= f ? w : 0;
  CHECK(sum == want, "stage %d: Allreduce over the live processes = %lld, expected %lld", f, sum, want);
  free(out);
  free(in);
}

static void* thread_main(void* arg) {
  int i = (int)(intptr_t)arg, K = asp_K;
  asp_attach(i);
  for (int f = 0; f < K; ++f) /* collective over MPI_COMM_WORLD: every MPI process, every f */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, i >= f ? 0 : MPI_UNDEFINED, asp_rank, &live[i][f]));
  int total = -1;
  for (int f = 0; f <= i; ++f) {
    if (f == 0) asp_set_stage("stage 0");
    int fin = -1;
    MPI_OK(MPI_Finalized(&fin));
    CHECK(fin == 0, "stage %d: MPI_Finalized = %d in a working MPI process", f, fin);
    traffic(live[i][f], f);
    /* Everything seen so far, summed over the live processes: the verdict of those leaving. */
    int mine = atomic_load(&asp_failures[i]);
    if (i == 0) mine += atomic_load(&asp_failures[ASP_MAXK]);
    MPI_OK(MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, live[i][f]));
  }
  for (int f = 0; f <= i; ++f) MPI_OK(MPI_Comm_free(&live[i][f]));
  asp_say("asp_finalize: rank %d: %s\n", asp_rank, total ? "FAILED" : "ok");
  if (!mixed || i == 0) {
    int rc = MPI_Finalize(), fin = -1, init = -1;
    if (rc != MPI_SUCCESS) asp_say("asp_finalize: rank %d: MPI_Finalize returned %d: FAILED\n", asp_rank, rc);
    MPI_Finalized(&fin);
    MPI_Initialized(&init);
    if (fin != 1 || init != 1)
      asp_say("asp_finalize: rank %d: after MPI_Finalize: MPI_Finalized %d, MPI_Initialized %d (expected 1 1): FAILED\n",
              asp_rank, fin, init);
  }
  return (void*)(intptr_t)(total != 0);
}

int main(int argc, char** argv) {
  mixed = argc > 1 && strcmp(argv[1], "mixed") == 0;
  if (argc > 2) rounds = atoi(argv[2]);
  asp_init(&argc, &argv, "asp_finalize", MPIX_THREAD_ATTACH);
  int K = asp_K, failed = 0;
  pthread_t t[ASP_MAXK];
  for (int i = 0; i < K; ++i) pthread_create(&t[i], NULL, thread_main, (void*)(intptr_t)i);
  for (int i = 0; i < K; ++i) {
    void* st;
    pthread_join(t[i], &st);
    failed |= st != NULL;
  }
  if (mixed && K > 1) {
    int rc = MPI_Finalize(); /* the MPI processes 1 .. K-1 of this address space */
    if (rc != MPI_SUCCESS) {
      asp_say("asp_finalize: pid %d: MPI_Finalize by the main thread returned %d: FAILED\n", (int)getpid(), rc);
      failed = 1;
    }
  }
  return failed;
}

/* asp_layout: the shape of an address space (MPI Forum draft, ticket 310, §12.5) under
   `tsmpirun -asp K -np N`.

   usage: asp_layout attach|reattach [unattached_errors] [call_errors]

   The main thread initializes at MPIX_THREAD_ATTACH or MPIX_THREAD_REATTACH and never
   attaches; per MPI process index i it starts two pthreads, A_i and B_i, plus one thread C
   that never attaches. Checked:
     - provided == the level asked; "asp" of MPI_INFO_ENV == K, read by the unattached main
       thread (as the draft's examples do) and by every attached thread;
     - MPI_Initialized false in the main thread, in C and in A_i before it attaches; true after;
     - MPI_Is_thread_main true in A_i (first to attach to i: B_i attaches after a barrier),
       false in B_i; MPI_Query_thread == the level;
     - world rank % K == i, A_i and B_i have the same rank, N % K == 0, N/K address spaces;
     - MPI_Allgather of (pid, host) by the A threads: ranks p*K .. p*K+K-1 are exactly the ranks
       in one OS process (contiguous per address space);
     - MPI_COMM_SELF: size 1, rank 0, shared by the threads of one MPI process (A_i sends, B_i
       receives on it);
     - MPI_Comm_split_type(MPIX_COMM_TYPE_ADDRESS_SPACE): size K, rank i (key 0), K-1-i (key
       -i), its members are world ranks P*K .. P*K+K-1 in order, an Allreduce over it;
       MPI_COMM_TYPE_SHARED: every MPI process of the node (the tests run on one machine);
     - with "unattached_errors": C, unattached, sets MPI_ERRORS_RETURN on MPI_COMM_WORLD (the
       handler for threads that are no MPI process; the MPI processes' own stay as they are);
       MPIX_Thread_attach(K) and (-1) from C return an error, and C stays unattached;
     - attach: a second MPIX_Thread_attach by B_i (same index, other index) returns an error
       and B_i keeps its rank; reattach: B_i moves to index (i+1)%K (rank, Is_thread_main false,
       a message to itself carries the new rank as source), an out-of-range index fails, and
       B_i moves back.
   With "call_errors", by A_i after MPI_ERRORS_RETURN is set on its MPI_COMM_WORLD: a call about
   no communicator (MPI_Type_contiguous(-1)) returns an error of class MPI_ERR_COUNT, and an
   MPI_Send to rank N+5 on MPI_COMM_WORLD calls the handler A_i set there (once per process,
   with MPI_COMM_WORLD as its communicator).
   Finalize: at attach each A_i calls MPI_Finalize for its MPI process; at reattach the main
   thread finalizes every MPI process after joining its threads. */
#include <pthread.h>

#include "asp_util.h"

static pthread_barrier_t phase;
static int reattach, unattached_errors, call_errors;
static atomic_int handler_calls[ASP_MAXK];

/* A program's error handler on MPI_COMM_WORLD: counts its calls per MPI process, those given
   MPI_COMM_WORLD as their communicator. */
static void count_error(MPI_Comm* comm, int* code, ...) {
  (void)code;
  if (asp_idx >= 0 && *comm == MPI_COMM_WORLD) atomic_fetch_add(&handler_calls[asp_idx], 1);
}

/* Errors are raised on the calling MPI process's handlers: a call about no communicator (an
   MPI_Type_contiguous with a negative count) returns its error under MPI_ERRORS_RETURN; an
   invalid destination on MPI_COMM_WORLD calls the program's handler of this MPI process. */
static void check_call_errors(int i) {
  MPI_Errhandler eh;
  MPI_OK(MPI_Comm_create_errhandler(count_error, &eh));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
  int x = 0;
  int rc = MPI_Send(&x, 1, MPI_INT, asp_N + 5, 0, MPI_COMM_WORLD);
  CHECK(rc != MPI_SUCCESS && atomic_load(&handler_calls[i]) == 1,
        "MPI_Send to rank N+5 returned %d, this MPI process's handler called %d times", rc, atomic_load(&handler_calls[i]));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Errhandler_free(&eh));
  MPI_Datatype t;
  int cls = -1;
  rc = MPI_Type_contiguous(-1, MPI_INT, &t);
  if (rc > 0) MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COUNT, "MPI_Type_contiguous(-1) returned %d (class %d)", rc, cls);
}

static void expect_initialized(int want, const char* who) {
  int flag = -1;
  MPI_Initialized(&flag);
  CHECK(flag == want, "%s: MPI_Initialized = %d, expected %d", who, flag, want);
}

static void check_attached(int i, int is_a) {
  expect_initialized(1, is_a ? "A after attach" : "B after attach");
  int main_flag = -1, level = -1;
  MPI_OK(MPI_Is_thread_main(&main_flag));
  CHECK(main_flag == is_a, "index %d thread %s: MPI_Is_thread_main = %d", i, is_a ? "A" : "B", main_flag);
  MPI_OK(MPI_Query_thread(&level));
  CHECK(level == asp_level, "MPI_Query_thread = %d, expected %d", level, asp_level);
  CHECK(asp_rank % asp_K == i, "world rank %d at index %d, K=%d", asp_rank, i, asp_K);
  CHECK(asp_N > 0 && asp_N % asp_K == 0, "world size %d is no multiple of K=%d", asp_N, asp_K);
  int k = asp_info_K();
  CHECK(k == asp_K, "attached thread: MPI_INFO_ENV asp = %d, the main thread read %d", k, asp_K);
  int sr = -1, ss = -1;
  MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &sr));
  MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &ss));
  CHECK(sr == 0 && ss == 1, "MPI_COMM_SELF rank %d size %d", sr, ss);
}

/* Collective checks, by the A thread of each MPI process. */
static void check_world_layout(int i) {
  int K = asp_K, N = asp_N, P = asp_rank / K;
  long long me[2] = {(long long)getpid(), gethostid()};
  long long* all = malloc(sizeof(long long) * 2 * N);
  MPI_OK(MPI_Allgather(me, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, MPI_COMM_WORLD));
  for (int r = 0; r < N; ++r)
    for (int q = 0; q < N; ++q) {
      int same = all[2 * r] == all[2 * q] && all[2 * r + 1] == all[2 * q + 1];
      CHECK(same == (r / K == q / K), "ranks %d and %d: same OS process %d, K=%d", r, q, same, K);
    }
  free(all);

  /* The MPI processes of this address space, by key 0 and by reversed key. */
  for (int rev = 0; rev < 2; ++rev) {
    MPI_Comm as = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_ADDRESS_SPACE, rev ? -i : 0, MPI_INFO_NULL, &as));
    CHECK(as != MPI_COMM_NULL, "split_type ADDRESS_SPACE gave MPI_COMM_NULL");
    if (as == MPI_COMM_NULL) continue;
    int r = -1, n = -1;
    MPI_OK(MPI_Comm_rank(as, &r));
    MPI_OK(MPI_Comm_size(as, &n));
    CHECK(n == K && r == (rev ? K - 1 - i : i), "ADDRESS_SPACE (key %s): rank %d size %d, expected %d %d",
          rev ? "-i" : "0", r, n, rev ? K - 1 - i : i, K);
    MPI_Group g, wg;
    MPI_OK(MPI_Comm_group(as, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int in[ASP_MAXK], out[ASP_MAXK];
    for (int j = 0; j < n && j < ASP_MAXK; ++j) in[j] = j, out[j] = -7;
    if (n == K) {
      MPI_OK(MPI_Group_translate_ranks(g, n, in, wg, out));
      for (int j = 0; j < n; ++j) {
        int want = P * K + (rev ? K - 1 - j : j);
        CHECK(out[j] == want, "ADDRESS_SPACE member %d is world rank %d, expected %d", j, out[j], want);
      }
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    long long sum = -1, mine = asp_rank;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, as));
    CHECK(sum == (long long)K * P * K + K * (K - 1) / 2, "Allreduce over ADDRESS_SPACE: %lld", sum);
    MPI_OK(MPI_Comm_free(&as));
  }

  /* Every MPI process of the job is on this node. */
  MPI_Comm sh = MPI_COMM_NULL;
  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh));
  if (sh != MPI_COMM_NULL) {
    int r = -1, n = -1;
    MPI_OK(MPI_Comm_rank(sh, &r));
    MPI_OK(MPI_Comm_size(sh, &n));
    CHECK(n == N && r == asp_rank, "SHARED: rank %d size %d, expected %d %d", r, n, asp_rank, N);
    MPI_OK(MPI_Comm_free(&sh));
  } else {
    CHECK(0, "split_type SHARED gave MPI_COMM_NULL");
  }
}

static void* thread_a(void* arg) {
  int i = (int)(intptr_t)arg;
  expect_initialized(0, "A before attach");
  asp_attach(i);
  pthread_barrier_wait(&phase); /* 1: every A attached; the B threads attach now */
  pthread_barrier_wait(&phase); /* 2 */
  check_attached(i, 1);
  int token = 1000 + asp_rank;  /* to B_i on this MPI process's MPI_COMM_SELF */
  MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 5, MPI_COMM_SELF));
  check_world_layout(i);
  if (call_errors) check_call_errors(i);
  pthread_barrier_wait(&phase); /* 3: B and C test attach errors */
  pthread_barrier_wait(&phase); /* 4: every check of the address space done */
  if (i == 0) asp_set_stage("verdict");
  asp_verdict();
  if (!reattach) {
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS) asp_say("%s: rank %d: MPI_Finalize returned %d: FAILED\n", asp_name, asp_rank, rc);
  }
  return NULL;
}

static void* thread_b(void* arg) {
  int i = (int)(intptr_t)arg, K = asp_K;
  expect_initialized(0, "B before attach");
  pthread_barrier_wait(&phase); /* 1 */
  asp_attach(i);
  pthread_barrier_wait(&phase); /* 2 */
  check_attached(i, 0);
  int token = -1;
  MPI_Status st;
  MPI_OK(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_SELF, &st));
  CHECK(token == 1000 + asp_rank && st.MPI_SOURCE == 0, "MPI_COMM_SELF: got %d from %d", token, st.MPI_SOURCE);
  pthread_barrier_wait(&phase); /* 3 */
  int rank0 = asp_rank, rc;
  if (!reattach) {
    /* At MPIX_THREAD_ATTACH a thread attaches once. */
    rc = MPIX_Thread_attach(i);
    CHECK(rc != MPI_SUCCESS, "second MPIX_Thread_attach(%d) at ATTACH succeeded", i);
    rc = MPIX_Thread_attach((i + 1) % K);
    CHECK(rc != MPI_SUCCESS, "second MPIX_Thread_attach(%d) at ATTACH succeeded", (i + 1) % K);
    int r = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
    CHECK(r == rank0, "after a refused second attach the rank is %d, was %d", r, rank0);
  } else {
    /* At MPIX_THREAD_REATTACH it moves to the next MPI process of the address space and back. */
    int j = (i + 1) % K;
    asp_attach(j);
    int want = rank0 - i + j, main_flag = -1;
    CHECK(asp_rank == want, "reattached to %d: rank %d, expected %d", j, asp_rank, want);
    MPI_OK(MPI_Is_thread_main(&main_flag));
    CHECK(main_flag == 0, "reattached to %d: MPI_Is_thread_main = %d", j, main_flag);
    int out = 77 + j, in = -1;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, asp_rank, 9, &in, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st));
    CHECK(in == out && st.MPI_SOURCE == want, "message to itself after reattach: %d from %d", in, st.MPI_SOURCE);
    rc = MPIX_Thread_attach(K);
    CHECK(rc != MPI_SUCCESS, "attached thread: MPIX_Thread_attach(K=%d) succeeded", K);
    asp_attach(i);
    CHECK(asp_rank == rank0, "reattached back to %d: rank %d, expected %d", i, asp_rank, rank0);
  }
  pthread_barrier_wait(&phase); /* 4 */
  return NULL;
}

static void* thread_c(void* arg) {
  (void)arg;
  pthread_barrier_wait(&phase); /* 1 */
  pthread_barrier_wait(&phase); /* 2 */
  pthread_barrier_wait(&phase); /* 3: every MPI process's MPI_COMM_WORLD returns errors */
  if (unattached_errors) {
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPIX_Thread_attach(asp_K);
    CHECK(rc != MPI_SUCCESS, "MPIX_Thread_attach(K=%d) succeeded", asp_K);
    rc = MPIX_Thread_attach(-1);
    CHECK(rc != MPI_SUCCESS, "MPIX_Thread_attach(-1) succeeded");
  }
  expect_initialized(0, "C (never attached)");
  pthread_barrier_wait(&phase); /* 4 */
  return NULL;
}

int main(int argc, char** argv) {
  reattach = argc > 1 && strcmp(argv[1], "reattach") == 0;
  for (int a = 2; a < argc; ++a) {
    unattached_errors |= strcmp(argv[a], "unattached_errors") == 0;
    call_errors |= strcmp(argv[a], "call_errors") == 0;
  }
  asp_init(&argc, &argv, "asp_layout", reattach ? MPIX_THREAD_REATTACH : MPIX_THREAD_ATTACH);
  expect_initialized(0, "main thread (initialized MPI, never attached)");
  int K = asp_K, nthreads = 2 * K + 1;
  pthread_barrier_init(&phase, NULL, nthreads);
  pthread_t t[2 * ASP_MAXK + 1];
  for (int i = 0; i < K; ++i) {
    pthread_create(&t[i], NULL, thread_a, (void*)(intptr_t)i);
    pthread_create(&t[K + i], NULL, thread_b, (void*)(intptr_t)i);
  }
  pthread_create(&t[2 * K], NULL, thread_c, NULL);
  for (int i = 0; i < nthreads; ++i) pthread_join(t[i], NULL);
  int failed = 0;
  for (int i = 0; i <= ASP_MAXK; ++i) failed += atomic_load(&asp_failures[i]);
  if (reattach) {
    /* The initializing thread, unattached, finalizes every MPI process of the address space. */
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS) {
      asp_say("asp_layout: pid %d: MPI_Finalize by the main thread returned %d: FAILED\n", (int)getpid(), rc);
      failed = 1;
    }
  }
  return failed ? 1 : 0;
}

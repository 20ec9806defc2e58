/* rk_comm: communicators made inside the region, attributes, error handlers and names, in a
   pthreads code (the process starts T threads per region, ROUNDS regions on one threadcomm).
   usage: rk_comm ROUNDS SPEC            (SPEC as in rk_layout; ROUNDS <= 9)

   At every thread-rank r of N:
     - name: every rank sets "tsmpi threads" on the threadcomm, MPI_Comm_get_name gives it back;
     - MPI_TAG_UB attribute present and >= 32767;
     - attributes per thread-rank: a key with copy and delete callbacks and a key with
       MPI_COMM_NULL_COPY_FN; each rank sets values naming itself, and after a barrier each
       rank reads its own value back; overwriting calls the delete callback with the old value;
     - MPI_Comm_dup: MPI_CONGRUENT; the copy callback runs on the thread of the rank whose
       value it copies (once per rank), the dup holds the copied value, not the NULL_COPY key;
       its oldcomm is the communicator duplicated, on which it reads the rank and the value
       (MPI calls inside a callback, also under serialize mode);
       error handler inherited (MPI_ERRORS_RETURN); its own name; messages with the same
       (source, tag) on the threadcomm and on the dup do not mix; an Allreduce on the dup;
     - MPI_Comm_idup and MPI_Comm_idup_with_info (MPI-4; of the threadcomm and of the dup) pending at
       once, started along a chain of synchronous sends (a blocking start would hang), completed
       in reverse order: the copy callbacks ran at the call, congruent, copied values, messages
       on the three communicators do not mix, an Allreduce on one;
     - a user error handler set on the dup is called, on the calling thread, with the dup, for
       a send to a rank that does not exist (class MPI_ERR_RANK), and the call returns the code;
       MPI_Comm_call_errhandler calls it too;
     - MPI_Comm_split by parity with reversed keys: sizes, ranks, names per colour, a ring and an
       Allreduce on it; a split with MPI_UNDEFINED for r % 3 == 2 gives MPI_COMM_NULL there;
       an attribute set on the split is copied to the split's dup;
     - every communicator freed inside the region: the delete callbacks ran once per value,
       on the owning rank's thread, with exactly the values set and copied, each with the
       communicator the value was on (still usable: MPI_Comm_rank on it);
     - an attribute the program set on MPI_COMM_SELF is never copied by tsmpi's private
       communicators (its copy callback counts). */
#include <pthread.h>

#include "ranks_util.h"

/* The MPI-1 attribute calls are tested on purpose. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static MPI_Comm tc;
static int N, T, offset, round_no;
static int kv_copy, kv_nocopy;
static MPI_Errhandler eh_count;

static __thread int tls_old_rank; /* the caller's rank in the communicator being duplicated */
static __thread int tls_copies, tls_deletes, tls_eh_calls, tls_eh_class;
static __thread long long tls_deleted_sum;
static __thread MPI_Comm tls_eh_comm, tls_copy_old, tls_delete_comm;
static int kv_self, self_copies, kv_mpi1;

static int value_of(int r, int k) { return 1 + r * 1000 + round_no * 100 + k * 10; }
static int rank_in(void* v) { return (int)(((intptr_t)v - 1) / 1000); }

static int copy_cb(MPI_Comm old, int kv, void* extra, void* in, void* out, int* flag) {
  ++tls_copies;
  CHECK(rank_in(in) == rk_my, "copy callback for the value of rank %d ran on thread-rank %d", rank_in(in), rk_my);
  /* oldcomm is the communicator being duplicated: this rank's rank and value are there. */
  tls_copy_old = old;
  int rr = -1, have = 0;
  void* v = NULL;
  CHECK(MPI_Comm_rank(old, &rr) == MPI_SUCCESS && rr == tls_old_rank, "copy callback: rank %d in oldcomm, expected %d",
        rr, tls_old_rank);
  CHECK(MPI_Comm_get_attr(old, kv, &v, &have) == MPI_SUCCESS && have && v == in,
        "copy callback: oldcomm's value %ld (flag %d), the MPI gave %ld", (long)(intptr_t)v, have, (long)(intptr_t)in);
  *(void**)out = (void*)((intptr_t)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_cb(MPI_Comm comm, int kv, void* v, void* extra) {
  ++tls_deletes;
  tls_deleted_sum += (intptr_t)v;
  tls_delete_comm = comm;
  CHECK(rank_in(v) == rk_my, "delete callback for the value of rank %d ran on thread-rank %d", rank_in(v), rk_my);
  int rr = -1;
  CHECK(MPI_Comm_rank(comm, &rr) == MPI_SUCCESS && rr >= 0, "delete callback: MPI_Comm_rank on its communicator");
  return MPI_SUCCESS;
}
static int self_copy_cb(MPI_Comm old, int kv, void* extra, void* in, void* out, int* flag) {
  __atomic_add_fetch(&self_copies, 1, __ATOMIC_RELAXED);
  *flag = 0;
  return MPI_SUCCESS;
}
static void eh_fn(MPI_Comm* comm, int* code, ...) {
  ++tls_eh_calls;
  MPI_Error_class(*code, &tls_eh_class);
  tls_eh_comm = *comm;
}

static void check_name(MPI_Comm c, const char* want, const char* what) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_OK(MPI_Comm_get_name(c, name, &len));
  CHECK(len == (int)strlen(want) && !strcmp(name, want), "%s: name '%s' (%d), expected '%s'", what, name, len, want);
}

static void* region(void* arg) {
  (void)arg;
  MPI_OK(MPIX_Threadcomm_start(tc));
  int r = -1, n = -1;
  MPI_OK(MPI_Comm_rank(tc, &r));
  MPI_OK(MPI_Comm_size(tc, &n));
  rk_my = r;
  tls_copies = tls_deletes = tls_eh_calls = 0;
  tls_deleted_sum = 0;
  CHECK(n == N, "size %d, expected %d", n, N);
  int left = (r - 1 + N) % N, right = (r + 1) % N;
  long long expect_deleted = 0;
  int expect_deletes = 0;
  if (r == offset) rk_set_stage("names and MPI_TAG_UB");
  MPI_Errhandler inherited = MPI_ERRHANDLER_NULL;
  MPI_OK(MPI_Comm_get_errhandler(tc, &inherited));
  CHECK(inherited == MPI_ERRORS_RETURN, "the threadcomm did not inherit MPI_ERRORS_RETURN from MPI_COMM_WORLD");
  if (inherited != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&inherited);

  MPI_OK(MPI_Comm_set_name(tc, "tsmpi threads"));
  MPI_OK(MPI_Barrier(tc));
  check_name(tc, "tsmpi threads", "threadcomm");
  int* tagub = NULL;
  int flag = 0;
  MPI_OK(MPI_Comm_get_attr(tc, MPI_TAG_UB, &tagub, &flag));
  CHECK(flag && tagub && *tagub >= 32767, "MPI_TAG_UB: flag %d value %d", flag, tagub ? *tagub : -1);

  if (r == offset) rk_set_stage("attributes on the threadcomm");
  MPI_OK(MPI_Comm_set_attr(tc, kv_copy, (void*)(intptr_t)value_of(r, 0)));
  MPI_OK(MPI_Comm_set_attr(tc, kv_nocopy, (void*)(intptr_t)value_of(r, 1)));
  MPI_OK(MPI_Barrier(tc)); /* every rank has set its values before anyone reads */
  void* got = NULL;
  MPI_OK(MPI_Comm_get_attr(tc, kv_copy, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 0), "own value: flag %d value %ld, expected %d", flag, (long)(intptr_t)got,
        value_of(r, 0));
  MPI_OK(MPI_Comm_get_attr(tc, kv_nocopy, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 1), "own value (second key): flag %d value %ld, expected %d", flag,
        (long)(intptr_t)got, value_of(r, 1));
  /* Overwrite: the delete callback gets the old value. */
  MPI_OK(MPI_Comm_set_attr(tc, kv_copy, (void*)(intptr_t)value_of(r, 2)));
  expect_deleted += value_of(r, 0), ++expect_deletes;
  CHECK(tls_deletes == 1 && tls_deleted_sum == value_of(r, 0), "overwrite: %d deletes, sum %lld", tls_deletes, tls_deleted_sum);
  CHECK(tls_delete_comm == tc, "overwrite: the delete callback's communicator is not the threadcomm");
  /* MPI-1's keyval and attribute calls (deprecated, not removed). */
  tls_delete_comm = MPI_COMM_NULL;
  MPI_OK(MPI_Attr_put(tc, kv_mpi1, (void*)(intptr_t)value_of(r, 9)));
  MPI_OK(MPI_Attr_get(tc, kv_mpi1, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 9), "MPI_Attr_get: flag %d value %ld", flag, (long)(intptr_t)got);
  MPI_OK(MPI_Attr_delete(tc, kv_mpi1));
  expect_deleted += value_of(r, 9), ++expect_deletes;
  CHECK(tls_deletes == 2 && tls_delete_comm == tc, "MPI_Attr_delete: %d deletes, %s communicator", tls_deletes,
        tls_delete_comm == tc ? "the threadcomm as" : "not the threadcomm as");
  MPI_OK(MPI_Barrier(tc));
  MPI_OK(MPI_Comm_get_attr(tc, kv_copy, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 2), "after overwrite: %ld", (long)(intptr_t)got);

  if (r == offset) rk_set_stage("MPI_Comm_dup");
  MPI_Comm d = MPI_COMM_NULL;
  tls_old_rank = r;
  MPI_OK(MPI_Comm_dup(tc, &d));
  CHECK(tls_copies == 1, "copy callback ran %d times on this thread-rank", tls_copies);
  CHECK(tls_copy_old == tc, "MPI_Comm_dup: the copy callback's oldcomm is not the threadcomm");
  int cmp = -1;
  MPI_OK(MPI_Comm_compare(tc, d, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "compare(threadcomm, dup) = %d", cmp);
  MPI_OK(MPI_Comm_get_attr(d, kv_copy, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 2) + 1, "copied value on the dup: flag %d value %ld, expected %d", flag,
        (long)(intptr_t)got, value_of(r, 2) + 1);
  MPI_OK(MPI_Comm_get_attr(d, kv_nocopy, &got, &flag));
  CHECK(!flag, "MPI_COMM_NULL_COPY_FN key present on the dup");
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  MPI_OK(MPI_Comm_get_errhandler(d, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "dup's error handler is not the inherited MPI_ERRORS_RETURN");
  if (eh != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&eh);
  MPI_OK(MPI_Comm_set_name(d, "tsmpi threads dup"));
  MPI_OK(MPI_Barrier(d));
  check_name(d, "tsmpi threads dup", "dup");
  check_name(tc, "tsmpi threads", "threadcomm after naming the dup");

  /* Same (source, tag) on both communicators: the dup's receive posted first must get the
     dup's message. */
  int a_out = value_of(r, 3), b_out = -value_of(r, 3), a_in = 0, b_in = 0;
  MPI_Request sq[2];
  MPI_OK(MPI_Isend(&a_out, 1, MPI_INT, right, 7, tc, &sq[0]));
  MPI_OK(MPI_Isend(&b_out, 1, MPI_INT, right, 7, d, &sq[1]));
  MPI_Status st;
  MPI_OK(MPI_Recv(&b_in, 1, MPI_INT, left, 7, d, &st));
  MPI_OK(MPI_Recv(&a_in, 1, MPI_INT, left, 7, tc, &st));
  MPI_OK(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));
  CHECK(a_in == value_of(left, 3) && b_in == -value_of(left, 3), "threadcomm got %d, dup got %d: mixed", a_in, b_in);
  long long s1 = r, s1o = -1;
  MPI_OK(MPI_Allreduce(&s1, &s1o, 1, MPI_LONG_LONG, MPI_SUM, d));
  CHECK(s1o == (long long)N * (N - 1) / 2, "Allreduce on the dup: %lld", s1o);

  if (r == offset) rk_set_stage("MPI_Comm_idup");
  /* A chain: rank 0 starts its duplications, then sends synchronously to rank 1, which starts
     its own only once it has received, and so on; an MPI_Comm_idup that waited for the other
     members would hang at rank 0. Two are pending at once (the threadcomm's and, with an info,
     the dup's) and complete in reverse order. MPI_Comm_idup is MPI_Comm_dup done at the call
     (MPI-4.0 §7.4.2): the copy callbacks have run when it returns. */
  MPI_Comm i1 = MPI_COMM_NULL, i2 = MPI_COMM_NULL;
  MPI_Request iq[2];
  int token = -1;
  if (r > 0) MPI_OK(MPI_Recv(&token, 1, MPI_INT, r - 1, 11, tc, &st));
  CHECK(r == 0 || token == r - 1, "idup chain: token %d from rank %d", token, r - 1);
  MPI_OK(MPI_Comm_idup(tc, &i1, &iq[0]));
  CHECK(tls_copy_old == tc, "MPI_Comm_idup: the copy callback's oldcomm is not the threadcomm");
#if MPI_VERSION >= 4 /* MPI-4 (Open MPI 4.1 has no MPI_Comm_idup_with_info) */
  MPI_Info info;
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
  MPI_OK(MPI_Comm_idup_with_info(d, info, &i2, &iq[1]));
  MPI_OK(MPI_Info_free(&info));
#else
  MPI_OK(MPI_Comm_idup(d, &i2, &iq[1]));
#endif
  CHECK(tls_copies == 3, "copy callbacks after two MPI_Comm_idup calls: %d on this thread-rank (expected 3)", tls_copies);
  CHECK(tls_copy_old == d, "MPI_Comm_idup of the dup: the copy callback's oldcomm is not the dup");
  token = r;
  if (r < N - 1) MPI_OK(MPI_Ssend(&token, 1, MPI_INT, r + 1, 11, tc));
  MPI_OK(MPI_Wait(&iq[1], &st));
  MPI_OK(MPI_Wait(&iq[0], &st));
  CHECK(iq[0] == MPI_REQUEST_NULL && iq[1] == MPI_REQUEST_NULL, "MPI_Wait left an idup request active");
  MPI_OK(MPI_Comm_compare(tc, i1, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "compare(threadcomm, its idup) = %d", cmp);
  MPI_OK(MPI_Comm_compare(d, i2, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "compare(dup, its idup) = %d", cmp);
  int ir = -1;
  MPI_OK(MPI_Comm_rank(i2, &ir));
  CHECK(ir == r, "rank %d in the dup's idup", ir);
  MPI_OK(MPI_Comm_get_attr(i1, kv_copy, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 2) + 1, "idup of the threadcomm: flag %d value %ld, expected %d", flag,
        (long)(intptr_t)got, value_of(r, 2) + 1);
  MPI_OK(MPI_Comm_get_attr(i1, kv_nocopy, &got, &flag));
  CHECK(!flag, "MPI_COMM_NULL_COPY_FN key present on the idup");
  MPI_OK(MPI_Comm_get_attr(i2, kv_copy, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 2) + 2, "idup of the dup: flag %d value %ld, expected %d", flag,
        (long)(intptr_t)got, value_of(r, 2) + 2);
  /* The same (source, tag) on the threadcomm and both idups, received in another order. */
  int c_out[3] = {value_of(r, 5), value_of(r, 6), value_of(r, 7)}, c_in[3] = {0, 0, 0};
  MPI_Comm cs3[3] = {tc, i1, i2};
  MPI_Request cq[3];
  for (int i = 0; i < 3; ++i) MPI_OK(MPI_Isend(&c_out[i], 1, MPI_INT, right, 12, cs3[i], &cq[i]));
  for (int i = 2; i >= 0; --i) MPI_OK(MPI_Recv(&c_in[i], 1, MPI_INT, left, 12, cs3[i], &st));
  MPI_OK(MPI_Waitall(3, cq, MPI_STATUSES_IGNORE));
  CHECK(c_in[0] == value_of(left, 5) && c_in[1] == value_of(left, 6) && c_in[2] == value_of(left, 7),
        "threadcomm and idups mixed messages: %d %d %d", c_in[0], c_in[1], c_in[2]);
  long long is = r, iso = -1;
  MPI_OK(MPI_Allreduce(&is, &iso, 1, MPI_LONG_LONG, MPI_SUM, i2));
  CHECK(iso == (long long)N * (N - 1) / 2, "Allreduce on the idup: %lld", iso);
  MPI_Comm i2_was = i2;
  MPI_OK(MPI_Comm_free(&i1));
  MPI_OK(MPI_Comm_free(&i2));
  CHECK(tls_delete_comm == i2_was, "freeing an idup: the delete callback's communicator is not the one freed");
  expect_deleted += 2LL * value_of(r, 2) + 3, expect_deletes += 2;

  if (r == offset) rk_set_stage("user error handler");
  MPI_OK(MPI_Comm_set_errhandler(d, eh_count));
  int x = 1;
  int rc = MPI_Send(&x, 1, MPI_INT, N + 5, 0, d);
  CHECK(rk_error_class(rc) == MPI_ERR_RANK, "send to rank %d: class %d, expected MPI_ERR_RANK", N + 5, rk_error_class(rc));
  CHECK(tls_eh_calls == 1 && tls_eh_class == MPI_ERR_RANK && tls_eh_comm == d,
        "error handler: %d calls on this thread, class %d, %s communicator", tls_eh_calls, tls_eh_class,
        tls_eh_comm == d ? "the dup as" : "not the dup as");
  tls_eh_comm = MPI_COMM_NULL;
  MPI_OK(MPI_Comm_call_errhandler(d, MPI_ERR_TAG));
  CHECK(tls_eh_calls == 2 && tls_eh_class == MPI_ERR_TAG && tls_eh_comm == d,
        "MPI_Comm_call_errhandler: %d calls, class %d", tls_eh_calls, tls_eh_class);
  MPI_OK(MPI_Comm_get_errhandler(tc, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "threadcomm's error handler changed by setting the dup's");
  if (eh != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&eh);

  if (r == offset) rk_set_stage("MPI_Comm_split");
  int color = r % 2;
  MPI_Comm s = MPI_COMM_NULL;
  MPI_OK(MPI_Comm_split(tc, color, N - r, &s));
  int members = 0, above = 0;
  for (int i = 0; i < N; ++i)
    if (i % 2 == color) {
      ++members;
      if (i > r) ++above;
    }
  int sr = -1, sn = -1;
  MPI_OK(MPI_Comm_rank(s, &sr));
  MPI_OK(MPI_Comm_size(s, &sn));
  CHECK(sr == above && sn == members, "split: rank %d size %d, expected %d %d", sr, sn, above, members);
  MPI_OK(MPI_Comm_get_attr(s, kv_copy, &got, &flag));
  CHECK(!flag, "the split has the threadcomm's attribute (only dup copies)");
  MPI_OK(MPI_Comm_set_name(s, color ? "odd" : "even"));
  /* Ring on the split: payload = the sender's threadcomm rank. */
  int to = (sr + 1) % sn, from = (sr - 1 + sn) % sn, pin = -1;
  MPI_OK(MPI_Sendrecv(&r, 1, MPI_INT, to, 9, &pin, 1, MPI_INT, from, 9, s, &st));
  /* threadcomm rank of split rank k in colour c: the k-th largest of colour c */
  int want = -1;
  for (int i = N - 1, k = 0; i >= 0; --i)
    if (i % 2 == color) {
      if (k == from) want = i;
      ++k;
    }
  CHECK(pin == want && st.MPI_SOURCE == from, "split ring: got %d from %d, expected %d from %d", pin, st.MPI_SOURCE, want, from);
  long long cs = r, cso = -1, cwant = 0;
  for (int i = 0; i < N; ++i)
    if (i % 2 == color) cwant += i;
  MPI_OK(MPI_Allreduce(&cs, &cso, 1, MPI_LONG_LONG, MPI_SUM, s));
  CHECK(cso == cwant, "Allreduce on the split: %lld, expected %lld", cso, cwant);
  MPI_OK(MPI_Barrier(s));
  check_name(s, color ? "odd" : "even", "split");
  /* An attribute on the split, copied to its dup. */
  MPI_OK(MPI_Comm_set_attr(s, kv_copy, (void*)(intptr_t)value_of(r, 4)));
  MPI_Comm sd = MPI_COMM_NULL;
  tls_old_rank = sr;
  MPI_OK(MPI_Comm_dup(s, &sd));
  CHECK(tls_copies == 4, "copy callback ran %d times on this thread-rank (expected 4)", tls_copies);
  CHECK(tls_copy_old == s, "MPI_Comm_dup of the split: the copy callback's oldcomm is not the split");
  MPI_OK(MPI_Comm_get_attr(sd, kv_copy, &got, &flag));
  CHECK(flag && (intptr_t)got == value_of(r, 4) + 1, "split's dup: flag %d value %ld", flag, (long)(intptr_t)got);
  int sdr = -1;
  MPI_OK(MPI_Comm_rank(sd, &sdr));
  CHECK(sdr == sr, "split's dup rank %d, split rank %d", sdr, sr);
  /* A split with MPI_UNDEFINED. */
  MPI_Comm u = MPI_COMM_NULL;
  MPI_OK(MPI_Comm_split(tc, r % 3 == 2 ? MPI_UNDEFINED : 0, r, &u));
  if (r % 3 == 2) {
    CHECK(u == MPI_COMM_NULL, "MPI_UNDEFINED colour gave a communicator");
  } else {
    int un = -1, ur = -1, uwant = 0, usize = 0;
    for (int i = 0; i < N; ++i)
      if (i % 3 != 2) {
        if (i < r) ++uwant;
        ++usize;
      }
    MPI_OK(MPI_Comm_size(u, &un));
    MPI_OK(MPI_Comm_rank(u, &ur));
    CHECK(un == usize && ur == uwant, "split without the r%%3==2 ranks: rank %d size %d, expected %d %d", ur, un, uwant,
          usize);
    MPI_OK(MPI_Barrier(u));
    MPI_OK(MPI_Comm_free(&u));
  }

  if (r == offset) rk_set_stage("freeing inside the region");
  MPI_OK(MPI_Comm_free(&sd));
  expect_deleted += value_of(r, 4) + 1, ++expect_deletes;
  MPI_OK(MPI_Comm_free(&s));
  expect_deleted += value_of(r, 4), ++expect_deletes;
  MPI_Comm d_was = d;
  MPI_OK(MPI_Comm_free(&d));
  expect_deleted += value_of(r, 2) + 1, ++expect_deletes;
  CHECK(tls_delete_comm == d_was, "freeing the dup: the delete callback's communicator is not the dup");
  CHECK(sd == MPI_COMM_NULL && s == MPI_COMM_NULL && d == MPI_COMM_NULL, "handles not MPI_COMM_NULL after MPI_Comm_free");
  MPI_OK(MPI_Comm_delete_attr(tc, kv_copy));
  expect_deleted += value_of(r, 2), ++expect_deletes;
  MPI_OK(MPI_Comm_delete_attr(tc, kv_nocopy));
  expect_deleted += value_of(r, 1), ++expect_deletes;
  CHECK(tls_deletes == expect_deletes && tls_deleted_sum == expect_deleted,
        "delete callbacks: %d with sum %lld, expected %d with sum %lld", tls_deletes, tls_deleted_sum, expect_deletes,
        expect_deleted);
  MPI_OK(MPI_Comm_get_attr(tc, kv_copy, &got, &flag));
  CHECK(!flag, "attribute still there after MPI_Comm_delete_attr");
  /* A value left on the threadcomm goes at MPIX_Threadcomm_finish, its callback given the threadcomm. */
  MPI_OK(MPI_Comm_set_attr(tc, kv_nocopy, (void*)(intptr_t)value_of(r, 8)));
  expect_deleted += value_of(r, 8), ++expect_deletes;
  tls_delete_comm = MPI_COMM_NULL;
  MPI_OK(MPI_Barrier(tc));
  MPI_OK(MPIX_Threadcomm_finish(tc));
  CHECK(tls_deletes == expect_deletes && tls_deleted_sum == expect_deleted && tls_delete_comm == tc,
        "MPIX_Threadcomm_finish: %d deletes with sum %lld (expected %d, %lld), %s communicator", tls_deletes,
        tls_deleted_sum, expect_deletes, expect_deleted, tls_delete_comm == tc ? "the threadcomm as" : "not the threadcomm as");
  rk_my = -1;
  return NULL;
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_comm");
  if (argc < 3) {
    rk_say("usage: rk_comm ROUNDS SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  if (rounds > 9) rounds = 9;
  T = rk_threads_of(argv[2], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  MPI_Comm_create_keyval(copy_cb, delete_cb, &kv_copy, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &kv_nocopy, NULL);
  MPI_Comm_create_errhandler(eh_fn, &eh_count);
  MPI_OK(MPI_Comm_create_keyval(self_copy_cb, MPI_COMM_NULL_DELETE_FN, &kv_self, NULL));
  MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kv_self, &kv_self));
  MPI_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, delete_cb, &kv_mpi1, NULL));
  rk_set_stage("MPIX_Threadcomm_init");
  MPI_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, T, &tc));
  pthread_t* tids = malloc(T * sizeof *tids);
  for (round_no = 0; round_no < rounds; ++round_no) {
    rk_set_stage("region start");
    for (int t = 0; t < T; ++t) pthread_create(&tids[t], NULL, region, NULL);
    for (int t = 0; t < T; ++t) pthread_join(tids[t], NULL);
  }
  free(tids);
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  CHECK(self_copies == 0, "MPI_COMM_SELF's attribute was copied %d times (the program never duplicated it)",
        self_copies);
  MPI_OK(MPI_Comm_delete_attr(MPI_COMM_SELF, kv_self));
  MPI_OK(MPI_Comm_free_keyval(&kv_self));
  MPI_OK(MPI_Keyval_free(&kv_mpi1));
  MPI_Comm_free_keyval(&kv_copy);
  MPI_Comm_free_keyval(&kv_nocopy);
  MPI_Errhandler_free(&eh_count);
  rk_say("rk_comm: rank %d: %d threads of %d thread-ranks, %d regions\n", rk_wrank, T, N, rounds);
  return rk_finish();
}

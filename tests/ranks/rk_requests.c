/* rk_requests: the MPI standard's semantics of request completion (MPI-4.0 §3.7.3-3.7.5, 3.8,
   3.9) on a threadcomm, data and statuses checked. An OpenMP region of T threads per process
   (SPEC as in rk_layout: "A,B" gives process p the entry p mod 2), entered ROUNDS times on one
   threadcomm. r = thread-rank, N = size, left/right = ring neighbours (in the other process at
   the seams). "Empty status": source MPI_ANY_SOURCE, tag MPI_ANY_TAG, MPI_Get_count 0,
   MPI_Test_cancelled false (statuses are filled with junk before each call, so an untouched
   status is seen).

   usage: rk_requests ROUNDS SPEC

     a. completion: Irecvs from the left (one MPI_ANY_SOURCE, one of 0 ints, one of 64 KiB in
        some variants), Isends to the right and MPI_REQUEST_NULL entries in one array, completed
        by each of MPI_Wait (per entry), MPI_Test (per entry, looped), MPI_Waitall,
        MPI_Testall (looped), MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome, each once
        with statuses and once with MPI_STATUS(ES)_IGNORE. The any/some calls are called until
        they report MPI_UNDEFINED (index, outcount): every non-null entry reported once, no
        null entry reported, the all-null call gives MPI_UNDEFINED (Testany: flag 1) and an
        empty status; Waitall/Testall/Wait/Test give null entries an empty status; every handle
        ends MPI_REQUEST_NULL; source, tag, MPI_Get_count of each receive at its index; then
        Testall of the all-null array (flag 1), Wait/Test on MPI_REQUEST_NULL.
     b. not yet complete: receives whose sends are posted only after an MPI_Barrier the receiver
        has not entered: MPI_Test flag 0, MPI_Testany flag 0 and index MPI_UNDEFINED,
        MPI_Testsome outcount 0, MPI_Testall flag 0 with no handle changed (also those of a
        completed MPI_COMM_SELF pair in the same array); then completed by MPI_Waitall.
     c. mixed arrays: an Irecv and an Isend on the threadcomm, on MPI_COMM_WORLD (to/from the
        ring neighbours' processes, tag by receiving thread-rank) and on MPI_COMM_SELF (to the
        thread itself, tag by thread-rank), two MPI_REQUEST_NULL, completed by each of the
        eight calls: each receive's status at its index (world source = the neighbour's
        process), data, every handle MPI_REQUEST_NULL.
     d. persistent: MPI_Recv_init/MPI_Send_init on the threadcomm, MPI_Start + MPI_Wait and
        MPI_Startall + Waitall/Testall over several iterations (data differs), the handles
        unchanged (not MPI_REQUEST_NULL) after completion; active ones among inactive
        persistent ones and MPI_REQUEST_NULL in Waitany/Testany/Waitsome/Testsome (the inactive
        ones are never reported, MPI_UNDEFINED once the active ones completed); MPI_Wait,
        MPI_Test, MPI_Waitall, MPI_Testall on inactive persistent requests (return at once,
        empty status); MPI_Startall over a threadcomm pair and an MPI_COMM_SELF pair;
        MPI_Request_free (handles MPI_REQUEST_NULL).
     e. MPI_Request_get_status: flag 0 while the matching send is not posted (it is posted after
        a barrier), then flag 1 with the right status and the request not freed (handle
        unchanged); MPI_Wait then gives the same status; also on a persistent receive (flag 0,
        flag 1, MPI_Wait, still usable), on an inactive persistent request and on
        MPI_REQUEST_NULL (flag 1, empty status); where mpi.h is MPI 4.1 (MPICH 4.2),
        MPI_Request_get_status_some over an Irecv, MPI_REQUEST_NULL and an Isend the same way.
     f. cancel and free: MPI_Cancel of an Irecv nothing matches (specific and MPI_ANY_SOURCE),
        completed by MPI_Wait, MPI_Test, and by MPI_Waitall beside an MPI_COMM_SELF receive:
        MPI_Test_cancelled true (false for the other), handle MPI_REQUEST_NULL;
        MPI_Request_free of active Isends (64 ints and 64 KiB) whose receives are posted only
        after a barrier: the messages arrive intact.
     g. nonblocking collectives: MPI_Ibarrier, MPI_Iallreduce (SUM, and MAX on 3 ints) on the
        threadcomm, an Irecv/Isend pair on the threadcomm and one on MPI_COMM_SELF completed
        together by MPI_Waitall, MPI_Testall (looped) and MPI_Waitsome (looped).

   Both deviations this program found in tsmpi's former requests (generalized requests) are
   gone with the engine's own requests (src/ranks/requests.h): an INACTIVE persistent request
   gave the status of its last completion instead of an empty one, and on MPICH a thread-rank's
   MPI_Waitany over inactive persistent requests only left the status untouched. Checks of them
   still print once per kind and process (report_once) and count every time. MPICH's own
   MPI_Testany leaving the status untouched there is accepted (detect_testany_quirk). */
#include <omp.h>

#include "ranks_util.h"

enum { kLarge = 16384 /* ints: 64 KiB */, kMaxN = 400 };

static MPI_Comm tc;
static int N, T, offset;
static int* counts; /* threads of each process */

#define STAGE(name)                      \
  do {                                   \
    if (r == offset) rk_set_stage(name); \
    MPI_OK(MPI_Barrier(tc));             \
  } while (0)

/* Names a step inside a part (for the watchdog): set by one thread, without a barrier. */
#define SUBSTAGE(name)                   \
  do {                                   \
    if (r == offset) rk_set_stage(name); \
  } while (0)

#define JUNK (-77)

static void junk(MPI_Status* st, int n) {
  for (int i = 0; i < n; ++i) {
    memset(&st[i], 0x5a, sizeof st[i]);
    st[i].MPI_SOURCE = JUNK;
    st[i].MPI_TAG = JUNK;
  }
}

static void check_status(const MPI_Status* st, int src, int tag, int count, const char* what) {
  int c = -1, canc = -1;
  MPI_Get_count(st, MPI_INT, &c);
  MPI_Test_cancelled(st, &canc);
  CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && c == count && canc == 0,
        "%s: status source %d tag %d count %d cancelled %d, expected %d %d %d 0", what, st->MPI_SOURCE,
        st->MPI_TAG, c, canc, src, tag, count);
}

static void check_empty(const MPI_Status* st, const char* what) {
  int c = -1, canc = -1;
  MPI_Get_count(st, MPI_INT, &c);
  MPI_Test_cancelled(st, &canc);
  CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && c == 0 && canc == 0,
        "%s: status source %d tag %d count %d cancelled %d, expected an empty status (MPI_ANY_SOURCE %d, "
        "MPI_ANY_TAG %d, 0, 0)",
        what, st->MPI_SOURCE, st->MPI_TAG, c, canc, MPI_ANY_SOURCE, MPI_ANY_TAG);
}

/* Known deviations are counted as failures every time but printed once per kind and process,
   so that they do not take the report slots (RK_MAX_REPORTS) of other checks. */
enum { kGetStatus = 8, kWaitanyUntouched = 9, kKinds = 10 };
static atomic_int kind_printed[kKinds];
static void report_once(int kind, const char* fmt, ...) {
  atomic_fetch_add(&rk_failures, 1);
  if (atomic_fetch_add(&kind_printed[kind], 1) != 0) return;
  char m[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  rk_say("%s: rank %d: thread-rank %d: [%s] check failed: %s; further failures of this kind are counted, not "
         "printed\n", rk_name, rk_wrank, rk_my, rk_stage, m);
}

/* An inactive persistent request (started and completed, or never started) must give an empty
   status to MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testall and MPI_Request_get_status (MPI-4.0
   3.7.3: "One is allowed to call MPI_WAIT with a null or inactive request argument. In this
   case the procedure returns immediately with empty status"; the same for the others). */
static const char* call_name[9] = {"MPI_Wait", "MPI_Test", "MPI_Waitall", "MPI_Testall", "MPI_Waitany",
                                   "MPI_Testany", "MPI_Waitsome", "MPI_Testsome", "MPI_Request_get_status"};
static void check_inactive_empty(const MPI_Status* st, int call, const char* what) {
  int c = -1, canc = -1;
  MPI_Get_count(st, MPI_INT, &c);
  MPI_Test_cancelled(st, &canc);
  if (st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && c == 0 && canc == 0) return;
  report_once(call,
              "%s of an INACTIVE persistent request of the threadcomm gave status source %d tag %d count %d "
              "cancelled %d instead of an empty status (MPI_ANY_SOURCE, MPI_ANY_TAG, count 0, not cancelled; "
              "MPI-4.0 3.7.3) (%s)",
              call_name[call], st->MPI_SOURCE, st->MPI_TAG, c, canc, what);
}

/* MPICH 4.0's own MPI_Testany leaves the status untouched when the array has inactive persistent
   requests and no active one (its MPI_Waitany sets it empty, as MPI-4.0 3.7.5 requires). Found
   out at start on MPI_COMM_SELF; then accepted from MPI_Testany, the MPI's behaviour. */
static int testany_quirk;
static void detect_testany_quirk(void) {
  int a = 1, b = 0, idx = -5, flag = -5;
  MPI_Request p[3];
  MPI_Status st;
  MPI_Recv_init(&b, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &p[0]);
  MPI_Send_init(&a, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &p[2]);
  p[1] = MPI_REQUEST_NULL;
  MPI_Start(&p[0]);
  MPI_Start(&p[2]);
  /* Not one MPI_Waitall with the null entry: under TSMPI_PROBE=helper on MPICH 4.0 that aborts
     (MPICH asserts on an incomplete generalized request, the helper's stand-in for the receive,
     in an MPI_Waitall whose array has a null entry). */
  MPI_Wait(&p[0], MPI_STATUS_IGNORE);
  MPI_Wait(&p[2], MPI_STATUS_IGNORE);
  memset(&st, 0x5a, sizeof st);
  st.MPI_SOURCE = st.MPI_TAG = JUNK;
  MPI_Testany(3, p, &idx, &flag, &st);
  testany_quirk = flag == 1 && idx == MPI_UNDEFINED && st.MPI_SOURCE == JUNK && st.MPI_TAG == JUNK;
  MPI_Request_free(&p[0]);
  MPI_Request_free(&p[2]);
}

static void check_data(const int* buf, int n, int from, int to, int tag, int seq, const char* what) {
  int bad = pattern_verify(buf, n, from, to, tag, seq);
  CHECK(bad < 0, "%s: element %d of %d is %d, expected %d", what, bad, n, bad < 0 ? 0 : buf[bad],
        bad < 0 ? 0 : pattern_val(from, to, tag, seq, bad));
}

/* ---- completing an array with one of the eight calls ------------------------------------ */

enum { kWait, kTest, kWaitall, kTestall, kWaitany, kTestany, kWaitsome, kTestsome, kHows };
static const char* how_name[kHows] = {"MPI_Wait", "MPI_Test", "MPI_Waitall", "MPI_Testall",
                                      "MPI_Waitany", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome"};

/* Completes every active request of rq[0..n) with `how`. Requests that are null (or inactive
   persistent: `inactive[i]`) at the start are expected never to be reported by the any/some
   calls and to get an empty status from the others. Statuses land in st[i] unless `ignore`
   (MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE passed). done[i] = 1 for the reported ones.
   The any/some calls are repeated until they say MPI_UNDEFINED; that last call's status
   must be empty. Returns the number of completions reported. */
static int complete(int how, int n, MPI_Request* rq, MPI_Status* st, int ignore, int* done,
                    const int* inactive, const char* what) {
  enum { kMax = 16 };
  int idle[kMax], active = 0, completed = 0;
  for (int i = 0; i < n; ++i) {
    idle[i] = rq[i] == MPI_REQUEST_NULL || (inactive && inactive[i]);
    active += !idle[i];
    done[i] = 0;
  }
  junk(st, n);
  switch (how) {
    case kWait:
    case kTest:
      for (int i = 0; i < n; ++i) {
        MPI_Status* s = ignore ? MPI_STATUS_IGNORE : &st[i];
        if (how == kWait) {
          MPI_OK(MPI_Wait(&rq[i], s));
        } else {
          int flag = 0;
          while (!flag)
            if (MPI_OK(MPI_Test(&rq[i], &flag, s)) != MPI_SUCCESS) break;
        }
        if (!idle[i]) done[i] = 1, ++completed;
        else if (!ignore) {
          char w[160];
          snprintf(w, sizeof w, "%s: %s of the %s entry %d", what, how_name[how],
                   rq[i] == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "inactive", i);
          if (rq[i] == MPI_REQUEST_NULL) check_empty(&st[i], w);
          else check_inactive_empty(&st[i], how, w);
        }
      }
      break;
    case kWaitall:
    case kTestall: {
      MPI_Status* s = ignore ? MPI_STATUSES_IGNORE : st;
      if (how == kWaitall) {
        MPI_OK(MPI_Waitall(n, rq, s));
      } else {
        int flag = 0;
        while (!flag)
          if (MPI_OK(MPI_Testall(n, rq, &flag, s)) != MPI_SUCCESS) break;
      }
      for (int i = 0; i < n; ++i) {
        if (!idle[i]) done[i] = 1, ++completed;
        else if (!ignore) {
          char w[160];
          snprintf(w, sizeof w, "%s: %s status of the %s entry %d", what, how_name[how],
                   rq[i] == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "inactive", i);
          if (rq[i] == MPI_REQUEST_NULL) check_empty(&st[i], w);
          else check_inactive_empty(&st[i], how, w);
        }
      }
      break;
    }
    case kWaitany:
    case kTestany:
      for (int calls = 0;; ++calls) {
        int idx = -5, flag = -5;
        MPI_Status s1;
        junk(&s1, 1);
        int rc;
        if (how == kWaitany) {
          rc = MPI_OK(MPI_Waitany(n, rq, &idx, ignore ? MPI_STATUS_IGNORE : &s1));
          flag = 1;
        } else {
          rc = MPI_OK(MPI_Testany(n, rq, &idx, &flag, ignore ? MPI_STATUS_IGNORE : &s1));
        }
        if (rc != MPI_SUCCESS) break;
        if (!flag) {
          CHECK(idx == MPI_UNDEFINED, "%s: MPI_Testany flag 0 with index %d, expected MPI_UNDEFINED", what, idx);
          CHECK(completed < active, "%s: MPI_Testany flag 0 with no active request left", what);
          continue;
        }
        if (idx == MPI_UNDEFINED) {
          CHECK(completed == active, "%s: %s said MPI_UNDEFINED after %d of %d completions", what, how_name[how],
                completed, active);
          if (!ignore) {
            char w[160];
            snprintf(w, sizeof w, "%s: %s with no active request", what, how_name[how]);
            int any_inactive = 0;
            for (int i = 0; i < n; ++i) any_inactive |= inactive && inactive[i] && rq[i] != MPI_REQUEST_NULL;
            int untouched = s1.MPI_SOURCE == JUNK && s1.MPI_TAG == JUNK;
            if (testany_quirk && any_inactive && untouched) {
              if (how == kWaitany)
                report_once(kWaitanyUntouched,
                            "%s: MPI_Waitany of a thread-rank with inactive persistent requests and no active "
                            "one returned index MPI_UNDEFINED but left the status untouched instead of empty "
                            "(MPI-4.0 3.7.5); the MPI's own MPI_Waitany sets it empty, its MPI_Testany does not "
                            "(MPICH 4.0)", w);
              /* MPI_Testany: the MPI's own behaviour, accepted. */
            } else {
              check_empty(&s1, w);
            }
          }
          break;
        }
        CHECK(idx >= 0 && idx < n && !idle[idx] && !done[idx], "%s: %s gave index %d (null/inactive/done twice?)",
              what, how_name[how], idx);
        if (idx < 0 || idx >= n || idle[idx] || done[idx]) break;
        done[idx] = 1;
        ++completed;
        if (!ignore) st[idx] = s1;
      }
      break;
    case kWaitsome:
    case kTestsome:
      for (;;) {
        int outc = -5, idx[kMax];
        MPI_Status s[kMax];
        junk(s, n);
        int rc;
        if (how == kWaitsome)
          rc = MPI_OK(MPI_Waitsome(n, rq, &outc, idx, ignore ? MPI_STATUSES_IGNORE : s));
        else
          rc = MPI_OK(MPI_Testsome(n, rq, &outc, idx, ignore ? MPI_STATUSES_IGNORE : s));
        if (rc != MPI_SUCCESS) break;
        if (outc == MPI_UNDEFINED) {
          CHECK(completed == active, "%s: %s said MPI_UNDEFINED after %d of %d completions", what, how_name[how],
                completed, active);
          break;
        }
        CHECK(outc >= 0 && outc <= n, "%s: %s outcount %d", what, how_name[how], outc);
        CHECK(how == kTestsome || outc >= 1, "%s: MPI_Waitsome returned outcount 0", what);
        if (outc < 0 || outc > n || (how == kWaitsome && outc == 0)) break;
        int bad = 0;
        for (int k = 0; k < outc; ++k) {
          int j = idx[k];
          CHECK(j >= 0 && j < n && !idle[j] && !done[j], "%s: %s gave index %d (null/inactive/done twice?)", what,
                how_name[how], j);
          if (j < 0 || j >= n || idle[j] || done[j]) {
            bad = 1;
            break;
          }
          done[j] = 1;
          ++completed;
          if (!ignore) st[j] = s[k];
        }
        if (bad) break;
      }
      break;
  }
  CHECK(completed == active, "%s: %s completed %d of %d active requests", what, how_name[how], completed, active);
  return completed;
}

/* ---- a. every completion call on an array of thread-rank requests ----------------------- */

static void part_completion(int r, int left, int right, int round) {
  int* rb[3];
  int* sb[3];
  for (int k = 0; k < 3; ++k) {
    rb[k] = malloc((kLarge + 1) * sizeof(int));
    sb[k] = malloc((kLarge + 1) * sizeof(int));
  }
  for (int how = 0; how < kHows; ++how)
    for (int ign = 0; ign < 2; ++ign) {
      int v = how * 2 + ign;
      int tag[3] = {100 + 3 * v, 101 + 3 * v, 102 + 3 * v};
      int n[3] = {3 + how, (v % 5 == 0) ? kLarge : 1000 + v, 0}; /* 64 KiB in 4 of the 16 */
      char what[96];
      snprintf(what, sizeof what, "a. %s%s", how_name[how], ign ? " (statuses ignored)" : "");
      for (int k = 0; k < 3; ++k) {
        memset(rb[k], 0xee, (kLarge + 1) * sizeof(int));
        pattern_fill(sb[k], n[k], r, right, tag[k], round);
      }
      /* [0] recv A, [1] null, [2] recv B, [3] recv C (MPI_ANY_SOURCE, 0 ints),
         [4] send A, [5] send B, [6] null, [7] send C */
      MPI_Request rq[8];
      MPI_Status st[8];
      int done[8];
      rq[1] = rq[6] = MPI_REQUEST_NULL;
      MPI_OK(MPI_Irecv(rb[0], kLarge, MPI_INT, left, tag[0], tc, &rq[0]));
      MPI_OK(MPI_Irecv(rb[1], kLarge, MPI_INT, left, tag[1], tc, &rq[2]));
      MPI_OK(MPI_Irecv(rb[2], kLarge, MPI_INT, MPI_ANY_SOURCE, tag[2], tc, &rq[3]));
      MPI_OK(MPI_Isend(sb[0], n[0], MPI_INT, right, tag[0], tc, &rq[4]));
      MPI_OK(MPI_Isend(sb[1], n[1], MPI_INT, right, tag[1], tc, &rq[5]));
      MPI_OK(MPI_Isend(sb[2], n[2], MPI_INT, right, tag[2], tc, &rq[7]));
      complete(how, 8, rq, st, ign, done, NULL, what);
      for (int i = 0; i < 8; ++i)
        CHECK(rq[i] == MPI_REQUEST_NULL, "%s: handle %d not MPI_REQUEST_NULL after completion", what, i);
      static const int at[3] = {0, 2, 3};
      for (int k = 0; k < 3; ++k) {
        char w[128];
        snprintf(w, sizeof w, "%s: receive at index %d (%d ints)", what, at[k], n[k]);
        if (!ign && done[at[k]]) check_status(&st[at[k]], left, tag[k], n[k], w);
        check_data(rb[k], n[k], left, r, tag[k], round, w);
        CHECK(rb[k][n[k]] == (int)0xeeeeeeee, "%s: wrote past the count", w);
      }
      /* The array is all MPI_REQUEST_NULL now. */
      int flag = -5, idx = -5, outc = -5, ids[8];
      MPI_Status s1;
      junk(st, 8);
      MPI_OK(MPI_Testall(8, rq, &flag, st));
      CHECK(flag == 1, "%s: MPI_Testall of all MPI_REQUEST_NULL: flag %d", what, flag);
      for (int i = 0; i < 8; ++i) check_empty(&st[i], "MPI_Testall of all MPI_REQUEST_NULL");
      flag = -5;
      MPI_OK(MPI_Testall(8, rq, &flag, MPI_STATUSES_IGNORE));
      CHECK(flag == 1, "%s: MPI_Testall(MPI_STATUSES_IGNORE) of all MPI_REQUEST_NULL: flag %d", what, flag);
      junk(st, 8);
      MPI_OK(MPI_Waitall(8, rq, st));
      for (int i = 0; i < 8; ++i) check_empty(&st[i], "MPI_Waitall of all MPI_REQUEST_NULL");
      junk(&s1, 1);
      MPI_OK(MPI_Waitany(8, rq, &idx, &s1));
      CHECK(idx == MPI_UNDEFINED, "%s: MPI_Waitany of all MPI_REQUEST_NULL: index %d", what, idx);
      check_empty(&s1, "MPI_Waitany of all MPI_REQUEST_NULL");
      flag = idx = -5;
      junk(&s1, 1);
      MPI_OK(MPI_Testany(8, rq, &idx, &flag, &s1));
      CHECK(flag == 1 && idx == MPI_UNDEFINED, "%s: MPI_Testany of all MPI_REQUEST_NULL: flag %d index %d", what,
            flag, idx);
      check_empty(&s1, "MPI_Testany of all MPI_REQUEST_NULL");
      MPI_OK(MPI_Waitsome(8, rq, &outc, ids, st));
      CHECK(outc == MPI_UNDEFINED, "%s: MPI_Waitsome of all MPI_REQUEST_NULL: outcount %d", what, outc);
      outc = -5;
      MPI_OK(MPI_Testsome(8, rq, &outc, ids, MPI_STATUSES_IGNORE));
      CHECK(outc == MPI_UNDEFINED, "%s: MPI_Testsome of all MPI_REQUEST_NULL: outcount %d", what, outc);
      MPI_Request nul = MPI_REQUEST_NULL;
      junk(&s1, 1);
      MPI_OK(MPI_Wait(&nul, &s1));
      check_empty(&s1, "MPI_Wait(MPI_REQUEST_NULL)");
      flag = -5;
      junk(&s1, 1);
      MPI_OK(MPI_Test(&nul, &flag, &s1));
      CHECK(flag == 1, "MPI_Test(MPI_REQUEST_NULL): flag %d", flag);
      check_empty(&s1, "MPI_Test(MPI_REQUEST_NULL)");
    }
  for (int k = 0; k < 3; ++k) {
    free(rb[k]);
    free(sb[k]);
  }
}

/* ---- b. tests of requests that cannot have completed ------------------------------------ */

static void part_pending(int r, int left, int right, int round) {
  int in[2][20], out[2][20], sin[5], sout[5];
  int tag[2] = {300, 301}, stag = 5000 + r;
  for (int k = 0; k < 2; ++k) pattern_fill(out[k], 10 + k, r, right, tag[k], round);
  pattern_fill(sout, 5, r, r, stag, round);
  /* [0] recv tag 300, [1] null, [2] recv tag 301, [3] self recv, [4] self send */
  MPI_Request rq[5], saved[5];
  MPI_Status st[5];
  rq[1] = MPI_REQUEST_NULL;
  MPI_OK(MPI_Irecv(in[0], 20, MPI_INT, left, tag[0], tc, &rq[0]));
  MPI_OK(MPI_Irecv(in[1], 20, MPI_INT, left, tag[1], tc, &rq[2]));
  MPI_OK(MPI_Irecv(sin, 5, MPI_INT, 0, stag, MPI_COMM_SELF, &rq[3]));
  MPI_OK(MPI_Isend(sout, 5, MPI_INT, 0, stag, MPI_COMM_SELF, &rq[4]));
  memcpy(saved, rq, sizeof rq);
  /* The left neighbour sends only after the barrier below. */
  int flag = -5, idx = -5, outc = -5, ids[5];
  MPI_OK(MPI_Test(&rq[0], &flag, &st[0]));
  CHECK(flag == 0, "b. MPI_Test of a receive whose send is not posted: flag %d", flag);
  CHECK(rq[0] == saved[0], "b. MPI_Test with flag 0 changed the handle");
  MPI_Request sub[3] = {rq[0], MPI_REQUEST_NULL, rq[2]};
  flag = -5;
  MPI_OK(MPI_Testany(3, sub, &idx, &flag, &st[0]));
  CHECK(flag == 0 && idx == MPI_UNDEFINED, "b. MPI_Testany of pending receives: flag %d index %d, expected 0 and "
        "MPI_UNDEFINED", flag, idx);
  MPI_OK(MPI_Testsome(3, sub, &outc, ids, st));
  CHECK(outc == 0, "b. MPI_Testsome of pending receives: outcount %d, expected 0", outc);
  CHECK(sub[0] == saved[0] && sub[1] == MPI_REQUEST_NULL && sub[2] == saved[2], "b. Testany/Testsome with nothing "
        "complete changed a handle");
  for (int t = 0; t < 3; ++t) {
    flag = -5;
    MPI_OK(MPI_Testall(5, rq, &flag, st));
    CHECK(flag == 0, "b. MPI_Testall over pending receives: flag %d", flag);
    for (int i = 0; i < 5; ++i)
      CHECK(rq[i] == saved[i], "b. MPI_Testall with flag 0 changed handle %d (MPI: no request is modified)", i);
    usleep(200);
  }
  MPI_OK(MPI_Barrier(tc));
  MPI_Request sq[2];
  for (int k = 0; k < 2; ++k) MPI_OK(MPI_Isend(out[k], 10 + k, MPI_INT, right, tag[k], tc, &sq[k]));
  junk(st, 5);
  MPI_OK(MPI_Waitall(5, rq, st));
  MPI_OK(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 5; ++i) CHECK(rq[i] == MPI_REQUEST_NULL, "b. handle %d not MPI_REQUEST_NULL after MPI_Waitall", i);
  CHECK(sq[0] == MPI_REQUEST_NULL && sq[1] == MPI_REQUEST_NULL, "b. send handles not freed");
  check_status(&st[0], left, tag[0], 10, "b. receive 0 after the barrier");
  check_status(&st[2], left, tag[1], 11, "b. receive 2 after the barrier");
  check_status(&st[3], 0, stag, 5, "b. MPI_COMM_SELF receive");
  check_empty(&st[1], "b. MPI_Waitall status of the MPI_REQUEST_NULL entry");
  check_data(in[0], 10, left, r, tag[0], round, "b. receive 0");
  check_data(in[1], 11, left, r, tag[1], round, "b. receive 2");
  check_data(sin, 5, r, r, stag, round, "b. MPI_COMM_SELF receive");
}

/* ---- c. arrays mixing thread-rank and ordinary requests ---------------------------------- */

static void part_mixed(int r, int left, int right, int round) {
  int lp = rk_process_of(counts, rk_wsize, left), rp = rk_process_of(counts, rk_wsize, right);
  for (int how = 0; how < kHows; ++how) {
    int ttag = 400 + how, wtag = 10000 + how * 500 + r, wtag_right = 10000 + how * 500 + right,
        stag = 20000 + how * 500 + r;
    int nt = 5 + how, nw = 11 + how, ns = 17 + how;
    int tin[32], win[32], sin[32], tout[32], wout[32], sout[32];
    memset(tin, 0, sizeof tin);
    memset(win, 0, sizeof win);
    memset(sin, 0, sizeof sin);
    pattern_fill(tout, nt, r, right, ttag, round);
    pattern_fill(wout, nw, r, right, wtag_right, round);
    pattern_fill(sout, ns, r, r, stag, round);
    /* [0] tc recv, [1] world recv, [2] null, [3] self recv, [4] tc send, [5] world send,
       [6] self send, [7] null */
    MPI_Request rq[8];
    MPI_Status st[8];
    int done[8];
    rq[2] = rq[7] = MPI_REQUEST_NULL;
    MPI_OK(MPI_Irecv(tin, 32, MPI_INT, left, ttag, tc, &rq[0]));
    MPI_OK(MPI_Irecv(win, 32, MPI_INT, lp, wtag, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Irecv(sin, 32, MPI_INT, 0, stag, MPI_COMM_SELF, &rq[3]));
    MPI_OK(MPI_Isend(tout, nt, MPI_INT, right, ttag, tc, &rq[4]));
    MPI_OK(MPI_Isend(wout, nw, MPI_INT, rp, wtag_right, MPI_COMM_WORLD, &rq[5]));
    MPI_OK(MPI_Isend(sout, ns, MPI_INT, 0, stag, MPI_COMM_SELF, &rq[6]));
    char what[64];
    snprintf(what, sizeof what, "c. mixed %s", how_name[how]);
    complete(how, 8, rq, st, 0, done, NULL, what);
    for (int i = 0; i < 8; ++i)
      CHECK(rq[i] == MPI_REQUEST_NULL, "%s: handle %d not MPI_REQUEST_NULL after completion", what, i);
    char w[128];
    snprintf(w, sizeof w, "%s: threadcomm receive at index 0", what);
    if (done[0]) check_status(&st[0], left, ttag, nt, w);
    check_data(tin, nt, left, r, ttag, round, w);
    snprintf(w, sizeof w, "%s: MPI_COMM_WORLD receive at index 1 (from process %d)", what, lp);
    if (done[1]) check_status(&st[1], lp, wtag, nw, w);
    check_data(win, nw, left, r, wtag, round, w);
    snprintf(w, sizeof w, "%s: MPI_COMM_SELF receive at index 3", what);
    if (done[3]) check_status(&st[3], 0, stag, ns, w);
    check_data(sin, ns, r, r, stag, round, w);
  }
}

/* ---- d. persistent requests -------------------------------------------------------------- */

static void part_persistent(int r, int left, int right, int round) {
  enum { kN = 100 };
  int sa[kN], ra[kN + 1], sb[kN], rb[kN + 1];
  const int ta = 700, tb = 701;
  /* [0] recv A, [1] send A, [2] recv B, [3] send B */
  MPI_Request p[4], saved[4];
  MPI_Status st[8];
  int done[8];
  MPI_OK(MPI_Recv_init(ra, kN, MPI_INT, left, ta, tc, &p[0]));
  MPI_OK(MPI_Send_init(sa, kN, MPI_INT, right, ta, tc, &p[1]));
  MPI_OK(MPI_Recv_init(rb, kN, MPI_INT, left, tb, tc, &p[2]));
  MPI_OK(MPI_Send_init(sb, kN, MPI_INT, right, tb, tc, &p[3]));
  for (int i = 0; i < 4; ++i) CHECK(p[i] != MPI_REQUEST_NULL, "d. *_init gave MPI_REQUEST_NULL (%d)", i);
  memcpy(saved, p, sizeof p);
  int seq = round * 1000;
#define HANDLES_KEPT(what)                                                                                \
  for (int i_ = 0; i_ < 4; ++i_)                                                                          \
  CHECK(p[i_] == saved[i_], "%s: persistent handle %d changed (MPI_REQUEST_NULL: %d) after completion", what, \
        i_, p[i_] == MPI_REQUEST_NULL)

  /* MPI_Start + MPI_Wait (receive with a status, send with MPI_STATUS_IGNORE). */
  SUBSTAGE("d. persistent: MPI_Start + MPI_Wait");
  for (int it = 0; it < 5; ++it, ++seq) {
    pattern_fill(sa, kN, r, right, ta, seq);
    memset(ra, 0, sizeof ra);
    MPI_OK(MPI_Start(&p[0]));
    MPI_OK(MPI_Start(&p[1]));
    junk(st, 1);
    MPI_OK(MPI_Wait(&p[0], &st[0]));
    MPI_OK(MPI_Wait(&p[1], MPI_STATUS_IGNORE));
    check_status(&st[0], left, ta, kN, "d. MPI_Start + MPI_Wait");
    check_data(ra, kN, left, r, ta, seq, "d. MPI_Start + MPI_Wait");
    HANDLES_KEPT("d. MPI_Wait");
  }
  /* MPI_Startall + Waitall / Testall over both pairs, every iteration new data. */
  SUBSTAGE("d. persistent: MPI_Startall + MPI_Waitall/MPI_Testall");
  for (int it = 0; it < 6; ++it, ++seq) {
    pattern_fill(sa, kN, r, right, ta, seq);
    pattern_fill(sb, kN, r, right, tb, seq);
    memset(ra, 0, sizeof ra);
    memset(rb, 0, sizeof rb);
    MPI_OK(MPI_Startall(4, p));
    junk(st, 4);
    if (it % 2 == 0) {
      MPI_OK(MPI_Waitall(4, p, st));
    } else {
      int flag = 0;
      while (!flag)
        if (MPI_OK(MPI_Testall(4, p, &flag, st)) != MPI_SUCCESS) break;
    }
    const char* what = it % 2 == 0 ? "d. MPI_Startall + MPI_Waitall" : "d. MPI_Startall + MPI_Testall";
    HANDLES_KEPT(what);
    check_status(&st[0], left, ta, kN, what);
    check_status(&st[2], left, tb, kN, what);
    check_data(ra, kN, left, r, ta, seq, what);
    check_data(rb, kN, left, r, tb, seq, what);
    CHECK(ra[kN] == 0 && rb[kN] == 0, "%s: wrote past the count", what);
  }
  /* Pair A active, pair B inactive, MPI_REQUEST_NULL between, completed by the any/some calls:
     the inactive ones count as null ones. */
  SUBSTAGE("d. persistent: active among inactive, any/some");
  for (int how = kWaitany; how <= kTestsome; ++how, ++seq) {
    pattern_fill(sa, kN, r, right, ta, seq);
    memset(ra, 0, sizeof ra);
    MPI_OK(MPI_Start(&p[0]));
    MPI_OK(MPI_Start(&p[1]));
    /* [0] recv B (inactive), [1] null, [2] recv A, [3] send B (inactive), [4] send A */
    MPI_Request arr[5] = {p[2], MPI_REQUEST_NULL, p[0], p[3], p[1]};
    int inactive[5] = {1, 0, 0, 1, 0};
    char what[96];
    snprintf(what, sizeof what, "d. active and inactive persistent, %s", how_name[how]);
    complete(how, 5, arr, st, 0, done, inactive, what);
    CHECK(arr[0] == saved[2] && arr[2] == saved[0] && arr[3] == saved[3] && arr[4] == saved[1] &&
              arr[1] == MPI_REQUEST_NULL,
          "%s: a persistent handle changed", what);
    if (done[2]) check_status(&st[2], left, ta, kN, what);
    check_data(ra, kN, left, r, ta, seq, what);
  }
  /* Every one inactive: each call returns at once with empty statuses / MPI_UNDEFINED. */
  SUBSTAGE("d. persistent: only inactive");
  for (int how = 0; how < kHows; ++how) {
    MPI_Request arr[5] = {p[0], MPI_REQUEST_NULL, p[1], p[2], p[3]};
    int inactive[5] = {1, 0, 1, 1, 1};
    char what[96];
    snprintf(what, sizeof what, "d. only inactive persistent, %s", how_name[how]);
    complete(how, 5, arr, st, 0, done, inactive, what);
    CHECK(arr[0] == saved[0] && arr[2] == saved[1] && arr[3] == saved[2] && arr[4] == saved[3],
          "%s: a persistent handle changed", what);
  }
  /* Still usable after all that. */
  SUBSTAGE("d. persistent: pair B again, MPI_Request_free");
  pattern_fill(sb, kN, r, right, tb, seq);
  MPI_OK(MPI_Startall(2, &p[2]));
  junk(st, 2);
  MPI_OK(MPI_Waitall(2, &p[2], st));
  check_status(&st[0], left, tb, kN, "d. pair B at the end");
  check_data(rb, kN, left, r, tb, seq, "d. pair B at the end");
  ++seq;
  for (int i = 0; i < 4; ++i) {
    MPI_OK(MPI_Request_free(&p[i]));
    CHECK(p[i] == MPI_REQUEST_NULL, "d. MPI_Request_free left handle %d not MPI_REQUEST_NULL", i);
  }

  /* MPI_Startall over a threadcomm pair and an MPI_COMM_SELF pair. */
  SUBSTAGE("d. persistent: MPI_Startall with an MPI_COMM_SELF pair");
  int ss[kN], sr[kN + 1];
  const int stag = 7000 + r;
  /* [0] tc recv, [1] self recv, [2] tc send, [3] self send */
  MPI_Request q[4], qsaved[4];
  MPI_OK(MPI_Recv_init(ra, kN, MPI_INT, left, ta, tc, &q[0]));
  MPI_OK(MPI_Recv_init(sr, kN, MPI_INT, 0, stag, MPI_COMM_SELF, &q[1]));
  MPI_OK(MPI_Send_init(sa, kN, MPI_INT, right, ta, tc, &q[2]));
  MPI_OK(MPI_Send_init(ss, kN, MPI_INT, 0, stag, MPI_COMM_SELF, &q[3]));
  memcpy(qsaved, q, sizeof q);
  for (int it = 0; it < 4; ++it, ++seq) {
    pattern_fill(sa, kN, r, right, ta, seq);
    pattern_fill(ss, kN, r, r, stag, seq);
    memset(ra, 0, sizeof ra);
    memset(sr, 0, sizeof sr);
    MPI_OK(MPI_Startall(4, q));
    const char* what = it % 2 ? "d. mixed MPI_Startall + MPI_Waitsome" : "d. mixed MPI_Startall + MPI_Waitall";
    if (it % 2 == 0) {
      junk(st, 4);
      MPI_OK(MPI_Waitall(4, q, st));
      for (int i = 0; i < 4; ++i) done[i] = 1;
    } else {
      complete(kWaitsome, 4, q, st, 0, done, NULL, what);
    }
    for (int i = 0; i < 4; ++i) CHECK(q[i] == qsaved[i], "%s: persistent handle %d changed", what, i);
    if (done[0]) check_status(&st[0], left, ta, kN, what);
    if (done[1]) check_status(&st[1], 0, stag, kN, what);
    check_data(ra, kN, left, r, ta, seq, what);
    check_data(sr, kN, r, r, stag, seq, what);
  }
  {
    MPI_Request arr[4] = {q[0], q[1], q[2], q[3]};
    int inactive[4] = {1, 1, 1, 1};
    complete(kWaitall, 4, arr, st, 0, done, inactive, "d. mixed persistent, all inactive");
    complete(kWaitany, 4, arr, st, 0, done, inactive, "d. mixed persistent, all inactive");
  }
  for (int i = 0; i < 4; ++i) {
    MPI_OK(MPI_Request_free(&q[i]));
    CHECK(q[i] == MPI_REQUEST_NULL, "d. MPI_Request_free left mixed handle %d not MPI_REQUEST_NULL", i);
  }
#undef HANDLES_KEPT
}

/* ---- e. MPI_Request_get_status ----------------------------------------------------------- */

static void part_get_status(int r, int left, int right, int round) {
  int in[40], out[40], flag = -5;
  const int tag = 800, n = 32;
  MPI_Request rq, sq;
  MPI_Status st, st2;
  memset(in, 0, sizeof in);
  pattern_fill(out, n, r, right, tag, round);
  MPI_OK(MPI_Irecv(in, 40, MPI_INT, left, tag, tc, &rq));
  MPI_Request saved = rq;
  MPI_OK(MPI_Request_get_status(rq, &flag, &st));
  CHECK(flag == 0, "e. MPI_Request_get_status before the matching send is posted: flag %d", flag);
  MPI_OK(MPI_Barrier(tc));
  MPI_OK(MPI_Isend(out, n, MPI_INT, right, tag, tc, &sq));
  for (flag = 0; !flag;) {
    junk(&st, 1);
    if (MPI_OK(MPI_Request_get_status(rq, &flag, &st)) != MPI_SUCCESS) break;
  }
  check_status(&st, left, tag, n, "e. MPI_Request_get_status flag 1");
  CHECK(rq == saved, "e. MPI_Request_get_status changed the handle (MPI_REQUEST_NULL: %d)", rq == MPI_REQUEST_NULL);
  /* Asked again: still complete, still not freed. */
  flag = -5;
  junk(&st, 1);
  MPI_OK(MPI_Request_get_status(rq, &flag, &st));
  CHECK(flag == 1, "e. second MPI_Request_get_status: flag %d", flag);
  check_status(&st, left, tag, n, "e. second MPI_Request_get_status");
  junk(&st2, 1);
  MPI_OK(MPI_Wait(&rq, &st2));
  CHECK(rq == MPI_REQUEST_NULL, "e. MPI_Wait after MPI_Request_get_status: handle not MPI_REQUEST_NULL");
  check_status(&st2, left, tag, n, "e. MPI_Wait after MPI_Request_get_status");
  check_data(in, n, left, r, tag, round, "e. MPI_Request_get_status");
  /* The send request the same way, with MPI_STATUS_IGNORE. */
  for (flag = 0; !flag;)
    if (MPI_OK(MPI_Request_get_status(sq, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) break;
  CHECK(sq != MPI_REQUEST_NULL, "e. MPI_Request_get_status freed a send request");
  MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  CHECK(sq == MPI_REQUEST_NULL, "e. send: handle not MPI_REQUEST_NULL after MPI_Wait");
  /* MPI_REQUEST_NULL. */
  flag = -5;
  junk(&st, 1);
  MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
  CHECK(flag == 1, "e. MPI_Request_get_status(MPI_REQUEST_NULL): flag %d", flag);
  check_empty(&st, "e. MPI_Request_get_status(MPI_REQUEST_NULL)");

  /* A persistent receive: inactive (flag 1, empty), active and unmatched (flag 0), complete
     (flag 1), then MPI_Wait, twice over. */
  MPI_Request pr, ps;
  MPI_OK(MPI_Recv_init(in, 40, MPI_INT, left, tag + 1, tc, &pr));
  MPI_OK(MPI_Send_init(out, n, MPI_INT, right, tag + 1, tc, &ps));
  MPI_Request psaved = pr;
  flag = -5;
  junk(&st, 1);
  MPI_OK(MPI_Request_get_status(pr, &flag, &st));
  CHECK(flag == 1, "e. MPI_Request_get_status of an inactive persistent receive: flag %d", flag);
  check_inactive_empty(&st, kGetStatus, "e. a never started persistent receive");
  for (int it = 0; it < 2; ++it) {
    int seq = round * 10 + it;
    pattern_fill(out, n, r, right, tag + 1, seq);
    memset(in, 0, sizeof in);
    MPI_OK(MPI_Start(&pr));
    flag = -5;
    MPI_OK(MPI_Request_get_status(pr, &flag, &st));
    CHECK(flag == 0, "e. MPI_Request_get_status of a started persistent receive before its send: flag %d", flag);
    MPI_OK(MPI_Barrier(tc));
    MPI_OK(MPI_Start(&ps));
    for (flag = 0; !flag;) {
      junk(&st, 1);
      if (MPI_OK(MPI_Request_get_status(pr, &flag, &st)) != MPI_SUCCESS) break;
    }
    check_status(&st, left, tag + 1, n, "e. MPI_Request_get_status of a persistent receive");
    CHECK(pr == psaved, "e. MPI_Request_get_status changed a persistent handle");
    junk(&st2, 1);
    MPI_OK(MPI_Wait(&pr, &st2));
    check_status(&st2, left, tag + 1, n, "e. MPI_Wait of a persistent receive after MPI_Request_get_status");
    CHECK(pr == psaved, "e. MPI_Wait changed a persistent handle");
    MPI_OK(MPI_Wait(&ps, MPI_STATUS_IGNORE));
    check_data(in, n, left, r, tag + 1, seq, "e. persistent receive");
    /* Inactive again: flag 1, empty status. */
    flag = -5;
    junk(&st, 1);
    MPI_OK(MPI_Request_get_status(pr, &flag, &st));
    CHECK(flag == 1, "e. MPI_Request_get_status of a completed (inactive) persistent receive: flag %d", flag);
    check_inactive_empty(&st, kGetStatus, "e. a persistent receive completed by MPI_Wait");
  }
  MPI_OK(MPI_Request_free(&pr));
  MPI_OK(MPI_Request_free(&ps));
  CHECK(pr == MPI_REQUEST_NULL && ps == MPI_REQUEST_NULL, "e. MPI_Request_free: handle not MPI_REQUEST_NULL");

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
  /* MPI 4.1's MPI_Request_get_status_some over an Irecv, MPI_REQUEST_NULL and an Isend:
     MPI_UNDEFINED while all are null, outcount 0 before the matching send is posted, then each
     reported at its index (the receive with its status), the null entry never, handles kept. */
  MPI_Request q[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status sts[3];
  int idx[3], oc = -5;
  MPI_OK(MPI_Request_get_status_some(3, q, &oc, idx, sts));
  CHECK(oc == MPI_UNDEFINED, "e. MPI_Request_get_status_some of null requests: outcount %d", oc);
  memset(in, 0, sizeof in);
  pattern_fill(out, n, r, right, tag + 2, round);
  MPI_OK(MPI_Irecv(in, 40, MPI_INT, left, tag + 2, tc, &q[0]));
  const MPI_Request qsaved = q[0];
  oc = -5;
  MPI_OK(MPI_Request_get_status_some(3, q, &oc, idx, sts));
  CHECK(oc == 0, "e. MPI_Request_get_status_some before the matching send is posted: outcount %d", oc);
  MPI_OK(MPI_Barrier(tc));
  MPI_OK(MPI_Isend(out, n, MPI_INT, right, tag + 2, tc, &q[2]));
  int seen_recv = 0, seen_send = 0;
  while (!(seen_recv && seen_send)) {
    junk(sts, 3);
    if (MPI_OK(MPI_Request_get_status_some(3, q, &oc, idx, sts)) != MPI_SUCCESS) break;
    if (oc < 0 || oc > 2) {
      CHECK(0, "e. MPI_Request_get_status_some: outcount %d", oc);
      break;
    }
    for (int k = 0; k < oc; ++k) {
      if (idx[k] == 0) {
        check_status(&sts[k], left, tag + 2, n, "e. MPI_Request_get_status_some");
        seen_recv = 1;
      } else if (idx[k] == 2) {
        seen_send = 1;
      } else {
        CHECK(0, "e. MPI_Request_get_status_some reported index %d", idx[k]);
      }
    }
  }
  CHECK(q[0] == qsaved && q[1] == MPI_REQUEST_NULL && q[2] != MPI_REQUEST_NULL,
        "e. MPI_Request_get_status_some changed a handle");
  MPI_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
  check_data(in, n, left, r, tag + 2, round, "e. MPI_Request_get_status_some");
#endif
}

/* ---- f. MPI_Cancel, MPI_Request_free of active requests ----------------------------------- */

static void part_cancel_free(int r, int left, int right, int round) {
  int buf[8], flag = -5;
  MPI_Request rq;
  MPI_Status st;
  /* Nothing is ever sent with tags 900..902. */
  MPI_OK(MPI_Irecv(buf, 8, MPI_INT, left, 900, tc, &rq));
  MPI_OK(MPI_Cancel(&rq));
  junk(&st, 1);
  MPI_OK(MPI_Wait(&rq, &st));
  CHECK(rq == MPI_REQUEST_NULL, "f. MPI_Wait of a cancelled receive: handle not MPI_REQUEST_NULL");
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1, "f. MPI_Test_cancelled after MPI_Cancel + MPI_Wait of an unmatched Irecv: %d", flag);

  MPI_OK(MPI_Irecv(buf, 8, MPI_INT, MPI_ANY_SOURCE, 901, tc, &rq));
  MPI_OK(MPI_Cancel(&rq));
  for (flag = 0; !flag;) {
    junk(&st, 1);
    if (MPI_OK(MPI_Test(&rq, &flag, &st)) != MPI_SUCCESS) break;
  }
  CHECK(rq == MPI_REQUEST_NULL, "f. MPI_Test of a cancelled receive: handle not MPI_REQUEST_NULL");
  flag = -5;
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1, "f. MPI_Test_cancelled after MPI_Cancel + MPI_Test of an unmatched MPI_ANY_SOURCE Irecv: %d", flag);

  /* A cancelled threadcomm receive beside an MPI_COMM_SELF pair in one MPI_Waitall. */
  int sin[4], sout[4], stag = 8000 + r;
  pattern_fill(sout, 4, r, r, stag, round);
  MPI_Request arr[3];
  MPI_Status sts[3];
  MPI_OK(MPI_Irecv(buf, 8, MPI_INT, left, 902, tc, &arr[0]));
  MPI_OK(MPI_Irecv(sin, 4, MPI_INT, 0, stag, MPI_COMM_SELF, &arr[1]));
  MPI_OK(MPI_Isend(sout, 4, MPI_INT, 0, stag, MPI_COMM_SELF, &arr[2]));
  MPI_OK(MPI_Cancel(&arr[0]));
  junk(sts, 3);
  MPI_OK(MPI_Waitall(3, arr, sts));
  CHECK(arr[0] == MPI_REQUEST_NULL && arr[1] == MPI_REQUEST_NULL && arr[2] == MPI_REQUEST_NULL,
        "f. MPI_Waitall with a cancelled receive: a handle not MPI_REQUEST_NULL");
  flag = -5;
  MPI_OK(MPI_Test_cancelled(&sts[0], &flag));
  CHECK(flag == 1, "f. MPI_Test_cancelled of the cancelled receive at index 0 of MPI_Waitall: %d", flag);
  check_status(&sts[1], 0, stag, 4, "f. MPI_COMM_SELF receive beside a cancelled one");
  check_data(sin, 4, r, r, stag, round, "f. MPI_COMM_SELF receive beside a cancelled one");

  /* MPI_Request_free of active sends; the receives are posted after a barrier. */
  const int ns[2] = {64, kLarge}, tag[2] = {910, 911};
  int* out[2];
  int* in = malloc((kLarge + 1) * sizeof(int));
  MPI_Request sq[2];
  for (int k = 0; k < 2; ++k) {
    out[k] = malloc(ns[k] * sizeof(int));
    pattern_fill(out[k], ns[k], r, right, tag[k], round);
    MPI_OK(MPI_Isend(out[k], ns[k], MPI_INT, right, tag[k], tc, &sq[k]));
    MPI_OK(MPI_Request_free(&sq[k]));
    CHECK(sq[k] == MPI_REQUEST_NULL, "f. MPI_Request_free of an active Isend: handle not MPI_REQUEST_NULL");
  }
  MPI_OK(MPI_Barrier(tc));
  for (int k = 0; k < 2; ++k) {
    char what[96];
    snprintf(what, sizeof what, "f. message of %d ints whose Isend was freed with MPI_Request_free", ns[k]);
    memset(in, 0, (kLarge + 1) * sizeof(int));
    junk(&st, 1);
    MPI_OK(MPI_Recv(in, kLarge + 1, MPI_INT, left, tag[k], tc, &st));
    check_status(&st, left, tag[k], ns[k], what);
    check_data(in, ns[k], left, r, tag[k], round, what);
  }
  /* Every receive done: the freed sends' buffers are no longer needed. */
  MPI_OK(MPI_Barrier(tc));
  for (int k = 0; k < 2; ++k) free(out[k]);
  free(in);
}

/* ---- g. nonblocking collectives completed together with point-to-point -------------------- */

static void part_collectives(int r, int left, int right, int round) {
  for (int it = 0; it < 3; ++it) {
    int seq = round * 10 + it, tag = 950 + it, stag = 9000 + r;
    int tin[16], tout[16], sin[16], sout[16];
    long long sum_in = r + 1 + it, sum_out = -1;
    int max_in[3] = {r, -r, r * it}, max_out[3] = {-9, -9, -9};
    memset(tin, 0, sizeof tin);
    memset(sin, 0, sizeof sin);
    pattern_fill(tout, 12, r, right, tag, seq);
    pattern_fill(sout, 7, r, r, stag, seq);
    /* [0] Ibarrier, [1] tc recv, [2] Iallreduce SUM, [3] self recv, [4] tc send,
       [5] Iallreduce MAX, [6] self send, [7] null */
    MPI_Request rq[8];
    MPI_Status st[8];
    int done[8];
    rq[7] = MPI_REQUEST_NULL;
    MPI_OK(MPI_Ibarrier(tc, &rq[0]));
    MPI_OK(MPI_Irecv(tin, 16, MPI_INT, left, tag, tc, &rq[1]));
    MPI_OK(MPI_Iallreduce(&sum_in, &sum_out, 1, MPI_LONG_LONG, MPI_SUM, tc, &rq[2]));
    MPI_OK(MPI_Irecv(sin, 16, MPI_INT, 0, stag, MPI_COMM_SELF, &rq[3]));
    MPI_OK(MPI_Isend(tout, 12, MPI_INT, right, tag, tc, &rq[4]));
    MPI_OK(MPI_Iallreduce(max_in, max_out, 3, MPI_INT, MPI_MAX, tc, &rq[5]));
    MPI_OK(MPI_Isend(sout, 7, MPI_INT, 0, stag, MPI_COMM_SELF, &rq[6]));
    static const int hows[3] = {kWaitall, kTestall, kWaitsome};
    char what[96];
    snprintf(what, sizeof what, "g. collectives and point-to-point, %s", how_name[hows[it]]);
    complete(hows[it], 8, rq, st, 0, done, NULL, what);
    for (int i = 0; i < 8; ++i)
      CHECK(rq[i] == MPI_REQUEST_NULL, "%s: handle %d not MPI_REQUEST_NULL after completion", what, i);
    long long want = (long long)N * (N + 1) / 2 + (long long)N * it;
    CHECK(sum_out == want, "%s: MPI_Iallreduce SUM gave %lld, expected %lld", what, sum_out, want);
    CHECK(max_out[0] == N - 1 && max_out[1] == 0 && max_out[2] == (N - 1) * it,
          "%s: MPI_Iallreduce MAX gave %d %d %d, expected %d 0 %d", what, max_out[0], max_out[1], max_out[2], N - 1,
          (N - 1) * it);
    if (done[1]) check_status(&st[1], left, tag, 12, what);
    if (done[3]) check_status(&st[3], 0, stag, 7, what);
    check_data(tin, 12, left, r, tag, seq, what);
    check_data(sin, 7, r, r, stag, seq, what);
  }
}

int main(int argc, char** argv) {
  rk_init(&argc, &argv, "rk_requests");
  if (argc < 3) {
    rk_say("usage: rk_requests ROUNDS SPEC\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]);
  T = rk_threads_of(argv[2], rk_wrank);
  rk_layout(MPI_COMM_WORLD, T, &offset, &N);
  counts = malloc(rk_wsize * sizeof *counts);
  MPI_Allgather(&T, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
  if (N > kMaxN) {
    rk_say("rk_requests: at most %d thread-ranks (tags by thread-rank)\n", kMaxN);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  detect_testany_quirk();
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
      STAGE("a. completion calls");
      part_completion(r, left, right, round);
      STAGE("b. not yet complete");
      part_pending(r, left, right, round);
      STAGE("c. mixed arrays");
      part_mixed(r, left, right, round);
      STAGE("d. persistent");
      part_persistent(r, left, right, round);
      STAGE("e. MPI_Request_get_status");
      part_get_status(r, left, right, round);
      STAGE("f. cancel and free");
      part_cancel_free(r, left, right, round);
      STAGE("g. nonblocking collectives");
      part_collectives(r, left, right, round);
      STAGE("end of region");
      MPI_OK(MPIX_Threadcomm_finish(tc));
      rk_my = -1;
    }
  }
  rk_set_stage("MPIX_Threadcomm_free");
  MPI_OK(MPIX_Threadcomm_free(&tc));
  free(counts);
  rk_say("rk_requests: rank %d: %d threads of %d thread-ranks, %d rounds\n", rk_wrank, T, N, rounds);
  return rk_finish();
}

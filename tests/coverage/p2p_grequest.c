/* Coverage: generalized requests (MPI_Grequest_start / MPI_Grequest_complete with query, free
   and cancel callbacks) completed by MPI_Wait, MPI_Test, MPI_Request_get_status, every
   MPI_Wait* / MPI_Test* array form, from another thread while the main thread waits, from inside
   the cancel callback; MPI_Cancel, MPI_Request_free of a pending one; MPI_Status_set_elements(_x)
   and MPI_Status_set_cancelled (in query callbacks and on a plain status) read back with
   MPI_Get_count / MPI_Get_elements(_x) / MPI_Test_cancelled; on MPICH the extensions
   MPIX_Grequest_start (poll and wait callbacks) and MPIX_Grequest_class_create / _allocate.
   How often the MPI calls a query or poll callback is its own business: only whether they ran
   is recorded. */
// ranks: 2
#include <pthread.h>
#include <time.h>

#include "coverage.h"

typedef struct {
  int id;
  int elements;         /* the query callback sets this many MPI_INT elements */
  MPI_Count elements_x; /* if > 0: MPI_Status_set_elements_x with MPI_BYTE instead */
  int cancelled;        /* set by the cancel callback */
  int cancel_calls, cancel_complete; /* cancel callback calls and its last `complete` argument */
  int cancel_completes;  /* the cancel callback completes the request itself */
  int query_calls, free_calls, polls, polls_to_complete, waits;
  int completed;
  MPI_Request req;
} greq_state;

static int query_fn(void* extra, MPI_Status* status) {
  greq_state* s = extra;
  ++s->query_calls;
  if (s->elements_x > 0)
    MPI_Status_set_elements_x(status, MPI_BYTE, s->elements_x);
  else
    MPI_Status_set_elements(status, MPI_INT, s->elements);
  MPI_Status_set_cancelled(status, s->cancelled);
  status->MPI_SOURCE = s->id;
  status->MPI_TAG = 100 + s->id;
  status->MPI_ERROR = MPI_SUCCESS;
  return MPI_SUCCESS;
}
static int free_fn(void* extra) {
  ++((greq_state*)extra)->free_calls;
  return MPI_SUCCESS;
}
static int cancel_fn(void* extra, int complete) {
  greq_state* s = extra;
  ++s->cancel_calls;
  s->cancel_complete = complete;
  if (!complete) {
    s->cancelled = 1;
    if (s->cancel_completes) {
      s->completed = 1;
      MPI_Grequest_complete(s->req);
    }
  }
  return MPI_SUCCESS;
}
static void init_state(greq_state* s, int id, int elements) {
  memset(s, 0, sizeof *s);
  s->id = id;
  s->elements = elements;
}
static int start(greq_state* s) {
  return MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, &s->req);
}
static void msleep(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}
static void* completer(void* arg) {
  greq_state* s = arg;
  msleep(30);
  s->completed = 1;
  MPI_Grequest_complete(s->req);
  return NULL;
}
static int count_of(const MPI_Status* st) {
  int count = -1;
  MPI_Get_count(st, MPI_INT, &count);
  return count;
}

#ifdef MPICH
/* MPIX poll callback: completes the request on its third call. */
static int poll_fn(void* extra, MPI_Status* status) {
  greq_state* s = extra;
  (void)status;
  if (++s->polls >= s->polls_to_complete && !s->completed) {
    s->completed = 1;
    MPI_Grequest_complete(s->req);
  }
  return MPI_SUCCESS;
}
/* MPIX wait callback: completes every request it is given. */
static int wait_fn(int count, void** states, double timeout, MPI_Status* status) {
  (void)timeout;
  (void)status;
  for (int i = 0; i < count; ++i) {
    greq_state* s = states[i];
    ++s->waits;
    if (!s->completed) {
      s->completed = 1;
      MPI_Grequest_complete(s->req);
    }
  }
  return MPI_SUCCESS;
}
#endif

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "p2p_grequest");
  int rc, flag, cancelled;
  MPI_Status st;
  greq_state a, b, c;

  /* Start, MPI_Test and MPI_Request_get_status before completion, MPI_Grequest_complete, then
     MPI_Request_get_status (request kept) and MPI_Wait (request freed, free callback run). */
  init_state(&a, 1, 7);
  rc = start(&a);
  flag = -1;
  int rc2 = MPI_Test(&a.req, &flag, &st);
  SAY("grequest_start rc %d; test before completion rc %d flag %d", rc, rc2, flag);
  flag = -1;
  MPI_Request_get_status(a.req, &flag, &st);
  SAY("get_status before completion flag %d", flag);
  rc = MPI_Grequest_complete(a.req);
  flag = 0;
  MPI_Request_get_status(a.req, &flag, &st);
  SAY("grequest_complete rc %d; get_status flag %d source %d tag %d count %d request kept %d", rc,
      flag, st.MPI_SOURCE, st.MPI_TAG, count_of(&st), a.req != MPI_REQUEST_NULL);
  rc = MPI_Wait(&a.req, &st);
  MPI_Test_cancelled(&st, &cancelled);
  SAY("wait rc %d source %d tag %d count %d cancelled %d null %d query ran %d free calls %d", rc,
      st.MPI_SOURCE, st.MPI_TAG, count_of(&st), cancelled, a.req == MPI_REQUEST_NULL,
      a.query_calls > 0, a.free_calls);

  /* Completed by another thread while this one is in MPI_Wait. */
  init_state(&a, 2, 3);
  start(&a);
  pthread_t thread;
  pthread_create(&thread, NULL, completer, &a);
  rc = MPI_Wait(&a.req, &st);
  pthread_join(thread, NULL);
  SAY("wait for a grequest completed by another thread: rc %d source %d count %d free calls %d", rc,
      st.MPI_SOURCE, count_of(&st), a.free_calls);
  /* Same with MPI_Test polling. */
  init_state(&a, 3, 4);
  start(&a);
  pthread_create(&thread, NULL, completer, &a);
  flag = 0;
  while (!flag) MPI_Test(&a.req, &flag, &st);
  pthread_join(thread, NULL);
  SAY("test loop for a grequest completed by another thread: source %d count %d free calls %d",
      st.MPI_SOURCE, count_of(&st), a.free_calls);

  /* Two completed by other threads while this one is in MPI_Waitall, then in MPI_Waitany. */
  for (int form = 0; form < 2; ++form) {
    greq_state two[2];
    MPI_Request r[2];
    pthread_t threads[2];
    for (int k = 0; k < 2; ++k) {
      init_state(&two[k], 40 + 2 * form + k, 5 + k);
      start(&two[k]);
      r[k] = two[k].req;
      pthread_create(&threads[k], NULL, completer, &two[k]);
    }
    MPI_Status sts[2];
    if (form == 0) {
      rc = MPI_Waitall(2, r, sts);
    } else {
      int index, mask = 0;
      for (int k = 0; k < 2; ++k) {
        rc = MPI_Waitany(2, r, &index, &sts[0]);
        mask |= 1 << index;
        CHECK(sts[0].MPI_SOURCE == 42 + index && count_of(&sts[0]) == 5 + index);
      }
      sts[0].MPI_SOURCE = mask;
    }
    for (int k = 0; k < 2; ++k) pthread_join(threads[k], NULL);
    if (form == 0)
      SAY("waitall for two grequests completed by other threads: rc %d sources %d %d counts %d %d",
          rc, sts[0].MPI_SOURCE, sts[1].MPI_SOURCE, count_of(&sts[0]), count_of(&sts[1]));
    else
      SAY("waitany twice for two grequests completed by other threads: rc %d mask %d "
          "free calls %d %d",
          rc, sts[0].MPI_SOURCE, two[0].free_calls, two[1].free_calls);
  }

  /* MPI_Cancel before completion: the cancel callback sees complete=0 and marks it cancelled;
     the request is then completed and waited for. */
  init_state(&a, 4, 2);
  start(&a);
  rc = MPI_Cancel(&a.req);
  SAY("cancel pending grequest rc %d: cancel calls %d complete arg %d", rc, a.cancel_calls,
      a.cancel_complete);
  MPI_Grequest_complete(a.req);
  MPI_Wait(&a.req, &st);
  MPI_Test_cancelled(&st, &cancelled);
  SAY("then complete + wait: cancelled %d free calls %d", cancelled, a.free_calls);
  /* MPI_Cancel whose callback completes the request itself (MPI_Grequest_complete inside
     MPI_Cancel). Not on MPICH 4.0.2, which fails an assertion natively (grequest_complete.c line
     37: MPI called again from inside its own callback at MPI_THREAD_MULTIPLE). */
#ifndef MPICH
  init_state(&a, 5, 2);
  a.cancel_completes = 1;
  start(&a);
  rc = MPI_Cancel(&a.req);
  rc2 = MPI_Wait(&a.req, &st);
  MPI_Test_cancelled(&st, &cancelled);
  SAY("cancel callback completes: rc %d wait rc %d cancelled %d free calls %d", rc, rc2, cancelled,
      a.free_calls);
#endif
  /* MPI_Cancel after completion: the callback sees complete=1, nothing is cancelled. */
  init_state(&a, 6, 2);
  start(&a);
  MPI_Grequest_complete(a.req);
  rc = MPI_Cancel(&a.req);
  MPI_Wait(&a.req, &st);
  MPI_Test_cancelled(&st, &cancelled);
  SAY("cancel completed grequest rc %d: cancel calls %d complete arg %d cancelled %d", rc,
      a.cancel_calls, a.cancel_complete, cancelled);

  /* MPI_Request_free before completion (MPI-3.1 §12.2: the request goes away once it is both
     freed and completed; the free callback runs then). The handle variable is set to
     MPI_REQUEST_NULL, so the request is completed through a copy of the handle kept before. */
  init_state(&a, 7, 1);
  start(&a);
  MPI_Request copy = a.req;
  rc = MPI_Request_free(&a.req);
  int free_before = a.free_calls;
  rc2 = MPI_Grequest_complete(copy);
  SAY("request_free of pending grequest rc %d null %d free calls before completion %d; "
      "grequest_complete rc %d free calls after %d",
      rc, a.req == MPI_REQUEST_NULL, free_before, rc2, a.free_calls);

  /* Arrays of generalized requests with MPI_REQUEST_NULL entries, and a real receive. */
  {
    int peer = 1 - rank, in = -1, out = 40 + rank, index, outcount, indices[4];
    MPI_Request r[4];
    MPI_Status sts[4];
    init_state(&a, 10, 1);
    init_state(&b, 11, 2);
    init_state(&c, 12, 3);
    start(&a);
    start(&b);
    r[0] = a.req;
    r[1] = MPI_REQUEST_NULL;
    r[2] = b.req;
    MPI_Irecv(&in, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[3]);
    MPI_Send(&out, 1, MPI_INT, peer, 9, MPI_COMM_WORLD);
    MPI_Grequest_complete(b.req);
    /* MPI_Waitany returns b (complete) or the receive; MPI_Testany then the other; a stays. */
    int done = 0;
    while ((done & 0xc) != 0xc) {
      MPI_Waitany(4, r, &index, &st);
      done |= 1 << index;
      if (index == 2) CHECK(st.MPI_SOURCE == 11 && count_of(&st) == 2);
      if (index == 3) CHECK(in == 40 + peer);
    }
    flag = -1;
    MPI_Testany(4, r, &index, &flag, &st);
    SAY("waitany completed mask %d; testany with only the pending grequest flag %d", done, flag);
    flag = -1;
    MPI_Testall(4, r, &flag, sts);
    outcount = -1;
    MPI_Testsome(4, r, &outcount, indices, sts);
    SAY("testall flag %d testsome outcount %d", flag, outcount);
    MPI_Grequest_complete(a.req);
    MPI_Waitsome(4, r, &outcount, indices, sts);
    SAY("waitsome outcount %d index %d source %d count %d", outcount, indices[0], sts[0].MPI_SOURCE,
        count_of(&sts[0]));
    start(&c);
    r[1] = c.req;
    MPI_Grequest_complete(c.req);
    rc = MPI_Waitall(4, r, sts);
    SAY("waitall rc %d source %d count %d free calls %d %d %d", rc, sts[1].MPI_SOURCE,
        count_of(&sts[1]), a.free_calls, b.free_calls, c.free_calls);
    /* MPI_Testall and MPI_Testsome that find completed generalized requests. */
    init_state(&a, 13, 1);
    init_state(&b, 14, 2);
    start(&a);
    start(&b);
    r[0] = a.req;
    r[1] = b.req;
    MPI_Grequest_complete(a.req);
    MPI_Grequest_complete(b.req);
    flag = 0;
    MPI_Testall(2, r, &flag, sts);
    SAY("testall of two completed flag %d sources %d %d", flag, sts[0].MPI_SOURCE,
        sts[1].MPI_SOURCE);
    init_state(&a, 15, 1);
    start(&a);
    r[0] = a.req;
    MPI_Grequest_complete(a.req);
    outcount = 0;
    MPI_Testsome(1, r, &outcount, indices, MPI_STATUSES_IGNORE);
    SAY("testsome of a completed one outcount %d free calls %d", outcount, a.free_calls);
  }

  /* MPI_Status_set_elements_x beyond int range, through a query callback. */
  {
    init_state(&a, 20, 0);
    a.elements_x = (MPI_Count)3000000000LL;
    start(&a);
    MPI_Grequest_complete(a.req);
    MPI_Wait(&a.req, &st);
    MPI_Count ex = -1;
    int e = 0, cnt = 0;
    MPI_Get_elements_x(&st, MPI_BYTE, &ex);
    MPI_Get_elements(&st, MPI_BYTE, &e);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    SAY("set_elements_x 3e9 bytes: elements_x %lld elements undefined %d count undefined %d",
        (long long)ex, e == MPI_UNDEFINED, cnt == MPI_UNDEFINED);
  }

  /* The status functions on a plain status. */
  {
    MPI_Status s;
    memset(&s, 0, sizeof s);
    int count = -1, elements = -1;
    rc = MPI_Status_set_elements(&s, MPI_INT, 5);
    MPI_Get_count(&s, MPI_INT, &count);
    MPI_Get_elements(&s, MPI_INT, &elements);
    int bytes = -1;
    MPI_Get_count(&s, MPI_BYTE, &bytes);
    SAY("set_elements(int, 5) rc %d: count %d elements %d bytes %d", rc, count, elements, bytes);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    rc = MPI_Status_set_elements(&s, pair, 3);
    MPI_Get_count(&s, pair, &count);
    MPI_Get_elements(&s, pair, &elements);
    MPI_Count ex = -1;
    MPI_Get_elements_x(&s, MPI_INT, &ex);
    SAY("set_elements(pair, 3) rc %d: count %d elements %d elements_x as int %lld", rc, count,
        elements, (long long)ex);
    rc = MPI_Status_set_elements_x(&s, pair, (MPI_Count)4);
    MPI_Get_count(&s, pair, &count);
    MPI_Get_elements_x(&s, pair, &ex);
    SAY("set_elements_x(pair, 4) rc %d: count %d elements_x %lld", rc, count, (long long)ex);
    MPI_Type_free(&pair);
    rc = MPI_Status_set_cancelled(&s, 1);
    MPI_Test_cancelled(&s, &cancelled);
    rc2 = MPI_Status_set_cancelled(&s, 0);
    int cancelled2 = -1;
    MPI_Test_cancelled(&s, &cancelled2);
    SAY("set_cancelled rc %d %d: test_cancelled %d then %d", rc, rc2, cancelled, cancelled2);
  }

#ifdef MPICH
  /* MPIX_Grequest_start: the MPI polls the request (poll callback completes it on its third call)
     or hands it to the wait callback. */
  {
    init_state(&a, 30, 6);
    a.polls_to_complete = 3;
    rc = MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &a, &a.req);
    rc2 = MPI_Wait(&a.req, &st);
    SAY("mpix_grequest_start rc %d wait rc %d source %d count %d completed %d callbacks ran %d "
        "free calls %d",
        rc, rc2, st.MPI_SOURCE, count_of(&st), a.completed, a.polls + a.waits > 0, a.free_calls);
    init_state(&a, 31, 1);
    a.polls_to_complete = 3;
    MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &a, &a.req);
    flag = 0;
    while (!flag) MPI_Test(&a.req, &flag, &st);
    SAY("mpix grequest by test loop: source %d polls >= 3 %d", st.MPI_SOURCE, a.polls >= 3);

    /* A class of generalized requests, two instances completed by MPI_Waitall. */
    MPIX_Grequest_class cls;
    rc = MPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &cls);
    init_state(&b, 32, 2);
    init_state(&c, 33, 3);
    b.polls_to_complete = c.polls_to_complete = 2;
    rc2 = MPIX_Grequest_class_allocate(cls, &b, &b.req);
    int rc3 = MPIX_Grequest_class_allocate(cls, &c, &c.req);
    MPI_Request r[2] = {b.req, c.req};
    MPI_Status sts[2];
    int rc4 = MPI_Waitall(2, r, sts);
    SAY("mpix class_create rc %d class_allocate rc %d %d waitall rc %d sources %d %d counts %d %d "
        "free calls %d %d",
        rc, rc2, rc3, rc4, sts[0].MPI_SOURCE, sts[1].MPI_SOURCE, count_of(&sts[0]),
        count_of(&sts[1]), b.free_calls, c.free_calls);
  }
#endif
  return cov_finish();
}

/* Requests shared between threads: one thread starts receives into an array that another
   thread completes with Waitall / Waitany / Waitsome / Testsome; persistent requests started
   and waited repeatedly; MPI_Cancel of a receive nobody matches; MPI_Request_free of a send;
   a generalized request completed by another thread. */
#include <unistd.h>

#include "test_util.h"

enum { kBatch = 16, kRounds = 30 };
static int rank, peer;
static MPI_Request shared[kBatch];
static int inbox[kBatch];
static pthread_mutex_t handoff = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t posted_cond = PTHREAD_COND_INITIALIZER;
static int posted_round = -1, done_round = -1;

/* The poster and the completer take turns through these two counters. */
static void await_round(const int* counter, int value) {
  pthread_mutex_lock(&handoff);
  while (*counter != value) pthread_cond_wait(&posted_cond, &handoff);
  pthread_mutex_unlock(&handoff);
}
static void announce_round(int* counter, int value) {
  pthread_mutex_lock(&handoff);
  *counter = value;
  pthread_cond_broadcast(&posted_cond);
  pthread_mutex_unlock(&handoff);
}

static void* poster(void* arg) {
  (void)arg;
  for (int round = 0; round < kRounds; ++round) {
    await_round(&done_round, round - 1);
    for (int i = 0; i < kBatch; ++i) MPI_Irecv(&inbox[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &shared[i]);
    announce_round(&posted_round, round);
  }
  return NULL;
}

static void* completer(void* arg) {
  (void)arg;
  for (int round = 0; round < kRounds; ++round) {
    await_round(&posted_round, round);
    int completed = 0;
    switch (round % 4) {
      case 0: {
        MPI_Status st[kBatch];
        MPI_Waitall(kBatch, shared, st);
        for (int i = 0; i < kBatch; ++i) CHECK(st[i].MPI_TAG == i, "waitall tag %d", st[i].MPI_TAG);
        completed = kBatch;
        break;
      }
      case 1:
        while (completed < kBatch) {
          int index;
          MPI_Status st;
          MPI_Waitany(kBatch, shared, &index, &st);
          CHECK(index != MPI_UNDEFINED && st.MPI_TAG == index, "waitany index %d tag %d", index, st.MPI_TAG);
          ++completed;
        }
        break;
      default:
        while (completed < kBatch) {
          int out, indices[kBatch];
          if (round % 4 == 2) MPI_Waitsome(kBatch, shared, &out, indices, MPI_STATUSES_IGNORE);
          else MPI_Testsome(kBatch, shared, &out, indices, MPI_STATUSES_IGNORE);
          CHECK(out != MPI_UNDEFINED, "waitsome/testsome undefined with %d left", kBatch - completed);
          if (out == MPI_UNDEFINED) break;
          completed += out;
        }
    }
    for (int i = 0; i < kBatch; ++i) CHECK(inbox[i] == round * 1000 + i, "round %d inbox[%d] = %d", round, i, inbox[i]);
    int any;
    MPI_Testany(kBatch, shared, &any, &completed, MPI_STATUS_IGNORE);
    CHECK(any == MPI_UNDEFINED && completed, "all requests must be inactive");
    announce_round(&done_round, round);
  }
  return NULL;
}

static void* sender(void* arg) {
  (void)arg;
  for (int round = 0; round < kRounds; ++round)
    for (int i = kBatch - 1; i >= 0; --i) {
      int v = round * 1000 + i;
      MPI_Send(&v, 1, MPI_INT, peer, i, MPI_COMM_WORLD);
    }
  return NULL;
}

static void persistent(void) {
  int out = 0, in = -1;
  MPI_Request reqs[2];
  MPI_Send_init(&out, 1, MPI_INT, peer, 500, MPI_COMM_WORLD, &reqs[0]);
  MPI_Recv_init(&in, 1, MPI_INT, peer, 500, MPI_COMM_WORLD, &reqs[1]);
  for (int i = 0; i < 50; ++i) {
    out = rank * 100 + i;
    MPI_Startall(2, reqs);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    CHECK(in == peer * 100 + i, "persistent %d", in);
  }
  MPI_Status st;
  MPI_Wait(&reqs[1], &st); /* inactive persistent request: returns at once */
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
}

static void cancel_and_free(void) {
  int never;
  MPI_Request r;
  MPI_Irecv(&never, 1, MPI_INT, peer, 777, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  MPI_Status st;
  MPI_Wait(&r, &st);
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled, "receive was not cancelled");
  int v = 31337 + rank;
  MPI_Isend(&v, 1, MPI_INT, peer, 778, MPI_COMM_WORLD, &r);
  MPI_Request_free(&r);
  int got;
  MPI_Recv(&got, 1, MPI_INT, peer, 778, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(got == 31337 + peer, "freed send delivered %d", got);
}

static int query_fn(void* extra, MPI_Status* st) {
  MPI_Status_set_elements(st, MPI_INT, *(int*)extra);
  MPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
static int free_fn(void* extra) { (void)extra; return MPI_SUCCESS; }
static int cancel_fn(void* extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }
static MPI_Request greq;
static void* grequest_completer(void* arg) {
  usleep(20000);
  *(int*)arg = 5;
  MPI_Grequest_complete(greq);
  return NULL;
}

static void generalized(void) {
  int elements = 0;
  MPI_Grequest_start(query_fn, free_fn, cancel_fn, &elements, &greq);
  pthread_t t;
  pthread_create(&t, NULL, grequest_completer, &elements);
  MPI_Status st;
  MPI_Wait(&greq, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == 5, "generalized request count %d", count);
  pthread_join(t, NULL);
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "serial_requests", &rank, &peer);
  pthread_t p, c, s;
  pthread_create(&p, NULL, poster, NULL);
  pthread_create(&c, NULL, completer, NULL);
  pthread_create(&s, NULL, sender, NULL);
  persistent();
  cancel_and_free();
  generalized();
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  pthread_join(s, NULL);
  return test_finish();
}

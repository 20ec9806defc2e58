/* Handle conversions from many threads at once. The Fortran integers of C handles are entries
   of the MPI's handle tables: Open MPI extends its request table at the first MPI_Request_c2f of
   each request and empties the entry when the request is freed, and the table locks itself only
   at MPI_THREAD_MULTIPLE. 8 threads, each ROUNDS times (default 1000) on its own duplicate of
   MPI_COMM_SELF: start 256 receives and 256 sends to itself, convert every request with
   MPI_Request_c2f (while other threads convert theirs or free theirs in MPI_Waitall), check that
   every integer converts back to its own request with MPI_Request_f2c and that no two distinct
   requests of the batch share an integer, make a datatype and convert it both ways, complete the
   batch and check every message. Over the old unlocked conversions in serialize mode, Open MPI
   4.1 handed two requests one integer, or its table's bookkeeping went wrong and the program
   hung, in about one run of 100 rounds in six. Natively at MPI_THREAD_MULTIPLE it passes on
   MPICH; Open MPI 4.1.4 and 5.0.7 fail it now and then (cmake/TsmpiMpi.cmake).

   usage: serial_handle_tables [ROUNDS] */
#include "test_util.h"

enum { kThreads = 8, kBatch = 256 };
static int rounds = 1000;

typedef struct {
  int index;
  MPI_Comm self; /* a duplicate of MPI_COMM_SELF per thread: its messages are its own */
} Converter;

typedef struct {
  MPI_Fint f;
  MPI_Request c;
} Converted;
static int by_integer(const void* a, const void* b) {
  const MPI_Fint x = ((const Converted*)a)->f, y = ((const Converted*)b)->f;
  return (x > y) - (x < y);
}

/* How many requests of a batch have an integer another request of it has too. (One request may
   stand for several calls: Open MPI returns one completed request object for sends done at
   once.) */
static int shared_integers(Converted* batch, int n) {
  qsort(batch, n, sizeof batch[0], by_integer);
  int shared = 0;
  for (int i = 1; i < n; ++i) shared += batch[i].f == batch[i - 1].f && batch[i].c != batch[i - 1].c;
  return shared;
}

static void* converter(void* arg) {
  const Converter* c = arg;
  const int t = c->index;
  int inbox[kBatch], outbox[kBatch];
  MPI_Request requests[2 * kBatch];
  Converted batch[2 * kBatch];
  for (int round = 0; round < rounds; ++round) {
    for (int j = 0; j < kBatch; ++j) {
      outbox[j] = (t * rounds + round) * kBatch + j;
      inbox[j] = -1;
      MPI_Irecv(&inbox[j], 1, MPI_INT, 0, j, c->self, &requests[j]);
      MPI_Isend(&outbox[j], 1, MPI_INT, 0, j, c->self, &requests[kBatch + j]);
    }
    for (int j = 0; j < 2 * kBatch; ++j) batch[j] = (Converted){MPI_Request_c2f(requests[j]), requests[j]};
    int wrong = 0;
    for (int j = 0; j < 2 * kBatch; ++j) wrong += MPI_Request_f2c(batch[j].f) != batch[j].c;
    CHECK(wrong == 0, "thread %d round %d: %d requests convert back to another", t, round, wrong);
    const int shared = shared_integers(batch, 2 * kBatch);
    CHECK(shared == 0, "thread %d round %d: %d requests have another's integer", t, round, shared);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(pair)) == pair, "thread %d round %d: a datatype converts back to another", t,
          round);
    MPI_Waitall(2 * kBatch, requests, MPI_STATUSES_IGNORE);
    for (int j = 0; j < kBatch; ++j)
      CHECK(inbox[j] == outbox[j], "thread %d round %d: message %d is %d", t, round, j, inbox[j]);
    MPI_Type_free(&pair);
    if (atomic_load(&test_failures)) break;  /* said once is enough */
  }
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "serial_handle_tables");
  if (argc > 1) rounds = atoi(argv[1]);
  Converter c[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    c[i].index = i;
    MPI_Comm_dup(MPI_COMM_SELF, &c[i].self);
  }
  run_threads(kThreads, converter, c, sizeof c[0]);
  for (int i = 0; i < kThreads; ++i) MPI_Comm_free(&c[i].self);
  return test_finish();
}

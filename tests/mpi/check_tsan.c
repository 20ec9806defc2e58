/* Buffer races ThreadSanitizer reports through tsmpi's annotations (TSMPI_CHECK, built with
   -fsanitize=thread; docs/checking.md#buffer-races-with-threadsanitizer), each with a correct
   twin that must stay silent.
   usage: check_tsan MODE [twin]
     isend: rank 0 stores into its send buffer between MPI_Isend and MPI_Wait
            (twin: after the wait)
     irecv: rank 1 reads its receive buffer between MPI_Irecv and MPI_Wait (twin: after the wait)
     vector: rank 0 sends every other element (MPI_Type_vector) with MPI_Isend and stores into
            a sent element before MPI_Wait (twin: into an element between them, which the send
            does not read)
     send:  a second thread of rank 0 writes the buffer the main thread's blocking MPI_Send reads,
            unordered (twin: the main thread waits for the write under a mutex)
     send_after_mpi: as send, but both threads send a message of their own on another
            communicator in between: their MPI calls must not order them (tsmpi's and the MPI's
            locks are not the program's; twin: ordered by a mutex)
     self:  a message from one thread to another in one process (MPI_COMM_SELF): the receiver
            reads what the sender wrote before sending (twin only: the message orders them;
            the race is a store into the send buffer between MPI_Isend and MPI_Wait)
     ranks: thread-ranks (MPIX_Threadcomm over MPI_COMM_SELF, 2 threads per process):
            thread-rank 0 stores into its send buffer between MPI_Isend and MPI_Wait (twin: after
            the wait); in both, what thread-rank 0 wrote before a message and before a barrier
            is read by thread-rank 1 after them (the engine's order, silent)
   Two ranks. MPIX_Threadcomm_* are tsmpi's (weak here: the program is not linked to it). */
#include <unistd.h>

#include "test_util.h"

#define N 256

static int rank, twin;
static int buf[N];
static volatile int sink;

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int written;

static MPI_Comm other_comm = MPI_COMM_NULL;  // send_after_mpi: the writer's own messages

static void* writer(void* p) {
  (void)p;
  if (twin) pthread_mutex_lock(&mutex);
  for (int i = 0; i < N; ++i) buf[i] = 1000 + i;
  if (twin) {
    written = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&mutex);
  }
  if (other_comm != MPI_COMM_NULL) {
    int token = 1;
    MPI_Send(&token, 1, MPI_INT, 1, 1, other_comm);
  }
  return NULL;
}

/* The receive side of every mode but self: rank 1 takes rank 0's message and checks it where
   the program is correct. */
static void receive_and_check(int expect_base) {
  int in[N];
  MPI_Recv(in, N, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (twin)
    for (int i = 0; i < N; ++i) CHECK(in[i] == expect_base + i, "in[%d] = %d", i, in[i]);
}

#pragma weak MPIX_Threadcomm_init
#pragma weak MPIX_Threadcomm_start
#pragma weak MPIX_Threadcomm_finish
#pragma weak MPIX_Threadcomm_free
int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm* newthreadcomm);
int MPIX_Threadcomm_free(MPI_Comm* threadcomm);
int MPIX_Threadcomm_start(MPI_Comm threadcomm);
int MPIX_Threadcomm_finish(MPI_Comm threadcomm);

static MPI_Comm threadcomm;
static int before_message, before_barrier;  // thread-rank 0 writes, thread-rank 1 reads after

static void* thread_rank(void* p) {
  (void)p;
  MPIX_Threadcomm_start(threadcomm);
  int me;
  MPI_Comm_rank(threadcomm, &me);
  if (me == 0) {
    before_message = 11;
    MPI_Request r;
    MPI_Isend(buf, N, MPI_INT, 1, 0, threadcomm, &r);
    if (!twin) buf[7] = -1; /* the race */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (twin) buf[7] = -1;
    before_barrier = 22;
    MPI_Barrier(threadcomm);
  } else {
    int in[N];
    MPI_Recv(in, N, MPI_INT, 0, 0, threadcomm, MPI_STATUS_IGNORE);
    CHECK(before_message == 11, "before_message = %d", before_message);
    if (twin) CHECK(in[7] == 7, "in[7] = %d", in[7]);
    MPI_Barrier(threadcomm);
    CHECK(before_barrier == 22, "before_barrier = %d", before_barrier);
  }
  MPIX_Threadcomm_finish(threadcomm);
  return NULL;
}

static int shared_value;  // written by the sending thread, read by the receiving one (self)
static int self_buf[4];

static void* self_receiver(void* p) {
  (void)p;
  int in[4];
  /* After the send: MPICH 4.0 (ch4, UCX) loses a message sent to a receive another thread of
     the process posted before, without tsmpi as well. */
  usleep(200000);
  MPI_Recv(in, 4, MPI_INT, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  CHECK(shared_value == 7 && in[0] == 70, "shared_value %d, in[0] %d", shared_value, in[0]);
  return NULL;
}

int main(int argc, char** argv) {
  int peer;
  test_init_pair(&argc, &argv, "check_tsan", &rank, &peer);
  const char* mode = argc > 1 ? argv[1] : "isend";
  twin = argc > 2 && !strcmp(argv[2], "twin");
  for (int i = 0; i < N; ++i) buf[i] = i;

  if (!strcmp(mode, "isend")) {
    if (rank == 0) {
      MPI_Request r;
      MPI_Isend(buf, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
      if (!twin) buf[3] = -1; /* the race: the send may still read it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (twin) buf[3] = -1;
    } else {
      receive_and_check(0);
    }
  } else if (!strcmp(mode, "vector")) {
    MPI_Datatype every_other;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    if (rank == 0) {
      MPI_Request r;
      MPI_Isend(buf, 1, every_other, 1, 0, MPI_COMM_WORLD, &r);
      buf[twin ? 11 : 10] = -1; /* sent (the race), or a hole */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      int in[N / 2];
      MPI_Recv(in, N / 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (twin) CHECK(in[5] == 10 && in[6] == 12, "in[5] = %d, in[6] = %d", in[5], in[6]);
    }
    MPI_Type_free(&every_other);
  } else if (!strcmp(mode, "irecv")) {
    if (rank == 1) {
      MPI_Request r;
      MPI_Irecv(buf, N, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
      if (!twin) sink = buf[5]; /* the race: the receive may still write it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (twin) sink = buf[5];
      if (twin) CHECK(buf[5] == 105, "buf[5] = %d", buf[5]);
    } else {
      int out[N];
      for (int i = 0; i < N; ++i) out[i] = 100 + i;
      usleep(100000);
      MPI_Send(out, N, MPI_INT, 1, 0, MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "send") || !strcmp(mode, "send_after_mpi")) {
    const int calls = !strcmp(mode, "send_after_mpi");
    if (calls) MPI_Comm_dup(MPI_COMM_WORLD, &other_comm);
    if (rank == 0) {
      pthread_t t;
      pthread_create(&t, NULL, writer, NULL);
      if (twin) {
        pthread_mutex_lock(&mutex);
        while (!written) pthread_cond_wait(&cond, &mutex);
        pthread_mutex_unlock(&mutex);
      } else {
        usleep(200000); /* the write is done by now, but nothing orders it before the send */
      }
      if (calls) {
        int token = 2;
        MPI_Send(&token, 1, MPI_INT, 1, 2, other_comm);
      }
      MPI_Send(buf, N, MPI_INT, 1, 0, MPI_COMM_WORLD);
      pthread_join(t, NULL);
    } else {
      receive_and_check(1000);
      if (calls) {
        int token;
        MPI_Recv(&token, 1, MPI_INT, 0, 1, other_comm, MPI_STATUS_IGNORE);
        MPI_Recv(&token, 1, MPI_INT, 0, 2, other_comm, MPI_STATUS_IGNORE);
      }
    }
    if (calls) MPI_Comm_free(&other_comm);
  } else if (!strcmp(mode, "self")) {
    pthread_t t;
    pthread_create(&t, NULL, self_receiver, NULL);
    shared_value = 7;
    self_buf[0] = 70;
    MPI_Request r;
    MPI_Isend(self_buf, 4, MPI_INT, 0, 5, MPI_COMM_SELF, &r);
    if (!twin) self_buf[1] = 1; /* the race */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    pthread_join(t, NULL);
  } else if (!strcmp(mode, "ranks")) {
    if (!MPIX_Threadcomm_init) {
      printf("check_tsan: ranks needs tsmpi (MPIX_Threadcomm_init)\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPIX_Threadcomm_init(MPI_COMM_SELF, 2, &threadcomm);
    pthread_t t[2];
    for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, thread_rank, NULL);
    for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
    MPIX_Threadcomm_free(&threadcomm);
  } else {
    printf("check_tsan: unknown mode %s\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return test_finish();
}

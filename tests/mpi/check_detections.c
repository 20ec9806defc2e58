/* TSMPI_CHECK detections, each with a correct twin that must stay silent.
   usage: check_detections MODE [twin]
     collective: rank 0's two threads in MPI_Barrier on one communicator at once
                 (twin: on two communicators)
     dup:        rank 0's two threads in MPI_Comm_dup of one communicator at once (a constructor
                 is collective over its input; twin: of two communicators)
     fence:      rank 0's two threads in MPI_Win_fence on one window at once (twin: two windows)
     request:    rank 0's two threads MPI_Wait on one request (twin: each on its own)
     buffer:     a receive into a buffer a pending receive writes, and a send of a buffer a
                 receive in flight writes (twin: disjoint parts of the same array)
     buffer_far: a receive into the far end of a 64 KiB buffer a pending receive writes, 15
                 4 KiB blocks from where that buffer begins (twin: just past its end)
     freed:      thread 2 uses an info thread 1 freed (twin: thread 2 uses its own)
   Two ranks. Rank 1 delays its side so rank 0's calls overlap for certain. */
#include <unistd.h>

#include "test_util.h"

static int rank, twin;
static MPI_Comm comm_a, comm_b;
static MPI_Request shared_req, own_req[2];
static int recv_vals[2];
static MPI_Info info_a, info_b, stale_a;
static MPI_Win win_a, win_b;

static void* dup_thread(void* p) {
  int t = *(int*)p;
  if (t == 1) usleep(300000);
  MPI_Comm out;
  MPI_Comm_dup(t == 0 || !twin ? comm_a : comm_b, &out);
  MPI_Comm_free(&out);
  return NULL;
}

static void* fence_thread(void* p) {
  int t = *(int*)p;
  if (t == 1) usleep(300000);
  MPI_Win_fence(0, t == 0 || !twin ? win_a : win_b);
  return NULL;
}

static void* collective_thread(void* p) {
  int t = *(int*)p;
  if (t == 1) usleep(300000);
  MPI_Barrier(t == 0 || !twin ? comm_a : comm_b);
  return NULL;
}

static void* request_thread(void* p) {
  int t = *(int*)p;
  if (t == 1) usleep(200000);
  MPI_Wait(twin ? &own_req[t] : &shared_req, MPI_STATUS_IGNORE);
  return NULL;
}

static void* freed_thread(void* p) {
  int t = *(int*)p;
  if (t == 0) {
    MPI_Info_free(&info_a);
  } else {
    usleep(200000);
    int rc = MPI_Info_set(twin ? info_b : stale_a, "k", "v");
    CHECK((rc == MPI_SUCCESS) == (twin != 0), "MPI_Info_set rc %d", rc);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int peer;
  test_init_pair(&argc, &argv, "check_detections", &rank, &peer);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const char* mode = argc > 1 ? argv[1] : "";
  twin = argc > 2 && !strcmp(argv[2], "twin");
  int ids[2] = {0, 1};
  if (!strcmp(mode, "collective")) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_a);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_b);
    if (rank == 0) {
      run_threads(2, collective_thread, ids, sizeof ids[0]);
    } else {
      sleep(1);
      MPI_Barrier(comm_a);
      MPI_Barrier(twin ? comm_b : comm_a);
    }
    MPI_Comm_free(&comm_a);
    MPI_Comm_free(&comm_b);
  } else if (!strcmp(mode, "dup")) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_a);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_b);
    if (rank == 0) {
      run_threads(2, dup_thread, ids, sizeof ids[0]);
    } else {
      MPI_Comm out;
      sleep(1);
      MPI_Comm_dup(comm_a, &out);
      MPI_Comm_free(&out);
      MPI_Comm_dup(twin ? comm_b : comm_a, &out);
      MPI_Comm_free(&out);
    }
    MPI_Comm_free(&comm_a);
    MPI_Comm_free(&comm_b);
  } else if (!strcmp(mode, "fence")) {
    int mem[2][4];
    MPI_Win_create(mem[0], sizeof mem[0], sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_a);
    MPI_Win_create(mem[1], sizeof mem[1], sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_b);
    if (rank == 0) {
      run_threads(2, fence_thread, ids, sizeof ids[0]);
    } else {
      sleep(1);
      MPI_Win_fence(0, win_a);
      MPI_Win_fence(0, twin ? win_b : win_a);
    }
    MPI_Win_free(&win_a);
    MPI_Win_free(&win_b);
  } else if (!strcmp(mode, "request")) {
    if (rank == 0) {
      if (twin) {
        MPI_Irecv(&recv_vals[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &own_req[0]);
        MPI_Irecv(&recv_vals[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &own_req[1]);
      } else {
        MPI_Irecv(&recv_vals[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &shared_req);
      }
      run_threads(2, request_thread, ids, sizeof ids[0]);
      CHECK(recv_vals[0] == 10 && (!twin || recv_vals[1] == 11), "received %d %d", recv_vals[0], recv_vals[1]);
    } else {
      sleep(1);
      int v0 = 10, v1 = 11;
      MPI_Send(&v0, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      if (twin) MPI_Send(&v1, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "buffer")) {
    int buf[200], out[100];
    for (int i = 0; i < 100; ++i) out[i] = i;
    if (rank == 0) {
      MPI_Request r[2];
      MPI_Irecv(buf, 100, MPI_INT, 1, 0, MPI_COMM_WORLD, &r[0]);
      /* A second receive into buf[50..60) (twin: buf[100..110)). */
      MPI_Recv(twin ? buf + 100 : buf + 50, 10, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      /* A send of memory the pending receive writes (twin: of memory it does not). */
      MPI_Isend(twin ? buf + 150 : buf + 20, 5, MPI_INT, 1, 2, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
      /* Both completed: the same memory may be used again. */
      MPI_Recv(buf, 100, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(buf[99] == 99, "last receive ended with %d", buf[99]);
    } else {
      int got[5];
      usleep(300000);
      MPI_Send(out, 10, MPI_INT, 0, 1, MPI_COMM_WORLD);
      MPI_Recv(got, 5, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(out, 100, MPI_INT, 0, 0, MPI_COMM_WORLD);
      MPI_Send(out, 100, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "buffer_far")) {
    enum { kBig = 16384, kSmall = 10 };
    if (rank == 0) {
      int* big = NULL;
      CHECK(posix_memalign((void**)&big, 4096, (kBig + kSmall) * sizeof *big) == 0, "no memory");
      MPI_Request r;
      MPI_Irecv(big, kBig, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
      MPI_Recv(big + (twin ? kBig : kBig - 1000), kSmall, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      CHECK(big[0] == 0 && big[kBig - 1] == kBig - 1, "big receive ended with %d %d", big[0], big[kBig - 1]);
      free(big);
    } else {
      int* out = malloc(kBig * sizeof *out);
      for (int i = 0; i < kBig; ++i) out[i] = i;
      usleep(300000);
      MPI_Send(out, kSmall, MPI_INT, 0, 1, MPI_COMM_WORLD);
      MPI_Send(out, kBig, MPI_INT, 0, 0, MPI_COMM_WORLD);
      free(out);
    }
  } else if (!strcmp(mode, "freed")) {
    MPI_Info_create(&info_a);
    MPI_Info_create(&info_b);
    stale_a = info_a;  /* thread 2's copy of the handle */
    run_threads(2, freed_thread, ids, sizeof ids[0]);
    MPI_Info_free(&info_b);
  } else {
    printf("check_detections: unknown mode '%s'\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  printf("check_detections: rank %d: %s%s done\n", rank, mode, twin ? " twin" : "");
  return test_finish();
}

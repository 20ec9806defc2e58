/* Threads concurrently create and free communicators (Comm_dup, Comm_idup, Comm_split,
   Comm_create, Cart_create, Cart_sub, Intercomm_create and merge, Comm_create_group) from their
   own parent, in opposite orders on even and odd ranks, and check each new communicator with
   a reduction on it. Also checks collective file I/O on a per-thread file. */
#include <unistd.h>

#include "test_util.h"

enum { kThreads = 2, kRounds = 12 };
static int rank, size;

static void check_comm(MPI_Comm c, const char* what, int expected_size) {
  int s, r, sum = 0, one = 1;
  MPI_Comm_size(c, &s);
  MPI_Comm_rank(c, &r);
  CHECK(s == expected_size, "%s size %d, want %d", what, s, expected_size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  CHECK(sum == s, "%s allreduce %d", what, sum);
}

static void create_and_free(MPI_Comm parent, int step) {
  MPI_Comm c;
  switch (step % 7) {
    case 0:
      MPI_Comm_dup(parent, &c);
      check_comm(c, "dup", size);
      break;
    case 1: {
      MPI_Request req;
      MPI_Comm_idup(parent, &c, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      check_comm(c, "idup", size);
      break;
    }
    case 2:
      MPI_Comm_split(parent, rank < size / 2, rank, &c);
      check_comm(c, "split", rank < size / 2 ? size / 2 : size - size / 2);
      break;
    case 3: {
      MPI_Group world, evens;
      MPI_Comm_group(parent, &world);
      int n = (size + 1) / 2, ranks[64];
      for (int i = 0; i < n; ++i) ranks[i] = 2 * i;
      MPI_Group_incl(world, n, ranks, &evens);
      MPI_Comm_create(parent, evens, &c);
      if (rank % 2 == 0) check_comm(c, "create", n);
      else CHECK(c == MPI_COMM_NULL, "create gave a communicator to an odd rank");
      if (rank % 2 == 0) {
        MPI_Comm g;
        MPI_Comm_create_group(parent, evens, 99, &g);
        check_comm(g, "create_group", n);
        MPI_Comm_free(&g);
      }
      MPI_Group_free(&evens);
      MPI_Group_free(&world);
      break;
    }
    case 4: {
      int dims[1] = {size}, periods[1] = {1}, remain[1] = {1};
      MPI_Cart_create(parent, 1, dims, periods, 0, &c);
      check_comm(c, "cart", size);
      MPI_Comm sub;
      MPI_Cart_sub(c, remain, &sub);
      check_comm(sub, "cart_sub", size);
      MPI_Comm_free(&sub);
      break;
    }
    case 5: {
      MPI_Comm half, inter, merged;
      int low = rank < size / 2;
      MPI_Comm_split(parent, low, rank, &half);
      MPI_Intercomm_create(half, 0, parent, low ? size / 2 : 0, 42, &inter);
      int remote;
      MPI_Comm_remote_size(inter, &remote);
      CHECK(remote == (low ? size - size / 2 : size / 2), "intercomm remote size %d", remote);
      MPI_Intercomm_merge(inter, !low, &merged);
      check_comm(merged, "merge", size);
      MPI_Comm_free(&merged);
      MPI_Comm_free(&inter);
      MPI_Comm_free(&half);
      MPI_Comm_dup(parent, &c);
      break;
    }
    default: {
      char name[64];
      snprintf(name, sizeof name, "serial_lifecycle_%d.tmp", step % kThreads);
      MPI_File fh; /* files return errors by default: check each call */
      int rc = MPI_File_open(parent, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                             MPI_INFO_NULL, &fh);
      CHECK(rc == MPI_SUCCESS, "File_open %d", rc);
      int value = rank + 1000 * step, back = -1;
      rc = MPI_File_write_at_all(fh, rank * (MPI_Offset)sizeof(int), &value, 1, MPI_INT, MPI_STATUS_IGNORE);
      CHECK(rc == MPI_SUCCESS, "File_write_at_all %d", rc);
      rc = MPI_File_sync(fh);
      CHECK(rc == MPI_SUCCESS, "File_sync %d", rc);
      rc = MPI_File_read_at_all(fh, rank * (MPI_Offset)sizeof(int), &back, 1, MPI_INT, MPI_STATUS_IGNORE);
      CHECK(rc == MPI_SUCCESS, "File_read_at_all %d", rc);
      CHECK(back == value, "file read %d, want %d", back, value);
      rc = MPI_File_close(&fh);
      CHECK(rc == MPI_SUCCESS, "File_close %d", rc);
      MPI_Comm_dup(parent, &c);
      break;
    }
  }
  if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
}

static void* worker(void* p) {
  ThreadComm* a = p;
  /* Opposite orders: thread 0 runs ahead on even ranks, thread 1 on odd ranks, so the
     threads' creations reach the MPI in opposite orders. */
  usleep(3000 * ((rank + a->index) % 2));
  for (int round = 0; round < kRounds; ++round) create_and_free(a->comm, round * kThreads + a->index);
  return NULL;
}

int main(int argc, char** argv) {
  test_init(&argc, &argv, "serial_comm_lifecycle");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size > 64) MPI_Abort(MPI_COMM_WORLD, 2);
  run_threads_with_own_comms(kThreads, worker);
  return test_finish();
}

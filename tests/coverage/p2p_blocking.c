/* Coverage: blocking point-to-point in every send mode (standard, buffered with
   MPI_Buffer_attach/detach, synchronous, ready), MPI_Sendrecv(_replace), wildcards, MPI_PROC_NULL,
   truncation, MPI_Get_count / MPI_Get_elements(_x) on derived datatypes. Rank 0 and rank 1 talk to
   each other; every received value is checked. */
// ranks: 2
#include "coverage.h"

enum { N = 8 };

static void fill(int* buf, int n, int base) {
  for (int i = 0; i < n; ++i) buf[i] = base + i;
}
static int same(const int* buf, int n, int base) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != base + i) return 0;
  return 1;
}
static int err_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "p2p_blocking");
  int peer = 1 - rank;
  MPI_Comm comm = MPI_COMM_WORLD;
  int buf[4 * N], count = -1, rc;
  MPI_Status st;

  /* Standard mode, exact envelope, a larger receive buffer than the message. */
  if (rank == 0) {
    fill(buf, N, 100);
    rc = MPI_Send(buf, N, MPI_INT, 1, 1, comm);
    SAY("send rc %d", rc);
  } else {
    memset(buf, 0, sizeof buf);
    rc = MPI_Recv(buf, 2 * N, MPI_INT, 0, 1, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("recv rc %d source %d tag %d count %d data ok %d", rc, st.MPI_SOURCE, st.MPI_TAG, count,
        same(buf, N, 100));
    CHECK(same(buf, N, 100) && buf[N] == 0);
  }

  /* Wildcards: MPI_ANY_SOURCE and MPI_ANY_TAG, MPI_STATUS_IGNORE. */
  if (rank == 0) {
    fill(buf, 3, 200);
    MPI_Send(buf, 3, MPI_INT, 1, 22, comm);
    fill(buf, 2, 300);
    MPI_Send(buf, 2, MPI_INT, 1, 23, comm);
  } else {
    memset(buf, 0, sizeof buf);
    rc = MPI_Recv(buf, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("any/any rc %d source %d tag %d count %d data ok %d", rc, st.MPI_SOURCE, st.MPI_TAG, count,
        same(buf, 3, 200));
    CHECK(same(buf, 3, 200));
    rc = MPI_Recv(buf, N, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    SAY("0/any with status ignore rc %d data ok %d", rc, same(buf, 2, 300));
    CHECK(same(buf, 2, 300));
  }

  /* Synchronous mode. */
  if (rank == 0) {
    fill(buf, N, 400);
    rc = MPI_Ssend(buf, N, MPI_INT, 1, 3, comm);
    SAY("ssend rc %d", rc);
  } else {
    memset(buf, 0, sizeof buf);
    rc = MPI_Recv(buf, N, MPI_INT, 0, 3, comm, &st);
    SAY("recv of ssend rc %d tag %d data ok %d", rc, st.MPI_TAG, same(buf, N, 400));
    CHECK(same(buf, N, 400));
  }

  /* Ready mode: rank 1 posts the receive, then tells rank 0, which only then sends. */
  if (rank == 0) {
    MPI_Recv(NULL, 0, MPI_INT, 1, 40, comm, MPI_STATUS_IGNORE);
    fill(buf, N, 500);
    rc = MPI_Rsend(buf, N, MPI_INT, 1, 4, comm);
    SAY("rsend rc %d", rc);
  } else {
    MPI_Request req;
    memset(buf, 0, sizeof buf);
    MPI_Irecv(buf, N, MPI_INT, 0, 4, comm, &req);
    MPI_Send(NULL, 0, MPI_INT, 0, 40, comm);
    rc = MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("recv of rsend rc %d count %d data ok %d", rc, count, same(buf, N, 500));
    CHECK(same(buf, N, 500));
  }

  /* Buffered mode: attach a buffer big enough for three messages, send, detach (which waits
     until the buffered messages are gone) and check the buffer returned. */
  if (rank == 0) {
    int one = 0;
    MPI_Pack_size(N, MPI_INT, comm, &one);
    int size = 3 * (one + MPI_BSEND_OVERHEAD);
    char* attached = malloc((size_t)size);
    rc = MPI_Buffer_attach(attached, size);
    SAY("buffer_attach rc %d", rc);
    for (int m = 0; m < 3; ++m) {
      fill(buf, N, 600 + 10 * m);
      rc = MPI_Bsend(buf, N, MPI_INT, 1, 5, comm);
      SAY("bsend %d rc %d", m, rc);
      fill(buf, N, -1); /* the message was copied: changing the buffer now must not matter */
    }
    rc = MPI_Bsend(buf, 0, MPI_INT, MPI_PROC_NULL, 5, comm);
    SAY("bsend to MPI_PROC_NULL rc %d", rc);
    void* detached = NULL;
    int detached_size = -1;
    rc = MPI_Buffer_detach(&detached, &detached_size);
    SAY("buffer_detach rc %d same address %d same size %d", rc, detached == (void*)attached,
        detached_size == size);
    CHECK(detached == (void*)attached && detached_size == size);
    free(attached);
    /* Attach again, one more message, detach again. */
    attached = malloc((size_t)size);
    MPI_Buffer_attach(attached, size);
    fill(buf, N, 690);
    MPI_Bsend(buf, N, MPI_INT, 1, 5, comm);
    rc = MPI_Buffer_detach(&detached, &detached_size);
    SAY("second detach rc %d same address %d", rc, detached == (void*)attached);
    free(attached);
    /* Detach with no buffer attached: MPICH succeeds with a null buffer of size 0; Open MPI 4.1
       returns -30 (an internal code, not an MPI error code) and leaves the arguments alone. */
    detached = &detached_size;
    detached_size = -1;
    rc = MPI_Buffer_detach(&detached, &detached_size);
    SAY("detach with nothing attached rc %d null %d size %d", rc, detached == NULL, detached_size);
  } else {
    for (int m = 0; m < 4; ++m) {
      int base = m < 3 ? 600 + 10 * m : 690;
      memset(buf, 0, sizeof buf);
      rc = MPI_Recv(buf, N, MPI_INT, 0, 5, comm, &st);
      SAY("recv of bsend %d rc %d data ok %d", m, rc, same(buf, N, base));
      CHECK(same(buf, N, base));
    }
  }

  /* MPI_Sendrecv: both ranks exchange at once; then with MPI_PROC_NULL on either side. */
  {
    int out[N], in[N];
    fill(out, N, 1000 * (rank + 1));
    memset(in, 0, sizeof in);
    rc = MPI_Sendrecv(out, N, MPI_INT, peer, 6, in, N, MPI_INT, peer, 6, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("sendrecv rc %d source %d tag %d count %d data ok %d", rc, st.MPI_SOURCE, st.MPI_TAG,
        count, same(in, N, 1000 * (peer + 1)));
    CHECK(same(in, N, 1000 * (peer + 1)));

    /* Rank 0 only sends, rank 1 only receives (the other side is MPI_PROC_NULL). */
    memset(in, 0, sizeof in);
    fill(out, N, 1500);
    rc = MPI_Sendrecv(out, N, MPI_INT, rank == 0 ? 1 : MPI_PROC_NULL, 7, in, N, MPI_INT,
                      rank == 1 ? 0 : MPI_PROC_NULL, 7, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("half sendrecv rc %d source %d tag %d count %d", rc, st.MPI_SOURCE, st.MPI_TAG, count);
    if (rank == 1) CHECK(same(in, N, 1500));

    /* Receive from MPI_ANY_SOURCE / MPI_ANY_TAG. */
    memset(in, 0, sizeof in);
    rc = MPI_Sendrecv(out, 2, MPI_INT, peer, 70 + rank, in, N, MPI_INT, MPI_ANY_SOURCE,
                      MPI_ANY_TAG, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("wildcard sendrecv rc %d source %d tag %d count %d", rc, st.MPI_SOURCE, st.MPI_TAG, count);
    CHECK(same(in, 2, 1500));
  }

  /* MPI_Sendrecv_replace: exchange in place, then with MPI_PROC_NULL on both sides (the buffer
     stays as it was). */
  {
    int io[N];
    fill(io, N, 2000 + 100 * rank);
    rc = MPI_Sendrecv_replace(io, N, MPI_INT, peer, 8, peer, 8, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("sendrecv_replace rc %d source %d tag %d count %d data ok %d", rc, st.MPI_SOURCE,
        st.MPI_TAG, count, same(io, N, 2000 + 100 * peer));
    CHECK(same(io, N, 2000 + 100 * peer));
    rc = MPI_Sendrecv_replace(io, N, MPI_INT, MPI_PROC_NULL, 9, MPI_PROC_NULL, 9, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("proc_null sendrecv_replace rc %d source %d tag %d count %d unchanged %d", rc,
        st.MPI_SOURCE, st.MPI_TAG == MPI_ANY_TAG, count, same(io, N, 2000 + 100 * peer));
    /* Different send and receive tags, wildcard source. */
    fill(io, N, 2500 + rank);
    rc = MPI_Sendrecv_replace(io, 3, MPI_INT, peer, 80 + rank, MPI_ANY_SOURCE, 80 + peer, comm,
                              &st);
    SAY("tagged sendrecv_replace rc %d source %d tag %d data ok %d", rc, st.MPI_SOURCE, st.MPI_TAG,
        io[0] == 2500 + peer && io[2] == 2502 + peer && io[3] == 2503 + rank);
  }

  /* MPI_PROC_NULL as destination and source of every blocking call. */
  {
    rc = MPI_Send(buf, N, MPI_INT, MPI_PROC_NULL, 1, comm);
    int rc2 = MPI_Ssend(buf, N, MPI_INT, MPI_PROC_NULL, 1, comm);
    int rc3 = MPI_Rsend(buf, N, MPI_INT, MPI_PROC_NULL, 1, comm);
    SAY("send/ssend/rsend to MPI_PROC_NULL rc %d %d %d", rc, rc2, rc3);
    buf[0] = 77;
    rc = MPI_Recv(buf, N, MPI_INT, MPI_PROC_NULL, 1, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("recv from MPI_PROC_NULL rc %d source is proc_null %d tag is any_tag %d count %d "
        "untouched %d",
        rc, st.MPI_SOURCE == MPI_PROC_NULL, st.MPI_TAG == MPI_ANY_TAG, count, buf[0] == 77);
  }

  /* Derived datatypes: MPI_Get_count is MPI_UNDEFINED when a partial element arrived,
     MPI_Get_elements / MPI_Get_elements_x count the basic elements. A vector send. */
  {
    MPI_Datatype pair, vec;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec); /* elements 0, 2, 4 */
    MPI_Type_commit(&vec);
    if (rank == 0) {
      fill(buf, 5, 3000);
      MPI_Send(buf, 5, MPI_INT, 1, 10, comm);
      fill(buf, 6, 3100);
      MPI_Send(buf, 1, vec, 1, 11, comm);
    } else {
      MPI_Count elements_x = -1;
      int elements = -1;
      memset(buf, 0, sizeof buf);
      rc = MPI_Recv(buf, 3, pair, 0, 10, comm, &st);
      MPI_Get_count(&st, pair, &count);
      MPI_Get_elements(&st, pair, &elements);
      MPI_Get_elements_x(&st, pair, &elements_x);
      SAY("5 ints into pairs: rc %d count undefined %d elements %d elements_x %lld data ok %d", rc,
          count == MPI_UNDEFINED, elements, (long long)elements_x, same(buf, 5, 3000));
      CHECK(same(buf, 5, 3000) && elements == 5 && elements_x == 5);
      MPI_Get_count(&st, MPI_INT, &count);
      MPI_Get_elements_x(&st, MPI_INT, &elements_x);
      SAY("same status as ints: count %d elements_x %lld", count, (long long)elements_x);
      MPI_Get_count(&st, MPI_DOUBLE, &count); /* 20 bytes are not a whole number of doubles */
      SAY("same status as doubles: count undefined %d", count == MPI_UNDEFINED);

      memset(buf, 0, sizeof buf);
      rc = MPI_Recv(buf, 3, MPI_INT, 0, 11, comm, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      MPI_Get_elements(&st, vec, &elements);
      int count_vec = -1;
      MPI_Get_count(&st, vec, &count_vec);
      SAY("vector recv rc %d count %d count as vec %d elements as vec %d data %d %d %d", rc,
          count, count_vec, elements, buf[0], buf[1], buf[2]);
      CHECK(buf[0] == 3100 && buf[1] == 3102 && buf[2] == 3104);
    }
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);
  }

  /* Zero-byte messages and truncation (MPI_ERR_TRUNCATE). */
  if (rank == 0) {
    MPI_Send(NULL, 0, MPI_INT, 1, 12, comm);
    fill(buf, 10, 4000);
    MPI_Send(buf, 10, MPI_INT, 1, 13, comm);
    MPI_Send(buf, 2, MPI_INT, 1, 14, comm);
  } else {
    rc = MPI_Recv(buf, N, MPI_INT, 0, 12, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    SAY("zero-byte recv rc %d count %d tag %d", rc, count, st.MPI_TAG);
    rc = MPI_Recv(buf, 4, MPI_INT, 0, 13, comm, &st);
    SAY("truncated recv error class %d (MPI_ERR_TRUNCATE %d)", err_class(rc),
        err_class(rc) == MPI_ERR_TRUNCATE);
    /* The next message is received normally. */
    memset(buf, 0, sizeof buf);
    rc = MPI_Recv(buf, N, MPI_INT, 0, 14, comm, &st);
    SAY("recv after truncation rc %d data ok %d", rc, same(buf, 2, 4000));
    CHECK(same(buf, 2, 4000));
  }

  /* Errors: a negative tag and a rank out of range (error classes, nothing sent). */
  rc = MPI_Send(buf, 1, MPI_INT, peer, -5, comm);
  SAY("send with tag -5 error class is MPI_ERR_TAG %d", err_class(rc) == MPI_ERR_TAG);
  rc = MPI_Send(buf, 1, MPI_INT, 7, 1, comm);
  SAY("send to rank 7 error class is MPI_ERR_RANK %d", err_class(rc) == MPI_ERR_RANK);
  return cov_finish();
}

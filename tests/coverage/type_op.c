/* Coverage: user-defined reduction operations (MPI_Op_create, MPI_Op_commutative, MPI_Op_free),
   MPI_Reduce_local, and user operations on derived datatypes in MPI_Reduce and MPI_Allreduce,
   including a non-commutative one whose result shows the order of the operands, an operation
   that calls the MPI from inside itself, an operation freed while a nonblocking reduction uses
   it, and two threads reducing locally at once. */
// ranks: 4
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "coverage.h"

/* element-wise in + inout + 1 over ints (associative and commutative: the sum of n operands plus
   n - 1), for MPI_INT or a vector of MPI_INT with blocks of 1, which it decodes with the MPI */
static void add_plus1(void* in, void* inout, int* len, MPI_Datatype* dt) {
  int ni, na, nd, combiner, count = 1, stride = 1;
  MPI_Aint lb, extent = sizeof(int);
  MPI_Type_get_envelope(*dt, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_VECTOR) {
    int ints[3];
    MPI_Aint unused;
    MPI_Datatype old;
    MPI_Type_get_contents(*dt, 3, 0, 1, ints, &unused, &old); /* old is MPI_INT: not freed */
    count = ints[0], stride = ints[2];
    MPI_Type_get_extent(*dt, &lb, &extent);
  }
  for (int k = 0; k < *len; ++k) {
    int* a = (int*)((char*)in + k * extent);
    int* b = (int*)((char*)inout + k * extent);
    for (int i = 0; i < count; ++i) b[i * stride] += a[i * stride] + 1;
  }
}

/* 2x2 integer matrix product, inout = in * inout (non-commutative); the datatype is a
   contiguous type of 4 ints, so each element is one matrix. Asks the MPI for the type's size
   from inside the operation. */
static int inner_size = -1;
static void matmul(void* in, void* inout, int* len, MPI_Datatype* dt) {
  int size = -1;
  MPI_Type_size(*dt, &size);
  inner_size = size;
  for (int k = 0; k < *len; ++k) {
    long* a = (long*)in + 4 * k;
    long* b = (long*)inout + 4 * k;
    long c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                 a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

/* on a struct {double value; int index}: keeps the larger value, the lower index on ties */
struct vi {
  double v;
  int i;
};
static void maxloc_struct(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  struct vi* a = in;
  struct vi* b = inout;
  for (int k = 0; k < *len; ++k)
    if (a[k].v > b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i)) b[k] = a[k];
}

struct job {
  MPI_Op op;
  int base, result[8], rc;
};
static void* local_thread(void* arg) {
  struct job* j = arg;
  int acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = j->base + i;
  for (int round = 0; round < 300; ++round) {
    int in[8];
    for (int i = 0; i < 8; ++i) in[i] = round % 5 + i;
    if (MPI_Reduce_local(in, acc, 8, MPI_INT, j->op) != MPI_SUCCESS) ++j->rc;
  }
  memcpy(j->result, acc, sizeof acc);
  return NULL;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "type_op");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Op plus1, mm, ml;
  int c1 = -1, c2 = -1, c3 = -1, c4 = -1;
  SAY("op_create rc %d %d %d", MPI_Op_create(add_plus1, 1, &plus1), MPI_Op_create(matmul, 0, &mm),
      MPI_Op_create(maxloc_struct, 1, &ml));
  MPI_Op_commutative(plus1, &c1);
  MPI_Op_commutative(mm, &c2);
  MPI_Op_commutative(MPI_SUM, &c3);
  MPI_Op_commutative(MPI_REPLACE, &c4);
  SAY("commutative: user %d, user non-commutative %d, MPI_SUM %d, MPI_REPLACE %d", c1, c2, c3, c4);

  /* Reduce_local with a user op and with a predefined one */
  {
    int in[4] = {1, 2, 3, 4}, io[4] = {10, 20, 30, 40};
    MPI_Reduce_local(in, io, 4, MPI_INT, plus1);
    SAY("reduce_local plus1: %d %d %d %d", io[0], io[1], io[2], io[3]);
    MPI_Reduce_local(in, io, 4, MPI_INT, MPI_PROD);
    SAY("reduce_local MPI_PROD: %d %d %d %d", io[0], io[1], io[2], io[3]);
    long a[4] = {1, 1, 0, 1}, b[4] = {1, 0, 1, 1};
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_LONG, &mat);
    MPI_Type_commit(&mat);
    MPI_Reduce_local(a, b, 1, mat, mm);
    SAY("reduce_local matmul: %ld %ld %ld %ld (type size seen inside %d)", b[0], b[1], b[2], b[3], inner_size);
    MPI_Type_free(&mat);
  }

  /* Allreduce with the commutative user op over a vector type */
  {
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    int send[6], recv[6];
    for (int i = 0; i < 6; ++i) send[i] = rank * 10 + i, recv[i] = -1;
    int rc = MPI_Allreduce(send, recv, 1, v, plus1, MPI_COMM_WORLD);
    SAY("allreduce plus1 on a vector: rc %d, %d %d %d %d %d %d", rc, recv[0], recv[1], recv[2], recv[3], recv[4], recv[5]);
    MPI_Type_free(&v);
  }

  /* Reduce with the non-commutative matrix product: the result is A0*A1*A2*A3 in rank order */
  {
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_LONG, &mat);
    MPI_Type_commit(&mat);
    long m[8] = {1, rank + 1, 0, 1, 2, 0, rank, 1}, r[8] = {0};
    int rc = MPI_Reduce(m, r, 2, mat, mm, 0, MPI_COMM_WORLD);
    if (rank == 0)
      SAY("reduce matmul: rc %d, %ld %ld %ld %ld | %ld %ld %ld %ld", rc, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
    else
      SAY("reduce matmul: rc %d", rc);
    long s[4] = {1, 1, 0, 1}, t[4] = {0};
    rc = MPI_Scan(s, t, 1, mat, mm, MPI_COMM_WORLD);
    SAY("scan matmul: rc %d, %ld %ld %ld %ld", rc, t[0], t[1], t[2], t[3]);
    MPI_Type_free(&mat);
  }

  /* a user op on a struct type */
  {
    int bl[2] = {1, 1};
    MPI_Aint di[2] = {offsetof(struct vi, v), offsetof(struct vi, i)};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT}, st, rs;
    MPI_Type_create_struct(2, bl, di, ty, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct vi), &rs);
    MPI_Type_free(&st);
    MPI_Type_commit(&rs);
    struct vi in[3] = {{(double)(rank % 2), rank}, {(double)-rank, rank}, {3.5, 10 - rank}}, out[3];
    memset(out, 0, sizeof out);
    int rc = MPI_Allreduce(in, out, 3, rs, ml, MPI_COMM_WORLD);
    SAY("allreduce maxloc struct: rc %d, (%g,%d) (%g,%d) (%g,%d)", rc, out[0].v, out[0].i, out[1].v, out[1].i, out[2].v,
        out[2].i);
    MPI_Type_free(&rs);
  }

  /* two threads reducing locally at once, each with its own op */
  {
    MPI_Op mine;
    MPI_Op_create(add_plus1, 0, &mine);
    struct job j[2] = {{plus1, 0, {0}, 0}, {mine, 1000, {0}, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) pthread_create(&th[i], NULL, local_thread, &j[i]);
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    SAY("threads: rc %d %d, results %d %d / %d %d", j[0].rc, j[1].rc, j[0].result[0], j[0].result[7], j[1].result[0],
        j[1].result[7]);
    SAY("op_free of the threads' op rc %d", MPI_Op_free(&mine));
    CHECK(mine == MPI_OP_NULL);
  }

  /* an op freed while a nonblocking reduction still uses it */
  {
    MPI_Op pending;
    MPI_Op_create(add_plus1, 1, &pending);
    int a[3] = {rank, 2 * rank, 3}, b[3] = {0, 0, 0};
    MPI_Request q;
    MPI_Iallreduce(a, b, 3, MPI_INT, pending, MPI_COMM_WORLD, &q);
    int frc = MPI_Op_free(&pending);
    int wrc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    SAY("op freed before the wait: free rc %d wait rc %d, %d %d %d", frc, wrc, b[0], b[1], b[2]);
  }

#ifdef OPEN_MPI
  {
    MPI_Fint f = MPI_Op_c2f(plus1);
    SAY("user op Op_c2f/f2c round trip %d", MPI_Op_f2c(f) == plus1);
  }
#endif

  int r1 = MPI_Op_free(&plus1), r2 = MPI_Op_free(&mm), r3 = MPI_Op_free(&ml);
  SAY("op_free rc %d %d %d, null after %d", r1, r2, r3, plus1 == MPI_OP_NULL && mm == MPI_OP_NULL && ml == MPI_OP_NULL);
  {
    MPI_Op sum = MPI_SUM;
    int rc = MPI_Op_free(&sum), cls = -1;
    MPI_Error_class(rc, &cls);
    SAY("op_free of MPI_SUM: class is MPI_ERR_OP %d or MPI_ERR_ARG %d", cls == MPI_ERR_OP, cls == MPI_ERR_ARG);
  }
  (void)size;
  return cov_finish();
}

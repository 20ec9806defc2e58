/* Coverage: datatype constructors (MPI-2/3 names and the MPI-1 names both MPIs still export),
   commit, free, names, sizes and extents. Every type is sent from rank 0 to rank 1 and back, and
   the bytes received are compared with what the layout says. */
// ranks: 2
/* Open MPI 4.1 hides the MPI-1 prototypes (MPI_Type_hvector, ...) it still exports unless asked
   (MPICH ignores this). */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#include <stddef.h>
#include <string.h>

#include "coverage.h"

#define BUF 4096
static int rank;
static unsigned char sendbuf[BUF], recvbuf[BUF];

static unsigned char pattern(int i) { return (unsigned char)(i % 200 + 1); } /* never 0xEE */

/* Rank 0 sends COUNT elements of T from a byte pattern; rank 1 receives them with T into a buffer
   of 0xEE bytes and records how many bytes the receive wrote, whether every written byte is the
   sent byte at the same offset, and where the first and last written bytes lie. Then rank 1 sends
   them back with T and rank 0 checks it gets the same layout. */
static void xfer(const char* what, MPI_Datatype t, int count) {
  int size = 0;
  MPI_Type_size(t, &size);
  for (int dir = 0; dir < 2; ++dir) {
    int src = dir == 0 ? 0 : 1, dst = 1 - src;
    for (int i = 0; i < BUF; ++i) sendbuf[i] = pattern(i), recvbuf[i] = 0xEE;
    if (rank == src) {
      int rc = MPI_Send(sendbuf, count, t, dst, 7, MPI_COMM_WORLD);
      CHECK(rc == MPI_SUCCESS);
    } else {
      MPI_Status st;
      int rc = MPI_Recv(recvbuf, count, t, src, 7, MPI_COMM_WORLD, &st);
      int written = 0, same = 1, first = -1, last = -1, elements = -1, got = -1;
      for (int i = 0; i < BUF; ++i)
        if (recvbuf[i] != 0xEE) {
          ++written;
          if (recvbuf[i] != pattern(i)) same = 0;
          if (first < 0) first = i;
          last = i;
        }
      MPI_Get_count(&st, t, &got);
      MPI_Get_elements(&st, t, &elements);
      SAY("%s dir %d: rc %d count %d elements %d bytes written %d (size*count %d) same %d first %d last %d",
          what, dir, rc, got, elements, written, size * count, same, first, last);
      CHECK(written == size * count && same);
    }
  }
}

/* The received ints of a type built on MPI_INT, as a list: shows the layout directly. Rank 0 sends
   COUNT of T from ints 0,1,2,...; rank 1 receives them as contiguous ints. */
static void ints(const char* what, MPI_Datatype t, int count) {
  int size = 0;
  MPI_Type_size(t, &size);
  int n = size * count / (int)sizeof(int);
  int src[256], dst[256];
  for (int i = 0; i < 256; ++i) src[i] = i, dst[i] = -1;
  if (rank == 0) {
    CHECK(MPI_Send(src, count, t, 1, 8, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Recv(dst, n, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    char line[900];
    int len = snprintf(line, sizeof line, "%s ints:", what);
    for (int i = 0; i < n && len < (int)sizeof line - 8; ++i) len += snprintf(line + len, sizeof line - len, " %d", dst[i]);
    SAY("%s", line);
  }
}

static void extents(const char* what, MPI_Datatype t) {
  MPI_Aint lb = -1, extent = -1, tlb = -1, textent = -1;
  int size = -1;
  MPI_Count size_x = -1, lb_x = -1, extent_x = -1, tlb_x = -1, textent_x = -1;
  MPI_Type_size(t, &size);
  MPI_Type_get_extent(t, &lb, &extent);
  MPI_Type_get_true_extent(t, &tlb, &textent);
  MPI_Type_size_x(t, &size_x);
  MPI_Type_get_extent_x(t, &lb_x, &extent_x);
  MPI_Type_get_true_extent_x(t, &tlb_x, &textent_x);
  SAY("%s: size %d lb %ld extent %ld true_lb %ld true_extent %ld", what, size, (long)lb, (long)extent, (long)tlb,
      (long)textent);
  CHECK(size_x == size && lb_x == lb && extent_x == extent && tlb_x == tlb && textent_x == textent);
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "type_constructors");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* MPI-4 raises handle-less errors there */
  MPI_Datatype t;

  /* contiguous */
  MPI_Type_contiguous(5, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("contiguous", t);
  ints("contiguous", t, 2);
  xfer("contiguous", t, 3);
  MPI_Type_free(&t);
  CHECK(t == MPI_DATATYPE_NULL);

  /* vector, hvector */
  MPI_Type_vector(4, 2, 5, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("vector", t);
  ints("vector", t, 2);
  xfer("vector", t, 2);
  MPI_Type_free(&t);
  MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("hvector", t);
  ints("hvector", t, 2);
  xfer("hvector", t, 3);
  MPI_Type_free(&t);

  /* indexed, hindexed, indexed_block, hindexed_block */
  int blens[3] = {2, 1, 3}, displs[3] = {0, 4, 9}, bdispls[3] = {1, 5, 7};
  MPI_Aint hdispls[3] = {0, 24, 44}, hbdispls[3] = {4, 20, 36};
  MPI_Type_indexed(3, blens, displs, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("indexed", t);
  ints("indexed", t, 2);
  xfer("indexed", t, 2);
  MPI_Type_free(&t);
  MPI_Type_create_hindexed(3, blens, hdispls, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("hindexed", t);
  ints("hindexed", t, 1);
  xfer("hindexed", t, 2);
  MPI_Type_free(&t);
  MPI_Type_create_indexed_block(3, 2, bdispls, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("indexed_block", t);
  ints("indexed_block", t, 2);
  xfer("indexed_block", t, 2);
  MPI_Type_free(&t);
  MPI_Type_create_hindexed_block(3, 2, hbdispls, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("hindexed_block", t);
  ints("hindexed_block", t, 2);
  xfer("hindexed_block", t, 2);
  MPI_Type_free(&t);

  /* struct of a C struct, with its natural extent */
  struct rec {
    char c;
    double d;
    int i[3];
    short s;
  };
  int sblens[4] = {1, 1, 3, 1};
  MPI_Aint sdispls[4] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i),
                         offsetof(struct rec, s)};
  MPI_Datatype stypes[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
  MPI_Datatype st, rs;
  MPI_Type_create_struct(4, sblens, sdispls, stypes, &st);
  extents("struct", st);
  MPI_Type_create_resized(st, 0, sizeof(struct rec), &rs);
  MPI_Type_commit(&rs);
  extents("resized struct", rs);
  xfer("resized struct", rs, 4);
  {
    struct rec a[3], b[3];
    memset(b, 0, sizeof b);
    for (int k = 0; k < 3; ++k) a[k].c = (char)('a' + k), a[k].d = 1.5 * k, a[k].i[0] = k, a[k].i[1] = 10 * k, a[k].i[2] = 100 * k, a[k].s = (short)-k;
    if (rank == 0) CHECK(MPI_Send(a, 3, rs, 1, 9, MPI_COMM_WORLD) == MPI_SUCCESS);
    else {
      CHECK(MPI_Recv(b, 3, rs, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      for (int k = 0; k < 3; ++k) SAY("struct rec %d: %c %.1f %d %d %d %d", k, b[k].c, b[k].d, b[k].i[0], b[k].i[1], b[k].i[2], b[k].s);
    }
  }
  MPI_Type_free(&rs);

  /* dup of a derived type and of a predefined one; the struct itself committed after the dup */
  MPI_Datatype d1, d2;
  MPI_Type_dup(st, &d1);
  MPI_Type_dup(MPI_INT, &d2);
  MPI_Type_commit(&st);
  MPI_Type_commit(&d1);
  MPI_Type_commit(&d2);
  extents("dup of struct", d1);
  extents("dup of MPI_INT", d2);
  xfer("dup of struct", d1, 2);
  ints("dup of MPI_INT", d2, 3);
  MPI_Type_free(&st);
  MPI_Type_free(&d1);
  MPI_Type_free(&d2);

  /* subarray: 3x4 of a 6x8 int array from (1,2), C and Fortran order */
  int sizes[2] = {6, 8}, subsizes[2] = {3, 4}, starts[2] = {1, 2};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("subarray C", t);
  ints("subarray C", t, 1);
  xfer("subarray C", t, 2);
  MPI_Type_free(&t);
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
  MPI_Type_commit(&t);
  extents("subarray Fortran", t);
  ints("subarray Fortran", t, 1);
  MPI_Type_free(&t);

  /* darray: an 8x6 int array over a 2x2 process grid, block x cyclic(2), for each of the 4
     grid positions (darray's size and rank are parameters, not the communicator's) */
  for (int r = 0; r < 4; ++r) {
    int gs[2] = {8, 6}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 2};
    MPI_Type_create_darray(4, r, 2, gs, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    char what[32];
    snprintf(what, sizeof what, "darray rank %d", r);
    extents(what, t);
    ints(what, t, 1);
    MPI_Type_free(&t);
  }
  {
    int gs[1] = {10}, distribs[1] = {MPI_DISTRIBUTE_CYCLIC}, dargs[1] = {1}, psizes[1] = {3};
    MPI_Type_create_darray(3, 1, 1, gs, distribs, dargs, psizes, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    extents("darray 1d cyclic", t);
    xfer("darray 1d cyclic", t, 1);
    MPI_Type_free(&t);
  }

  /* a type built from derived types: vector of resized contiguous */
  {
    MPI_Datatype c, r, v;
    MPI_Type_contiguous(2, MPI_INT, &c);
    MPI_Type_create_resized(c, 0, 3 * sizeof(int), &r);
    MPI_Type_free(&c);
    MPI_Type_vector(3, 2, 3, r, &v);
    MPI_Type_free(&r); /* v keeps what it needs */
    MPI_Type_commit(&v);
    extents("vector of resized contiguous", v);
    ints("vector of resized contiguous", v, 1);
    xfer("vector of resized contiguous", v, 2);
    MPI_Type_free(&v);
  }

  /* a type freed while a nonblocking send still uses it */
  {
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 3, MPI_INT, &v);
    MPI_Type_commit(&v);
    int src[9], dst[3] = {-1, -1, -1};
    for (int i = 0; i < 9; ++i) src[i] = 10 * rank + i;
    MPI_Request r[2];
    MPI_Irecv(dst, 3, MPI_INT, 1 - rank, 11, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(src, 1, v, 1 - rank, 11, MPI_COMM_WORLD, &r[1]);
    int frc = MPI_Type_free(&v);
    int wrc = MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    SAY("type freed before the wait: free rc %d wait rc %d, received %d %d %d", frc, wrc, dst[0], dst[1], dst[2]);
  }

  /* names */
  {
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Type_get_name(MPI_INT, name, &len);
    SAY("name of MPI_INT '%s' len %d", name, len);
    MPI_Type_get_name(MPI_DOUBLE_COMPLEX, name, &len);
    SAY("name of MPI_DOUBLE_COMPLEX '%s' len %d", name, len);
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_get_name(t, name, &len);
    SAY("name of a new type '%s' len %d", name, len);
    MPI_Type_set_name(t, "pair of ints");
    MPI_Type_get_name(t, name, &len);
    SAY("after set_name '%s' len %d", name, len);
    MPI_Type_set_name(t, "renamed");
    MPI_Type_get_name(t, name, &len);
    SAY("after second set_name '%s' len %d", name, len);
    MPI_Datatype u;
    MPI_Type_dup(t, &u);
    MPI_Type_get_name(u, name, &len);
    SAY("name of its dup '%s' len %d", name, len);
    MPI_Type_free(&u);
    MPI_Type_free(&t);
  }

  /* MPI-1 names removed in MPI-3 but exported by both MPIs */
  {
    MPI_Aint a0 = 0, a1 = 0;
    int arr[10];
    MPI_Address(&arr[0], &a0);
    MPI_Address(&arr[7], &a1);
    SAY("MPI_Address difference %ld", (long)(a1 - a0));
    MPI_Type_hvector(3, 1, 12, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Aint ext = -1, lb = -1, ub = -1;
    MPI_Type_extent(t, &ext);
    MPI_Type_lb(t, &lb);
    MPI_Type_ub(t, &ub);
    SAY("Type_hvector: extent %ld lb %ld ub %ld", (long)ext, (long)lb, (long)ub);
    ints("Type_hvector", t, 2);
    MPI_Type_free(&t);
    int hb[2] = {2, 1};
    MPI_Aint hd[2] = {4, 16};
    MPI_Type_hindexed(2, hb, hd, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_extent(t, &ext);
    MPI_Type_lb(t, &lb);
    MPI_Type_ub(t, &ub);
    SAY("Type_hindexed: extent %ld lb %ld ub %ld", (long)ext, (long)lb, (long)ub);
    ints("Type_hindexed", t, 2);
    MPI_Type_free(&t);
    int sb[2] = {1, 2};
    MPI_Aint sd[2] = {0, 8};
    MPI_Datatype sty[2] = {MPI_INT, MPI_INT};
    MPI_Type_struct(2, sb, sd, sty, &t);
    MPI_Type_commit(&t);
    MPI_Type_extent(t, &ext);
    MPI_Type_lb(t, &lb);
    MPI_Type_ub(t, &ub);
    SAY("Type_struct: extent %ld lb %ld ub %ld", (long)ext, (long)lb, (long)ub);
    ints("Type_struct", t, 3);
    MPI_Type_free(&t);
  }

  /* predefined types' sizes and extents */
  extents("MPI_INT", MPI_INT);
  extents("MPI_DOUBLE", MPI_DOUBLE);
  extents("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE);
  extents("MPI_SHORT_INT", MPI_SHORT_INT);
  extents("MPI_2INT", MPI_2INT);

  /* error classes the MPI gives for invalid arguments: committing and freeing a null type */
  {
    MPI_Datatype n = MPI_DATATYPE_NULL;
    int rc = MPI_Type_commit(&n), cls = -1;
    MPI_Error_class(rc, &cls);
    SAY("commit of MPI_DATATYPE_NULL: class is MPI_ERR_TYPE %d", cls == MPI_ERR_TYPE);
    n = MPI_DATATYPE_NULL;
    rc = MPI_Type_free(&n);
    MPI_Error_class(rc, &cls);
    SAY("free of MPI_DATATYPE_NULL: class is MPI_ERR_TYPE %d", cls == MPI_ERR_TYPE);
  }
  return cov_finish();
}

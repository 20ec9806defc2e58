/* Coverage: MPI_Pack, MPI_Unpack, MPI_Pack_size, the external32 forms (MPI_Pack_external,
   MPI_Unpack_external, MPI_Pack_external_size), MPI_Get_address with MPI_Aint_add/MPI_Aint_diff
   (functions in MPICH, macros in Open MPI), absolute addresses sent from MPI_BOTTOM, and packed
   messages sent between ranks. */
// ranks: 2
#include <stddef.h>
#include <string.h>

#include "coverage.h"

static void hex(const char* what, const unsigned char* p, int n) {
  char line[900];
  int len = snprintf(line, sizeof line, "%s (%d bytes):", what, n);
  for (int i = 0; i < n && len < (int)sizeof line - 4; ++i) len += snprintf(line + len, sizeof line - len, " %02x", p[i]);
  SAY("%s", line);
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "type_pack");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int peer = 1 - rank;

  /* a vector of ints and a struct of a double and two shorts */
  MPI_Datatype vec, st;
  MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  struct pair {
    double d;
    short s[2];
  };
  int bl[2] = {1, 2};
  MPI_Aint di[2] = {offsetof(struct pair, d), offsetof(struct pair, s)};
  MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_SHORT};
  MPI_Type_create_struct(2, bl, di, ty, &st);
  MPI_Type_commit(&st);

  int sz_int = -1, sz_vec = -1, sz_st = -1;
  MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &sz_int);
  MPI_Pack_size(2, vec, MPI_COMM_WORLD, &sz_vec);
  MPI_Pack_size(3, st, MPI_COMM_WORLD, &sz_st);
  SAY("pack_size: int %d, 2 vectors %d, 3 structs %d", sz_int, sz_vec, sz_st);
  CHECK(sz_int >= 4 && sz_vec >= 48 && sz_st >= 36);

  /* rank 0 packs a count, two vectors and three structs into one message; rank 1 unpacks them */
  int total = sz_int + sz_vec + sz_st;
  char* buf = malloc((size_t)total);
  int data[32];
  for (int i = 0; i < 32; ++i) data[i] = 100 + i;
  struct pair pairs[3] = {{1.5, {1, 2}}, {-2.25, {3, 4}}, {1e300, {-5, 6}}};
  if (rank == 0) {
    int pos = 0, n = 7;
    MPI_Pack(&n, 1, MPI_INT, buf, total, &pos, MPI_COMM_WORLD);
    int after_int = pos;
    MPI_Pack(data, 2, vec, buf, total, &pos, MPI_COMM_WORLD);
    int after_vec = pos;
    MPI_Pack(pairs, 3, st, buf, total, &pos, MPI_COMM_WORLD);
    SAY("pack positions %d %d %d", after_int, after_vec, pos);
    CHECK(MPI_Send(buf, pos, MPI_PACKED, 1, 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else {
    MPI_Status st_;
    CHECK(MPI_Recv(buf, total, MPI_PACKED, 0, 1, MPI_COMM_WORLD, &st_) == MPI_SUCCESS);
    int got = -1, pos = 0, n = -1;
    MPI_Get_count(&st_, MPI_PACKED, &got);
    int out[32];
    for (int i = 0; i < 32; ++i) out[i] = -1;
    struct pair in[3];
    memset(in, 0, sizeof in);
    MPI_Unpack(buf, got, &pos, &n, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(buf, got, &pos, out, 2, vec, MPI_COMM_WORLD);
    MPI_Unpack(buf, got, &pos, in, 3, st, MPI_COMM_WORLD);
    SAY("unpacked %d of %d bytes: n %d", pos, got, n);
    char line[400];
    int len = snprintf(line, sizeof line, "unpacked vectors:");
    for (int i = 0; i < 24; ++i) len += snprintf(line + len, sizeof line - len, " %d", out[i]);
    SAY("%s", line);
    for (int k = 0; k < 3; ++k) SAY("unpacked struct %d: %g %d %d", k, in[k].d, in[k].s[0], in[k].s[1]);
  }

  /* a vector sent as such and received as MPI_PACKED, unpacked as ints (type signature matches) */
  if (rank == 1) {
    CHECK(MPI_Send(data, 1, vec, 0, 2, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else {
    char pbuf[256];
    MPI_Status st_;
    CHECK(MPI_Recv(pbuf, (int)sizeof pbuf, MPI_PACKED, 1, 2, MPI_COMM_WORLD, &st_) == MPI_SUCCESS);
    int got = -1, pos = 0, ints[6] = {0};
    MPI_Get_count(&st_, MPI_PACKED, &got);
    MPI_Unpack(pbuf, got, &pos, ints, 6, MPI_INT, MPI_COMM_WORLD);
    SAY("vector received packed: %d bytes, ints %d %d %d %d %d %d", got, ints[0], ints[1], ints[2], ints[3], ints[4], ints[5]);
  }

  /* external32: fixed big-endian representation, the same bytes on every MPI. MPICH 4.0.2 cannot
     do it for a struct of a double and shorts (MPI_Pack_external_size, MPI_Pack_external and
     MPI_Unpack_external die of SIGILL natively), so the struct is packed on Open MPI only. */
  {
    MPI_Aint esz_int = -1, esz_vec = -1, esz_dbl = -1;
    MPI_Pack_external_size("external32", 1, MPI_INT, &esz_int);
    MPI_Pack_external_size("external32", 2, vec, &esz_vec);
    MPI_Pack_external_size("external32", 2, MPI_DOUBLE, &esz_dbl);
    SAY("pack_external_size: int %ld, 2 vectors %ld, 2 doubles %ld", (long)esz_int, (long)esz_vec, (long)esz_dbl);
#ifdef OPEN_MPI
    MPI_Aint esz_st = -1;
    MPI_Pack_external_size("external32", 3, st, &esz_st);
    SAY("pack_external_size: 3 structs %ld", (long)esz_st);
#endif
    unsigned char ext[256];
    memset(ext, 0, sizeof ext);
    MPI_Aint pos = 0;
    int vals[3] = {1, -2, 0x01020304};
    double dv[2] = {1.0, -0.5};
    MPI_Pack_external("external32", vals, 3, MPI_INT, ext, sizeof ext, &pos);
    MPI_Pack_external("external32", dv, 2, MPI_DOUBLE, ext, sizeof ext, &pos);
    short sv = -3;
    MPI_Pack_external("external32", &sv, 1, MPI_SHORT, ext, sizeof ext, &pos);
    hex("external32 of 1 -2 0x01020304 1.0 -0.5 (short)-3", ext, (int)pos);
    MPI_Aint p2 = pos;
#ifdef OPEN_MPI
    MPI_Pack_external("external32", pairs, 3, st, ext, sizeof ext, &p2);
    SAY("external32 structs end at %ld", (long)p2);
#endif
    /* send the external32 bytes to the other rank, which unpacks them */
    unsigned char rext[256];
    MPI_Sendrecv(ext, (int)p2, MPI_BYTE, peer, 3, rext, (int)sizeof rext, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int rv[3] = {0};
    double rd[2] = {0};
    short rs = 0;
    struct pair rp[3];
    memset(rp, 0, sizeof rp);
    MPI_Aint up = 0;
    MPI_Unpack_external("external32", rext, p2, &up, rv, 3, MPI_INT);
    MPI_Unpack_external("external32", rext, p2, &up, rd, 2, MPI_DOUBLE);
    MPI_Unpack_external("external32", rext, p2, &up, &rs, 1, MPI_SHORT);
#ifdef OPEN_MPI
    MPI_Unpack_external("external32", rext, p2, &up, rp, 3, st);
    for (int k = 0; k < 3; ++k) SAY("unpack_external struct %d: %g %d %d", k, rp[k].d, rp[k].s[0], rp[k].s[1]);
#endif
    SAY("unpack_external: %d %d %#x %g %g %d, end %ld", rv[0], rv[1], (unsigned)rv[2], rd[0], rd[1], rs, (long)up);
    /* a vector through external32 */
    pos = 0;
    MPI_Pack_external("external32", data, 1, vec, ext, sizeof ext, &pos);
    hex("external32 of a vector", ext, (int)pos);
    int vout[12];
    for (int i = 0; i < 12; ++i) vout[i] = -1;
    up = 0;
    MPI_Unpack_external("external32", ext, pos, &up, vout, 1, vec);
    char line[300];
    int len = snprintf(line, sizeof line, "vector back from external32:");
    for (int i = 0; i < 12; ++i) len += snprintf(line + len, sizeof line - len, " %d", vout[i]);
    SAY("%s", line);
  }

  /* addresses: a struct datatype of absolute addresses, sent from MPI_BOTTOM */
  {
    int a[4] = {rank * 10 + 1, rank * 10 + 2, rank * 10 + 3, rank * 10 + 4};
    double b = rank + 0.5;
    MPI_Aint aa = 0, ab = 0, a2 = 0;
    MPI_Get_address(&a[0], &aa);
    MPI_Get_address(&b, &ab);
    MPI_Get_address(&a[2], &a2);
    MPI_Aint diff = MPI_Aint_diff(a2, aa);
    MPI_Aint sum = MPI_Aint_add(aa, 2 * (MPI_Aint)sizeof(int));
    SAY("Aint_diff of &a[2] and &a[0] %ld, Aint_add(&a[0], 8) is &a[2] %d", (long)diff, sum == a2);
    int blens[2] = {4, 1};
    MPI_Aint displs[2] = {aa, ab};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, abs_t;
    MPI_Type_create_struct(2, blens, displs, types, &abs_t);
    MPI_Type_commit(&abs_t);
    int ra[4] = {0};
    double rb = 0;
    MPI_Aint raa, rab;
    MPI_Get_address(ra, &raa);
    MPI_Get_address(&rb, &rab);
    MPI_Aint rdispls[2] = {raa, rab};
    MPI_Datatype rt;
    MPI_Type_create_struct(2, blens, rdispls, types, &rt);
    MPI_Type_commit(&rt);
    MPI_Sendrecv(MPI_BOTTOM, 1, abs_t, peer, 4, MPI_BOTTOM, 1, rt, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    SAY("from MPI_BOTTOM: %d %d %d %d %g", ra[0], ra[1], ra[2], ra[3], rb);
    MPI_Type_free(&abs_t);
    MPI_Type_free(&rt);
    /* relative displacements computed with Aint_diff */
    MPI_Aint rel[2] = {0, MPI_Aint_diff(ab, aa)};
    MPI_Type_create_struct(2, blens, rel, types, &abs_t);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(abs_t, &lb, &extent);
    CHECK(lb == (rel[1] < 0 ? rel[1] : 0));
    MPI_Type_free(&abs_t);
  }

  free(buf);
  MPI_Type_free(&vec);
  MPI_Type_free(&st);
  return cov_finish();
}

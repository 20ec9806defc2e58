/* Coverage: datatype decoding (MPI_Type_get_envelope, MPI_Type_get_contents) of every combiner,
   the Fortran 90 parameterized types, MPI_Type_match_size, and the handle conversions Open MPI
   exports as functions (MPI_Type_c2f/f2c, MPI_Op_c2f/f2c; MPICH makes them macros). Derived
   datatypes returned by MPI_Type_get_contents are freed, predefined ones are not; a type decoded
   after the application freed its component gets that component back as a new reference. */
// ranks: 2
#include <string.h>

#include "coverage.h"

static const char* combiner_name(int c) {
  static const struct {
    int c;
    const char* name;
  } names[] = {
      {MPI_COMBINER_NAMED, "NAMED"},
      {MPI_COMBINER_DUP, "DUP"},
      {MPI_COMBINER_CONTIGUOUS, "CONTIGUOUS"},
      {MPI_COMBINER_VECTOR, "VECTOR"},
      {MPI_COMBINER_HVECTOR, "HVECTOR"},
      {MPI_COMBINER_INDEXED, "INDEXED"},
      {MPI_COMBINER_HINDEXED, "HINDEXED"},
      {MPI_COMBINER_INDEXED_BLOCK, "INDEXED_BLOCK"},
      {MPI_COMBINER_HINDEXED_BLOCK, "HINDEXED_BLOCK"},
      {MPI_COMBINER_STRUCT, "STRUCT"},
      {MPI_COMBINER_SUBARRAY, "SUBARRAY"},
      {MPI_COMBINER_DARRAY, "DARRAY"},
      {MPI_COMBINER_F90_REAL, "F90_REAL"},
      {MPI_COMBINER_F90_COMPLEX, "F90_COMPLEX"},
      {MPI_COMBINER_F90_INTEGER, "F90_INTEGER"},
      {MPI_COMBINER_RESIZED, "RESIZED"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (names[i].c == c) return names[i].name;
  return "other";
}

static int decoded = 0, freed = 0;

/* Records T's envelope and contents, recursing into the derived datatypes it was built from and
   freeing each of them once decoded. */
static void decode(MPI_Datatype t, int depth, const char* what) {
  int ni = -1, na = -1, nd = -1, combiner = -1;
  int rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  char line[900];
  int len = snprintf(line, sizeof line, "%s%*s%s rc %d ni %d na %d nd %d", what, depth * 2, "", combiner_name(combiner), rc,
                     ni, na, nd);
  if (combiner == MPI_COMBINER_NAMED) {
    char name[MPI_MAX_OBJECT_NAME];
    int nl = 0;
    MPI_Type_get_name(t, name, &nl);
    SAY("%s name %s", line, name);
    return;
  }
  int ints[64];
  MPI_Aint addrs[64];
  MPI_Datatype types[16];
  CHECK(ni <= 64 && na <= 64 && nd <= 16);
  rc = MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
  ++decoded;
  len += snprintf(line + len, sizeof line - len, " contents rc %d ints", rc);
  for (int i = 0; i < ni && len < 800; ++i) len += snprintf(line + len, sizeof line - len, " %d", ints[i]);
  len += snprintf(line + len, sizeof line - len, " addrs");
  for (int i = 0; i < na && len < 850; ++i) len += snprintf(line + len, sizeof line - len, " %ld", (long)addrs[i]);
  SAY("%s", line);
  for (int i = 0; i < nd; ++i) {
    int ci, ca, cd, cc;
    MPI_Type_get_envelope(types[i], &ci, &ca, &cd, &cc);
    decode(types[i], depth + 1, what);
    if (cc != MPI_COMBINER_NAMED) {
      rc = MPI_Type_free(&types[i]);
      CHECK(rc == MPI_SUCCESS && types[i] == MPI_DATATYPE_NULL);
      ++freed;
    }
  }
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "type_contents");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Datatype t, c, r, s;

  decode(MPI_INT, 0, "MPI_INT: ");
  decode(MPI_DOUBLE_INT, 0, "MPI_DOUBLE_INT: ");

  MPI_Type_contiguous(3, MPI_SHORT, &c);
  decode(c, 0, "contiguous: ");
  MPI_Type_dup(c, &t);
  decode(t, 0, "dup: ");
  MPI_Type_free(&t);

  MPI_Type_vector(2, 3, 4, c, &t);
  decode(t, 0, "vector of contiguous: ");
  MPI_Type_free(&t);
  MPI_Type_create_hvector(2, 1, 40, c, &t);
  decode(t, 0, "hvector: ");
  MPI_Type_free(&t);

  int bl[3] = {1, 2, 3}, di[3] = {0, 3, 8};
  MPI_Aint ad[3] = {0, 16, 48};
  MPI_Type_indexed(3, bl, di, MPI_INT, &t);
  decode(t, 0, "indexed: ");
  MPI_Type_free(&t);
  MPI_Type_create_hindexed(3, bl, ad, c, &t);
  decode(t, 0, "hindexed: ");
  MPI_Type_free(&t);
  MPI_Type_create_indexed_block(3, 2, di, MPI_FLOAT, &t);
  decode(t, 0, "indexed_block: ");
  MPI_Type_free(&t);
  MPI_Type_create_hindexed_block(3, 2, ad, MPI_DOUBLE, &t);
  decode(t, 0, "hindexed_block: ");
  MPI_Type_free(&t);

  MPI_Type_create_resized(c, -2, 16, &r);
  decode(r, 0, "resized: ");
  MPI_Datatype types[3] = {MPI_CHAR, c, r};
  MPI_Type_create_struct(3, bl, ad, types, &s);
  decode(s, 0, "struct: ");

  int sizes[3] = {4, 5, 6}, subsizes[3] = {2, 3, 4}, starts[3] = {1, 0, 2};
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
  decode(t, 0, "subarray: ");
  MPI_Type_free(&t);
  int gs[2] = {8, 6}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 2};
  MPI_Type_create_darray(4, 3, 2, gs, distribs, dargs, psizes, MPI_ORDER_C, MPI_DOUBLE, &t);
  decode(t, 0, "darray: ");
  MPI_Type_free(&t);

  /* the application frees the components first: decoding hands them back, still usable */
  MPI_Type_free(&c);
  MPI_Type_free(&r);
  {
    int ni, na, nd, comb;
    MPI_Type_get_envelope(s, &ni, &na, &nd, &comb);
    int ints[8];
    MPI_Aint addrs[8];
    MPI_Datatype got[8], again[8];
    MPI_Type_get_contents(s, ni, na, nd, ints, addrs, got);
    MPI_Type_get_contents(s, ni, na, nd, ints, addrs, again); /* a second reference to each */
    int size = -1;
    MPI_Aint lb = -1, extent = -1;
    MPI_Type_size(got[1], &size);
    MPI_Type_get_extent(got[2], &lb, &extent);
    SAY("components after their free: size %d, resized lb %ld extent %ld", size, (long)lb, (long)extent);
    /* use a returned component for communication */
    MPI_Type_commit(&got[2]);
    short out[16], in[16];
    for (int i = 0; i < 16; ++i) out[i] = (short)(100 + i), in[i] = -1;
    MPI_Sendrecv(out + 1, 2, got[2], 1 - rank, 3, in + 1, 2, got[2], 1 - rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char line[200];
    int len = snprintf(line, sizeof line, "received with a returned component:");
    for (int i = 0; i < 16; ++i) len += snprintf(line + len, sizeof line - len, " %d", in[i]);
    SAY("%s", line);
    for (int i = 1; i < 3; ++i) {
      CHECK(MPI_Type_free(&got[i]) == MPI_SUCCESS);
      CHECK(MPI_Type_free(&again[i]) == MPI_SUCCESS);
    }
    MPI_Type_get_extent(s, &lb, &extent);
    SAY("struct still intact: lb %ld extent %ld", (long)lb, (long)extent);
  }
  MPI_Type_free(&s);

  /* a component freed, then many other types made and freed, before it is decoded */
  {
    MPI_Datatype inner, outer;
    MPI_Type_contiguous(2, MPI_INT, &inner);
    MPI_Type_vector(2, 1, 2, inner, &outer);
    MPI_Type_free(&inner);
    for (int i = 0; i < 100; ++i) {
      MPI_Datatype x;
      MPI_Type_contiguous(i + 1, MPI_CHAR, &x);
      MPI_Type_free(&x);
    }
    decode(outer, 0, "after 100 frees: ");
    int r1 = MPI_Type_free(&outer);
    SAY("after 100 frees: outer freed rc %d", r1);
  }

  MPI_Type_contiguous(2, MPI_INT, &c);
  MPI_Type_commit(&c);
  decode(c, 0, "committed contiguous: ");
  MPI_Type_free(&c);

  /* Fortran 90 parameterized types (predefined: never freed) and Type_match_size */
  {
    MPI_Datatype f;
    int rc = MPI_Type_create_f90_real(6, MPI_UNDEFINED, &f);
    int size = -1;
    MPI_Type_size(f, &size);
    SAY("f90_real(6) rc %d size %d", rc, size);
    decode(f, 0, "f90_real(6): ");
    rc = MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &f);
    MPI_Type_size(f, &size);
    SAY("f90_real(range 300) rc %d size %d", rc, size);
    decode(f, 0, "f90_real(range 300): ");
    rc = MPI_Type_create_f90_complex(15, 300, &f);
    MPI_Type_size(f, &size);
    SAY("f90_complex(15,300) rc %d size %d", rc, size);
    decode(f, 0, "f90_complex(15,300): ");
    rc = MPI_Type_create_f90_integer(9, &f);
    MPI_Type_size(f, &size);
    SAY("f90_integer(9) rc %d size %d", rc, size);
    decode(f, 0, "f90_integer(9): ");
    /* send with one */
    double out[3] = {1.25, -2.5, 1e100}, in[3] = {0, 0, 0};
    MPI_Type_create_f90_real(15, MPI_UNDEFINED, &f);
    MPI_Sendrecv(out, 3, f, 1 - rank, 4, in, 3, f, 1 - rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    SAY("received f90_real(15): %g %g %g", in[0], in[1], in[2]);
  }
  {
    struct {
      int cls, size;
      const char* what;
    } q[] = {{MPI_TYPECLASS_INTEGER, 4, "integer 4"}, {MPI_TYPECLASS_INTEGER, 8, "integer 8"},
             {MPI_TYPECLASS_REAL, 4, "real 4"},       {MPI_TYPECLASS_REAL, 8, "real 8"},
             {MPI_TYPECLASS_COMPLEX, 16, "complex 16"}};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; ++i) {
      MPI_Datatype m = MPI_DATATYPE_NULL;
      int rc = MPI_Type_match_size(q[i].cls, q[i].size, &m);
      int size = -1;
      if (rc == MPI_SUCCESS) MPI_Type_size(m, &size);
      SAY("match_size %s: rc %d size %d", q[i].what, rc, size);
    }
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int rc = MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m), cls = -1;
    MPI_Error_class(rc, &cls);
    SAY("match_size real 3: error class is MPI_ERR_ARG %d", cls == MPI_ERR_ARG);
  }

#ifdef OPEN_MPI
  /* handle conversions Open MPI exports as functions */
  {
    MPI_Datatype v, back;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Fint fv = MPI_Type_c2f(v), fi = MPI_Type_c2f(MPI_INT);
    back = MPI_Type_f2c(fv);
    SAY("Type_c2f/f2c round trip %d, MPI_INT %d", back == v, MPI_Type_f2c(fi) == MPI_INT);
    MPI_Type_free(&v);
    MPI_Fint fo = MPI_Op_c2f(MPI_SUM);
    SAY("Op_c2f/f2c round trip %d", MPI_Op_f2c(fo) == MPI_SUM);
  }
#endif
  SAY("decoded %d derived types, freed %d returned ones", decoded, freed);
  return cov_finish();
}

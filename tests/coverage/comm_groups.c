/* Coverage: groups and every group operation (size, rank, incl/excl, range forms, union,
   intersection, difference, compare, translate_ranks, free), MPI_Comm_group twice on one
   communicator, MPI_GROUP_EMPTY. Each group is described by its members' world ranks in order. */
// ranks: 4
#include "coverage.h"

static MPI_Group world;

static const char* cmp_name(int r) {
  switch (r) {
    case MPI_IDENT: return "IDENT";
    case MPI_SIMILAR: return "SIMILAR";
    case MPI_UNEQUAL: return "UNEQUAL";
  }
  return "?";
}

/* "size N rank R members [w0 w1 ...]" with the members translated to world ranks. */
static void describe(const char* what, MPI_Group g) {
  int size = -1, rank = -2;
  int rc1 = MPI_Group_size(g, &size);
  int rc2 = MPI_Group_rank(g, &rank);
  char text[256];
  char rtext[16];
  if (rank == MPI_UNDEFINED) snprintf(rtext, sizeof rtext, "UNDEFINED");
  else snprintf(rtext, sizeof rtext, "%d", rank);
  int n = snprintf(text, sizeof text, "%s: size %d rank %s members [", what, size, rtext);
  int in[16], out[16];
  for (int i = 0; i < size && i < 16; ++i) in[i] = i, out[i] = -7;
  int rc3 = size > 0 ? MPI_Group_translate_ranks(g, size, in, world, out) : MPI_SUCCESS;
  for (int i = 0; i < size && i < 16; ++i) n += snprintf(text + n, sizeof text - n, i ? " %d" : "%d", out[i]);
  snprintf(text + n, sizeof text - n, "]");
  CHECK(rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS && rc3 == MPI_SUCCESS);
  SAY("%s", text);
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "comm_groups");
  int rc, cmp;
  rc = MPI_Comm_group(MPI_COMM_WORLD, &world);
  CHECK(rc == MPI_SUCCESS);
  describe("world", world);

  /* MPI_Comm_group twice on one communicator, each freed separately, the second used after the
     first was freed. */
  MPI_Group w1, w2;
  MPI_Comm_group(MPI_COMM_WORLD, &w1);
  MPI_Comm_group(MPI_COMM_WORLD, &w2);
  MPI_Group_compare(w1, w2, &cmp);
  SAY("world group twice: %s", cmp_name(cmp));
  rc = MPI_Group_free(&w1);
  SAY("first freed rc %d null %d", rc, w1 == MPI_GROUP_NULL);
  describe("second after first freed", w2);
  MPI_Group_free(&w2);

  MPI_Group self;
  MPI_Comm_group(MPI_COMM_SELF, &self);
  describe("self", self);

  int r31[2] = {3, 1};
  MPI_Group g31, g13, gex, grinc, grexc, gstride;
  rc = MPI_Group_incl(world, 2, r31, &g31);
  CHECK(rc == MPI_SUCCESS);
  describe("incl 3 1", g31);
  int r13[2] = {1, 3};
  MPI_Group_incl(world, 2, r13, &g13);
  describe("incl 1 3", g13);
  MPI_Group_compare(g31, g13, &cmp);
  SAY("incl 3 1 vs incl 1 3: %s", cmp_name(cmp));
  MPI_Group_compare(g31, g31, &cmp);
  SAY("incl 3 1 vs itself: %s", cmp_name(cmp));
  MPI_Group_compare(g31, world, &cmp);
  SAY("incl 3 1 vs world: %s", cmp_name(cmp));

  int r0[1] = {0};
  rc = MPI_Group_excl(world, 1, r0, &gex);
  CHECK(rc == MPI_SUCCESS);
  describe("excl 0", gex);

  /* Ranges: [3..0 step -1] (reversed world), [0..3 step 2] and [1..1 step 1]. */
  int rev[1][3] = {{3, 0, -1}};
  rc = MPI_Group_range_incl(world, 1, rev, &grinc);
  CHECK(rc == MPI_SUCCESS);
  describe("range_incl 3..0 step -1", grinc);
  MPI_Group_compare(grinc, world, &cmp);
  SAY("reversed vs world: %s", cmp_name(cmp));
  int two[2][3] = {{0, 3, 2}, {1, 1, 1}};
  MPI_Group_range_incl(world, 2, two, &gstride);
  describe("range_incl 0..3 step 2, 1..1", gstride);
  int ex[1][3] = {{1, 3, 2}};
  rc = MPI_Group_range_excl(world, 1, ex, &grexc);
  CHECK(rc == MPI_SUCCESS);
  describe("range_excl 1..3 step 2", grexc);

  /* Set operations: order is the first group's, then the second's new members. */
  MPI_Group gu, gi, gd, gd2, ge;
  rc = MPI_Group_union(g31, grexc, &gu);
  CHECK(rc == MPI_SUCCESS);
  describe("union (3 1) (0 2)", gu);
  rc = MPI_Group_intersection(grinc, gex, &gi);
  CHECK(rc == MPI_SUCCESS);
  describe("intersection (3 2 1 0) (1 2 3)", gi);
  rc = MPI_Group_difference(grinc, g13, &gd);
  CHECK(rc == MPI_SUCCESS);
  describe("difference (3 2 1 0) - (1 3)", gd);
  MPI_Group_difference(g13, g31, &gd2);
  MPI_Group_compare(gd2, MPI_GROUP_EMPTY, &cmp);
  SAY("difference (1 3) - (3 1) vs MPI_GROUP_EMPTY: %s", cmp_name(cmp));
  int esize = -1;
  MPI_Group_size(gd2, &esize);
  SAY("empty difference size %d", esize);
  MPI_Group_intersection(g13, grexc, &ge);
  MPI_Group_size(ge, &esize);
  SAY("empty intersection size %d", esize);
  MPI_Group_size(MPI_GROUP_EMPTY, &esize);
  int erank = -2;
  MPI_Group_rank(MPI_GROUP_EMPTY, &erank);
  SAY("MPI_GROUP_EMPTY size %d rank undefined %d", esize, erank == MPI_UNDEFINED);

  /* Translation of every world rank into the odd group, with MPI_PROC_NULL passed through. */
  int in[5] = {0, 1, 2, 3, MPI_PROC_NULL}, out[5];
  rc = MPI_Group_translate_ranks(world, 5, in, g31, out);
  CHECK(rc == MPI_SUCCESS);
  char text[128];
  int n = 0;
  for (int i = 0; i < 5; ++i) {
    if (out[i] == MPI_UNDEFINED) n += snprintf(text + n, sizeof text - n, " UNDEFINED");
    else if (out[i] == MPI_PROC_NULL) n += snprintf(text + n, sizeof text - n, " PROC_NULL");
    else n += snprintf(text + n, sizeof text - n, " %d", out[i]);
  }
  SAY("translate world -> (3 1):%s", text);

  /* A group from a split communicator, compared with the equivalent incl group. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  MPI_Group hg;
  MPI_Comm_group(half, &hg);
  describe("group of split parity reversed", hg);
  MPI_Group_compare(hg, rank % 2 ? g31 : g13, &cmp);
  SAY("vs incl (%s): %s", rank % 2 ? "3 1" : "1 3", cmp_name(cmp));
  /* The group outlives its communicator. */
  MPI_Comm_free(&half);
  describe("group after its communicator was freed", hg);

  MPI_Group* all[] = {&g31, &g13, &gex, &grinc, &grexc, &gstride, &gu, &gi, &gd, &gd2, &ge, &hg, &self};
  int nulls = 0;
  for (unsigned i = 0; i < sizeof all / sizeof *all; ++i) {
    rc = MPI_Group_free(all[i]);
    CHECK(rc == MPI_SUCCESS);
    nulls += *all[i] == MPI_GROUP_NULL;
  }
  SAY("freed %d groups, %d handles null", (int)(sizeof all / sizeof *all), nulls);

  /* Many groups made and freed (beyond tsmpi's quarantine of 64 per kind). */
  long sum = 0;
  for (int i = 0; i < 150; ++i) {
    MPI_Group g;
    int pick[1] = {i % 4}, r = -1;
    MPI_Group_incl(world, 1, pick, &g);
    MPI_Group_rank(g, &r);
    sum += r == MPI_UNDEFINED ? 10 : r + 1;
    MPI_Group_free(&g);
  }
  SAY("150 incl/free rounds sum %ld", sum);
  MPI_Group_free(&world);
  return cov_finish();
}

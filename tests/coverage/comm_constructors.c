/* Coverage: communicator constructors (dup, dup_with_info, idup, idup_with_info, create,
   create_group, split, split_type), comparison, names, size/rank, free. Each new communicator is
   checked by its size, the caller's rank in it, its comparison with its parent and one collective
   whose result depends on its membership and rank order. */
// ranks: 4
#include "coverage.h"

static const char* cmp_name(int r) {
  switch (r) {
    case MPI_IDENT: return "IDENT";
    case MPI_CONGRUENT: return "CONGRUENT";
    case MPI_SIMILAR: return "SIMILAR";
    case MPI_UNEQUAL: return "UNEQUAL";
  }
  return "?";
}

/* Every member contributes (its rank in world + 1) * 10^(its rank in comm): the sum identifies
   both membership and order. */
static long order_code(MPI_Comm comm) {
  int wrank, crank;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_rank(comm, &crank);
  long mine = wrank + 1, sum = 0;
  for (int i = 0; i < crank; ++i) mine *= 10;
  int rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
  CHECK(rc == MPI_SUCCESS);
  return sum;
}

static void describe(const char* what, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) {
    SAY("%s: MPI_COMM_NULL", what);
    return;
  }
  int size = -1, rank = -1, cmp = -1, inter = -1;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_compare(MPI_COMM_WORLD, comm, &cmp);
  MPI_Comm_test_inter(comm, &inter);
  SAY("%s: size %d rank %d vs world %s inter %d order %ld", what, size, rank, cmp_name(cmp), inter,
      order_code(comm));
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "comm_constructors");
  int size = 0, rc, cmp = -1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SAY("world size %d rank %d", size, rank);
  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp);
  SAY("world vs world %s", cmp_name(cmp));
  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &cmp);
  SAY("world vs self %s", cmp_name(cmp));

  /* Names: predefined names, a name set on a duplicate, a duplicate's (unset) name. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  SAY("world name '%s' len %d", name, len);
  MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
  SAY("self name '%s' len %d", name, len);

  /* MPI_Comm_dup */
  MPI_Comm dup = MPI_COMM_NULL;
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(rc == MPI_SUCCESS && dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD);
  describe("dup", dup);
  rc = MPI_Comm_set_name(dup, "coverage dup");
  CHECK(rc == MPI_SUCCESS);
  MPI_Comm_get_name(dup, name, &len);
  SAY("dup name '%s' len %d", name, len);
  MPI_Comm_compare(dup, dup, &cmp);
  SAY("dup vs dup %s", cmp_name(cmp));

  /* A duplicate of the duplicate: congruent, its name not inherited. */
  MPI_Comm dup2 = MPI_COMM_NULL;
  rc = MPI_Comm_dup(dup, &dup2);
  CHECK(rc == MPI_SUCCESS);
  MPI_Comm_compare(dup, dup2, &cmp);
  SAY("dup vs dup of dup %s", cmp_name(cmp));
  name[0] = 'x';
  name[1] = 0;
  MPI_Comm_get_name(dup2, name, &len);
  SAY("dup of dup name '%s' len %d", name, len);

  /* MPI_Comm_dup_with_info */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "coverage_key", "coverage_value");
  MPI_Comm dupi = MPI_COMM_NULL;
  rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dupi);
  CHECK(rc == MPI_SUCCESS);
  describe("dup_with_info", dupi);

  /* MPI_Comm_idup: the new handle is usable once the request completes. */
  MPI_Comm idup = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  rc = MPI_Comm_idup(dup, &idup, &req);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL);
  describe("idup", idup);
  MPI_Comm_compare(dup, idup, &cmp);
  SAY("dup vs idup %s", cmp_name(cmp));

  /* Two idups outstanding at once, completed together. */
  MPI_Comm idups[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
  MPI_Request reqs[2];
  MPI_Comm_idup(MPI_COMM_WORLD, &idups[0], &reqs[0]);
  MPI_Comm_idup(dup, &idups[1], &reqs[1]);
  rc = MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  CHECK(rc == MPI_SUCCESS);
  describe("idup pair 0", idups[0]);
  describe("idup pair 1", idups[1]);

#ifdef MPICH
  /* MPI_Comm_idup_with_info (MPI-4; MPICH only) */
  MPI_Comm idupi = MPI_COMM_NULL;
  rc = MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &idupi, &req);
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(rc == MPI_SUCCESS);
  describe("idup_with_info", idupi);
  MPI_Comm_free(&idupi);
  CHECK(idupi == MPI_COMM_NULL);
#endif
  MPI_Info_free(&info);

  /* MPI_Comm_create: even ranks in reverse order; odd ranks get MPI_COMM_NULL. */
  MPI_Group world_group, even_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int evens[2] = {2, 0};
  MPI_Group_incl(world_group, 2, evens, &even_group);
  MPI_Comm created = MPI_COMM_NULL;
  rc = MPI_Comm_create(MPI_COMM_WORLD, even_group, &created);
  CHECK(rc == MPI_SUCCESS);
  describe("create evens reversed", created);
  if (created != MPI_COMM_NULL) MPI_Comm_free(&created);

  /* MPI_Comm_create on a duplicate with the whole group: congruent to world. */
  rc = MPI_Comm_create(dup, world_group, &created);
  CHECK(rc == MPI_SUCCESS);
  describe("create whole group", created);
  MPI_Comm_free(&created);

  /* MPI_Comm_create_group: only the members call it (ranks 3 and 1, in that order). */
  int odds[2] = {3, 1};
  MPI_Group odd_group;
  MPI_Group_incl(world_group, 2, odds, &odd_group);
  MPI_Comm cg = MPI_COMM_NULL;
  if (rank % 2 == 1) {
    rc = MPI_Comm_create_group(MPI_COMM_WORLD, odd_group, 7, &cg);
    CHECK(rc == MPI_SUCCESS);
    describe("create_group odds reversed", cg);
    MPI_Comm_free(&cg);
  }
  MPI_Group_free(&odd_group);
  MPI_Group_free(&even_group);
  MPI_Group_free(&world_group);

  /* MPI_Comm_split: by parity, key reversing the order; rank 3 opts out with MPI_UNDEFINED. */
  MPI_Comm split = MPI_COMM_NULL;
  rc = MPI_Comm_split(MPI_COMM_WORLD, rank == 3 ? MPI_UNDEFINED : rank % 2, -rank, &split);
  CHECK(rc == MPI_SUCCESS);
  describe("split parity reversed", split);
  if (split != MPI_COMM_NULL) MPI_Comm_free(&split);

  /* One color, reversed keys: same group, other order -> SIMILAR. */
  rc = MPI_Comm_split(dup, 0, size - rank, &split);
  CHECK(rc == MPI_SUCCESS);
  describe("split reversed", split);
  MPI_Comm_compare(dup, split, &cmp);
  SAY("dup vs split reversed %s", cmp_name(cmp));
  /* Equal keys keep the parent's order. */
  MPI_Comm split2 = MPI_COMM_NULL;
  rc = MPI_Comm_split(split, 5, 0, &split2);
  CHECK(rc == MPI_SUCCESS);
  describe("split of split, equal keys", split2);
  MPI_Comm_free(&split2);
  MPI_Comm_free(&split);

  /* MPI_Comm_split_type: every rank runs on this machine. */
  MPI_Comm shared = MPI_COMM_NULL;
  rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  CHECK(rc == MPI_SUCCESS);
  describe("split_type shared", shared);
  MPI_Comm_free(&shared);
  rc = MPI_Comm_split_type(dup, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, -rank,
                           MPI_INFO_NULL, &shared);
  CHECK(rc == MPI_SUCCESS);
  describe("split_type shared without 0, reversed", shared);
  if (shared != MPI_COMM_NULL) MPI_Comm_free(&shared);

  /* Communication on a duplicate does not match communication on its parent. */
  int a = -1, b = -1, peer = rank ^ 1;
  MPI_Request rr[2];
  MPI_Irecv(&a, 1, MPI_INT, peer, 0, dup, &rr[0]);
  MPI_Irecv(&b, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &rr[1]);
  int va = 100 + rank, vb = 200 + rank;
  MPI_Send(&vb, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
  MPI_Send(&va, 1, MPI_INT, peer, 0, dup);
  MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
  SAY("received %d on dup, %d on world", a, b);

  /* Operations pending on a communicator complete normally after it is freed. */
  MPI_Comm pend;
  MPI_Comm_dup(MPI_COMM_WORLD, &pend);
  int pin = -1, pout = 300 + rank, pb = rank == 0 ? 77 : -1;
  MPI_Request preqs[3];
  MPI_Irecv(&pin, 1, MPI_INT, peer, 9, pend, &preqs[0]);
  MPI_Isend(&pout, 1, MPI_INT, peer, 9, pend, &preqs[1]);
  MPI_Ibcast(&pb, 1, MPI_INT, 0, pend, &preqs[2]);
  rc = MPI_Comm_free(&pend);
  int rc2 = MPI_Waitall(3, preqs, MPI_STATUSES_IGNORE);
  SAY("free with pending operations rc %d, waitall rc %d received %d bcast %d", rc, rc2, pin, pb);

  /* Frees set the handles to MPI_COMM_NULL. */
  MPI_Comm_free(&idups[0]);
  MPI_Comm_free(&idups[1]);
  MPI_Comm_free(&idup);
  MPI_Comm_free(&dupi);
  MPI_Comm_free(&dup2);
  rc = MPI_Comm_free(&dup);
  SAY("free rc %d, handles null %d", rc,
      dup == MPI_COMM_NULL && dup2 == MPI_COMM_NULL && dupi == MPI_COMM_NULL &&
          idup == MPI_COMM_NULL && idups[0] == MPI_COMM_NULL && idups[1] == MPI_COMM_NULL);

  /* Many dups and frees in a row (more than tsmpi's default quarantine of 64). */
  long total = 0;
  for (int i = 0; i < 100; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int r;
    MPI_Comm_rank(c, &r);
    total += r;
    MPI_Comm_free(&c);
  }
  SAY("100 dup/free rounds, rank sum %ld", total);
  return cov_finish();
}

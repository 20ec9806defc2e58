/* Coverage: blocking MPI_Alltoallw (and MPICH's MPI_Alltoallw_c) with MPI_IN_PLACE and receive
   types that differ from peer to peer (2 MPI_INT from odd ranks, one contiguous pair from even
   ones: equal type signatures). The nonblocking and persistent forms are not made: MPICH 4.0.2's
   fail this case ("Message truncated"), its blocking forms do not; coll_all.c covers those forms
   in place with one receive type. */
// ranks: 4
#include "coverage.h"

static void verify(const char* what, int rc, const int* got, const int* expected, int n) {
  char text[256];
  int len = 0;
  text[0] = 0;
  for (int i = 0; i < n; ++i) len += snprintf(text + len, sizeof text - len, i ? " %d" : "%d", got[i]);
  SAY("%s: rc %d: %s", what, rc, text);
  if (rc != MPI_SUCCESS || memcmp(got, expected, n * sizeof(int)) != 0) {
    SAY("check failed: %s", what);
    ++cov_failures;
  }
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "coll_alltoallw_inplace"), size, rc;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    SAY("needs 4 ranks, has %d", size);
    ++cov_failures;
    return cov_finish();
  }
  MPI_Datatype pair_t;
  MPI_Type_contiguous(2, MPI_INT, &pair_t);
  MPI_Type_commit(&pair_t);
  int rcounts[4], rdispls[4], buf[8], exp[8];
  MPI_Datatype rtypes[4];
  for (int p = 0; p < 4; ++p) {
    rcounts[p] = p % 2 ? 2 : 1, rtypes[p] = p % 2 ? MPI_INT : pair_t;
    rdispls[p] = p * 2 * (int)sizeof(int);
    buf[2 * p] = 100 * rank + 10 * p, buf[2 * p + 1] = buf[2 * p] + 1;
    exp[2 * p] = 100 * p + 10 * rank, exp[2 * p + 1] = exp[2 * p] + 1;
  }
  rc = MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, rcounts, rdispls, rtypes, MPI_COMM_WORLD);
  verify("alltoallw in place, mixed receive types", rc, buf, exp, 8);
#if defined(MPICH) && MPI_VERSION >= 4
  {
    MPI_Count rcounts_c[4];
    MPI_Aint rdispls_c[4];
    for (int p = 0; p < 4; ++p) {
      rcounts_c[p] = rcounts[p], rdispls_c[p] = rdispls[p];
      buf[2 * p] = 1000 + 100 * rank + 10 * p, buf[2 * p + 1] = buf[2 * p] + 1;
      exp[2 * p] = 1000 + 100 * p + 10 * rank, exp[2 * p + 1] = exp[2 * p] + 1;
    }
    rc = MPI_Alltoallw_c(MPI_IN_PLACE, NULL, NULL, NULL, buf, rcounts_c, rdispls_c, rtypes, MPI_COMM_WORLD);
    verify("alltoallw_c in place, mixed receive types", rc, buf, exp, 8);
  }
#endif
  MPI_Type_free(&pair_t);
  return cov_finish();
}

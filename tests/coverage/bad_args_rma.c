/* Coverage: bad arguments to one-sided calls get the MPI's error class through the window's
   error handler (or, for window constructors and MPI_WIN_NULL, the communicator's), never a
   crash: target ranks out of range, negative counts and displacements, MPI_DATATYPE_NULL,
   MPI_OP_NULL, MPI_WIN_NULL, invalid lock types, window constructors with a negative size or a
   zero displacement unit, calls for another window flavor. Fence and passive-target epochs.
   Every case runs twice: with MPI_ERRORS_RETURN everywhere, then with counting handlers on the
   window, on the duplicate of MPI_COMM_WORLD the window is made on, on MPI_COMM_WORLD and on
   MPI_COMM_SELF; then a correct MPI_Put in a fence epoch shows the window still works. */
// ranks: 2
#include "bad_args.h"

static MPI_Win tested_win = MPI_WIN_NULL;
static void win_handler(MPI_Win* win, int* code, ...) {
  ++calls;
  size_t n = strlen(seen);
  snprintf(seen + n, sizeof seen - n, " %s@%s", class_name(err_class(*code)),
           *win == tested_win ? "win" : "otherwin");
}

static void cases(MPI_Win w, MPI_Comm c, int rank, int size, int* base) {
  const int peer = 1 - rank, big = size + 3, bad = -7;
  int v[4] = {1, 2, 3, 4}, res[4] = {0}, cmp = 0, flag = 0;
  MPI_Win nw = MPI_WIN_NULL, null_win = MPI_WIN_NULL;
  MPI_Group g = MPI_GROUP_NULL;
  MPI_Aint qsize;
  int qdisp;
  void* qbase = NULL;
  void* attr = NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  (void)base;

  SAY(" fence epoch");
  MPI_Win_fence(0, w);
  CASE("put target size+3", MPI_Put(v, 1, MPI_INT, big, 0, 1, MPI_INT, w));
  CASE("put target -7", MPI_Put(v, 1, MPI_INT, bad, 0, 1, MPI_INT, w));
  CASE("put origin count -1", MPI_Put(v, -1, MPI_INT, peer, 0, 1, MPI_INT, w));
  CASE("put target count -1", MPI_Put(v, 1, MPI_INT, peer, 0, -1, MPI_INT, w));
  CASE("put MPI_DATATYPE_NULL", MPI_Put(v, 1, MPI_DATATYPE_NULL, peer, 0, 1, MPI_INT, w));
  CASE("put target disp -1", MPI_Put(v, 1, MPI_INT, peer, -1, 1, MPI_INT, w));
  CASE("put MPI_WIN_NULL", MPI_Put(v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_WIN_NULL));
  CASE("get target size+3", MPI_Get(res, 1, MPI_INT, big, 0, 1, MPI_INT, w));
  CASE("get target datatype MPI_DATATYPE_NULL", MPI_Get(res, 1, MPI_INT, peer, 0, 1, MPI_DATATYPE_NULL, w));
  CASE("accumulate MPI_OP_NULL", MPI_Accumulate(v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_OP_NULL, w));
  CASE("accumulate target -7", MPI_Accumulate(v, 1, MPI_INT, bad, 0, 1, MPI_INT, MPI_SUM, w));
  CASE("get_accumulate target size+3",
       MPI_Get_accumulate(v, 1, MPI_INT, res, 1, MPI_INT, big, 0, 1, MPI_INT, MPI_SUM, w));
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not check it: a segmentation fault */
  CASE("fetch_and_op MPI_OP_NULL", MPI_Fetch_and_op(v, res, MPI_INT, peer, 0, MPI_OP_NULL, w));
#endif
  CASE("compare_and_swap target size+3", MPI_Compare_and_swap(v, &cmp, res, MPI_INT, big, 0, w));
  CASE("win_fence MPI_WIN_NULL", MPI_Win_fence(0, MPI_WIN_NULL));
  MPI_Win_fence(MPI_MODE_NOSUCCEED, w);

  SAY(" passive target");
  CASE("win_lock lock type 99", MPI_Win_lock(99, peer, 0, w));
  CASE("win_lock target size+3", MPI_Win_lock(MPI_LOCK_SHARED, big, 0, w));
  CASE("win_lock MPI_WIN_NULL", MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, MPI_WIN_NULL));
  CASE("win_lock_all MPI_WIN_NULL", MPI_Win_lock_all(0, MPI_WIN_NULL));
  MPI_Win_lock_all(0, w);
  CASE("rput target size+3 (lock_all)", MPI_Rput(v, 1, MPI_INT, big, 0, 1, MPI_INT, w, &req));
  CASE("rget count -1 (lock_all)", MPI_Rget(res, -1, MPI_INT, peer, 0, 1, MPI_INT, w, &req));
  CASE("put target -7 (lock_all)", MPI_Put(v, 1, MPI_INT, bad, 0, 1, MPI_INT, w));
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not check it: a segmentation fault */
  CASE("flush target size+3 (lock_all)", MPI_Win_flush(big, w));
#endif
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not check it: a segmentation fault */
  CASE("flush_local target -7 (lock_all)", MPI_Win_flush_local(bad, w));
#endif
  MPI_Win_unlock_all(w);

  SAY(" windows");
  CASE("win_create size -1", MPI_Win_create(v, -1, sizeof(int), MPI_INFO_NULL, c, &nw));
  CASE("win_create disp_unit 0", MPI_Win_create(v, sizeof v, 0, MPI_INFO_NULL, c, &nw));
  CASE("win_create MPI_COMM_NULL", MPI_Win_create(v, sizeof v, sizeof(int), MPI_INFO_NULL, MPI_COMM_NULL, &nw));
  CASE("win_allocate size -1", MPI_Win_allocate(-1, sizeof(int), MPI_INFO_NULL, c, &qbase, &nw));
  CASE("win_free MPI_WIN_NULL", MPI_Win_free(&null_win));
  CASE("win_get_group MPI_WIN_NULL", MPI_Win_get_group(MPI_WIN_NULL, &g));
  CASE("win_set_name MPI_WIN_NULL", MPI_Win_set_name(MPI_WIN_NULL, "x"));
  CASE("win_get_attr MPI_KEYVAL_INVALID", MPI_Win_get_attr(w, MPI_KEYVAL_INVALID, &attr, &flag));
  CASE("win_shared_query of a created window", MPI_Win_shared_query(w, 0, &qsize, &qdisp, &qbase));
  CASE("win_attach to a created window", MPI_Win_attach(w, v, sizeof v));
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not detect it: an exposure epoch starts */
  CASE("win_post MPI_GROUP_NULL", MPI_Win_post(MPI_GROUP_NULL, 0, w));
#endif
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not detect it: an access epoch starts */
  CASE("win_start MPI_GROUP_NULL", MPI_Win_start(MPI_GROUP_NULL, 0, w));
#endif
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "bad_args_rma");
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Errhandler eh, weh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Win_create_errhandler(win_handler, &weh);
  MPI_Comm_dup(MPI_COMM_WORLD, &tested);
  int* base = NULL;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, tested, &base, &tested_win);
  for (int i = 0; i < 4; ++i) base[i] = -1;
  for (int pass = 0; pass < 2; ++pass) {
    begin_pass(pass, eh);
    MPI_Win_set_errhandler(tested_win, pass ? weh : MPI_ERRORS_RETURN);
    cases(tested_win, tested, rank, size, base);
    end_pass();
    MPI_Win_set_errhandler(tested_win, MPI_ERRORS_RETURN);
    /* The window still works: each rank puts 10*pass+rank into its peer's element pass. */
    int v = 10 * pass + rank;
    int rc = MPI_Win_fence(0, tested_win);
    if (rc == MPI_SUCCESS) rc = MPI_Put(&v, 1, MPI_INT, 1 - rank, pass, 1, MPI_INT, tested_win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_fence(0, tested_win);
    SAY("pass %d: put afterwards rc %d got %d", pass + 1, rc, base[pass]);
    CHECK(rc == MPI_SUCCESS && base[pass] == 10 * pass + 1 - rank);
  }
  MPI_Win_free(&tested_win);
  MPI_Comm_free(&tested);
  MPI_Errhandler_free(&eh);
  MPI_Errhandler_free(&weh);
  return cov_finish();
}

/* Coverage: RMA window objects. MPI_Win_create / MPI_Win_allocate / MPI_Win_create_dynamic with
   MPI_Win_attach and MPI_Win_detach, window info, names, predefined and user attributes (keyval
   callbacks), error handlers (MPI_Win_call_errhandler and an error raised by the MPI), the
   window's group, Fortran handle conversion, a window used after its communicator was freed,
   MPI_Win_free. Each window is used for one fenced transfer whose values are checked. */
// ranks: 3
#include <stdint.h>

#include "coverage.h"

static int delete_calls = 0, delete_value = -1;
static int delete_fn(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win, (void)keyval, (void)extra;
  ++delete_calls;
  delete_value = *(int*)value;
  return MPI_SUCCESS;
}

static int cov_class(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}

static int handler_calls = 0, handler_class = -1;
static void win_handler(MPI_Win* win, int* code, ...) {
  (void)win;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "rma_window"), size, rc;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* MPI_Win_create with info, a name, attributes. */
  int mem[8];
  for (int i = 0; i < 8; ++i) mem[i] = -1;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "true");
  MPI_Win win;
  SAY("win_create rc %d", MPI_Win_create(mem, sizeof mem, sizeof(int), info, MPI_COMM_WORLD, &win));
  MPI_Info_free(&info);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

  char name[MPI_MAX_OBJECT_NAME];
  int len = -1, flag = -1;
  MPI_Win_get_name(win, name, &len);
  SAY("initial name len %d", len);
  MPI_Win_set_name(win, "coverage window");
  MPI_Win_get_name(win, name, &len);
  SAY("name '%s' len %d", name, len);

  MPI_Info got;
  SAY("win_get_info rc %d", MPI_Win_get_info(win, &got));
  char value[MPI_MAX_INFO_VAL];
  MPI_Info_get(got, "no_locks", MPI_MAX_INFO_VAL - 1, value, &flag);
  SAY("info no_locks flag %d value %s", flag, flag ? value : "-");
  MPI_Info_free(&got);
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  SAY("win_set_info rc %d", MPI_Win_set_info(win, info));
  MPI_Info_free(&info);
  MPI_Win_get_info(win, &got);
  MPI_Info_get(got, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, value, &flag);
  SAY("info accumulate_ordering flag %d value %s", flag, flag ? value : "-");
  MPI_Info_free(&got);

  void* base = NULL;
  MPI_Aint* wsize = NULL;
  int* disp_unit = NULL;
  int* flavor = NULL;
  int* model = NULL;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  CHECK(flag && base == (void*)mem);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
  SAY("attr size flag %d value %ld", flag, flag ? (long)*wsize : -1L);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &disp_unit, &flag);
  SAY("attr disp_unit flag %d value %d", flag, flag ? *disp_unit : -1);
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  SAY("attr flavor flag %d is_create %d", flag, flag && *flavor == MPI_WIN_FLAVOR_CREATE);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  SAY("attr model flag %d known %d", flag, flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE));

  int keyval = MPI_KEYVAL_INVALID;
  SAY("create_keyval rc %d", MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, &keyval, NULL));
  static int v1 = 11, v2 = 22;
  int* pv = NULL;
  MPI_Win_set_attr(win, keyval, &v1);
  MPI_Win_get_attr(win, keyval, &pv, &flag);
  SAY("user attr flag %d value %d", flag, flag ? *pv : -1);
  rc = MPI_Win_delete_attr(win, keyval);
  SAY("delete_attr rc %d, delete_fn calls %d value %d", rc, delete_calls, delete_value);
  MPI_Win_get_attr(win, keyval, &pv, &flag);
  SAY("after delete flag %d", flag);
  MPI_Win_set_attr(win, keyval, &v2);

  /* The window's group. */
  MPI_Group wgroup, cgroup;
  SAY("win_get_group rc %d", MPI_Win_get_group(win, &wgroup));
  MPI_Comm_group(MPI_COMM_WORLD, &cgroup);
  int cmp = -1, gsize = -1;
  MPI_Group_compare(wgroup, cgroup, &cmp);
  MPI_Group_size(wgroup, &gsize);
  SAY("group size %d ident %d", gsize, cmp == MPI_IDENT);
  MPI_Group_free(&wgroup);
  MPI_Group_free(&cgroup);

  /* Fortran handles (functions on Open MPI, macros on MPICH). */
  MPI_Fint fwin = MPI_Win_c2f(win);
  CHECK(MPI_Win_f2c(fwin) == win);

  /* Error handlers. */
  MPI_Errhandler eh, cur;
  SAY("win_create_errhandler rc %d", MPI_Win_create_errhandler(win_handler, &eh));
  SAY("win_set_errhandler rc %d", MPI_Win_set_errhandler(win, eh));
  SAY("win_get_errhandler rc %d", MPI_Win_get_errhandler(win, &cur));
  CHECK(cur == eh);
  MPI_Errhandler_free(&cur);
  rc = MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
  SAY("win_call_errhandler rc %d, handler calls %d class is ERR_OTHER %d", rc, handler_calls,
      handler_class == MPI_ERR_OTHER);
  int one = 1;
  MPI_Win_fence(0, win);
  rc = MPI_Put(&one, 1, MPI_INT, size + 5, 0, 1, MPI_INT, win); /* no such rank */
  SAY("put to an invalid rank: rc class is ERR_RANK %d, handler calls %d class is ERR_RANK %d",
      cov_class(rc) == MPI_ERR_RANK, handler_calls, handler_class == MPI_ERR_RANK);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);

  /* One fenced transfer on the created window. */
  int out[2] = {100 * rank + 1, 100 * rank + 2};
  MPI_Put(out, 2, MPI_INT, right, 3, 2, MPI_INT, win);
  MPI_Win_fence(0, win);
  SAY("create window got %d %d (from rank %d)", mem[3], mem[4], left);
  CHECK(mem[3] == 100 * left + 1 && mem[4] == 100 * left + 2);
  rc = MPI_Win_free(&win);
  SAY("win_free rc %d, delete_fn calls %d value %d", rc, delete_calls, delete_value);
  CHECK(win == MPI_WIN_NULL);
  SAY("free_keyval rc %d", MPI_Win_free_keyval(&keyval));
  CHECK(keyval == MPI_KEYVAL_INVALID);

  /* A window outlives the communicator it was created on. Its memory is a page of its own: MPICH
     4.0.2 over UCX natively puts to the wrong address when a window's memory shares a page with an
     earlier window's (here mem[] on the stack) -- UCX's registration cache. */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int* dm = NULL;
  if (posix_memalign((void**)&dm, 4096, 4096) != 0) return 1;
  dm[0] = dm[1] = -1;
  rc = MPI_Win_create(dm, 2 * sizeof(int), sizeof(int), MPI_INFO_NULL, dup, &win);
  MPI_Comm_free(&dup);
  MPI_Win_fence(0, win);
  MPI_Put(&rank, 1, MPI_INT, right, 1, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_get_group(win, &wgroup);
  MPI_Group_size(wgroup, &gsize);
  MPI_Group_free(&wgroup);
  SAY("window on a freed communicator: create rc %d, got %d %d, group size %d", rc, dm[0], dm[1], gsize);
  CHECK(dm[1] == left);
  SAY("win_free rc %d", MPI_Win_free(&win));
  free(dm);

  /* MPI_Win_allocate. */
  int* amem = NULL;
  SAY("win_allocate rc %d", MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                             &amem, &win));
  for (int i = 0; i < 4; ++i) amem[i] = 1000 * rank + i;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  SAY("allocate flavor is_allocate %d", flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  CHECK(flag && base == (void*)amem);
  int in[4] = {0, 0, 0, 0};
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Get(in, 4, MPI_INT, left, 0, 4, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  SAY("allocate window got %d %d %d %d", in[0], in[1], in[2], in[3]);
  for (int i = 0; i < 4; ++i) CHECK(in[i] == 1000 * left + i);
  SAY("win_free rc %d", MPI_Win_free(&win));

  /* MPI_Win_create_dynamic, attach, detach. */
  SAY("create_dynamic rc %d", MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  SAY("dynamic flavor is_dynamic %d", flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC);
  int* dmem = calloc(4, sizeof(int));
  SAY("win_attach rc %d", MPI_Win_attach(win, dmem, 4 * sizeof(int)));
  MPI_Aint addr, addrs[4];
  MPI_Get_address(dmem, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  int vals[4] = {rank + 1, rank + 2, rank + 3, rank + 4};
  MPI_Win_fence(0, win);
  MPI_Put(vals, 4, MPI_INT, right, addrs[right], 4, MPI_INT, win);
  MPI_Win_fence(0, win);
  SAY("dynamic window got %d %d %d %d", dmem[0], dmem[1], dmem[2], dmem[3]);
  for (int i = 0; i < 4; ++i) CHECK(dmem[i] == left + 1 + i);
  MPI_Barrier(MPI_COMM_WORLD);
  SAY("win_detach rc %d", MPI_Win_detach(win, dmem));
  SAY("win_free rc %d", MPI_Win_free(&win));
  free(dmem);
  return cov_finish();
}

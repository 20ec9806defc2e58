/* MPI calls made from inside the MPI (attribute delete callbacks, error handlers, user
   reduction operators) must go straight to PMPI: they are not counted again and see the
   thread inside one hooked call. Run with TSMPI_STATS=1 under tsmpi. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

typedef int (*depth_fn)(void);
typedef long long (*calls_fn)(const char*);
static depth_fn call_depth;
static calls_fn category_calls;
static int failures;
static int depth_in_callback = -1, depth_in_errhandler = -1, depth_in_op = -1;

static void nested_work(void) {
  int size;
  for (int i = 0; i < 5; ++i) MPI_Comm_size(MPI_COMM_WORLD, &size); /* AccessOnly */
}

static int delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm; (void)keyval; (void)value; (void)extra;
  depth_in_callback = call_depth();
  nested_work();
  return MPI_SUCCESS;
}

static void errhandler_fn(MPI_Comm* comm, int* code, ...) {
  (void)comm; (void)code;
  depth_in_errhandler = call_depth();
  nested_work();
}

static void sum_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  depth_in_op = call_depth();
  nested_work();
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

static long long total_calls(void) {
  static const char* categories[] = {"None", "AccessOnly", "UpdateRef", "CommIO", "Collective",
                                     "ReadList", "UpdateList", "Allocate", "Own", "Other"};
  long long sum = 0;
  for (int i = 0; i < 10; ++i) sum += category_calls(categories[i]);
  return sum;
}

static void expect(const char* what, long long got, long long want) {
  if (got != want) {
    printf("nesting: %s: got %lld, want %lld\n", what, got, want);
    ++failures;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  call_depth = (depth_fn)dlsym(RTLD_DEFAULT, "tsmpi_call_depth");
  category_calls = (calls_fn)dlsym(RTLD_DEFAULT, "tsmpi_category_calls");
  if (!call_depth || !category_calls) {
    printf("nesting: tsmpi is not preloaded\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  expect("depth outside MPI", call_depth(), 0);

  int keyval;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, NULL);
  long long access_before = category_calls("AccessOnly");
  long long update_before = category_calls("UpdateList");
  MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval); /* UpdateList; callback makes 5 nested calls */
  expect("depth in attribute callback", depth_in_callback, 1);
  expect("AccessOnly calls counted from the callback", category_calls("AccessOnly") - access_before, 0);
  expect("UpdateList calls", category_calls("UpdateList") - update_before, 1);

  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(errhandler_fn, &eh);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, eh);
  access_before = category_calls("AccessOnly");
  MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER); /* AccessOnly itself; handler nests 5 more */
  expect("depth in error handler", depth_in_errhandler, 1);
  expect("AccessOnly calls around the error handler", category_calls("AccessOnly") - access_before, 1);

  MPI_Op op;
  MPI_Op_create(sum_op, 1, &op);
  int one = 1, total = 0, size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  access_before = category_calls("AccessOnly");
  MPI_Allreduce(&one, &total, 1, MPI_INT, op, dup);
  expect("allreduce result", total, size);
  /* Where the operator runs depends on the algorithm (with MPI_Iallreduce sometimes on one rank
     only); wherever it ran it must have seen the thread inside one call. */
  int op_ran = depth_in_op != -1, ranks_where_op_ran = 0;
  if (op_ran) expect("depth in reduction operator", depth_in_op, 1);
  PMPI_Allreduce(&op_ran, &ranks_where_op_ran, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (size > 1) expect("ranks where the reduction operator ran > 0", ranks_where_op_ran > 0, 1);
  expect("AccessOnly calls from the operator", category_calls("AccessOnly") - access_before, 0);

  /* Collective I/O: ROMIO / OMPIO call MPI internally (communicator duplication, allreduce,
     two-phase exchanges); only the application's 4 calls may be counted. */
  int rank_for_io;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_for_io);
  long long calls_before = total_calls();
  MPI_File fh;
  int back = -1;
  int rc = MPI_File_open(MPI_COMM_WORLD, "nesting_io.tmp", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  expect("MPI_File_open", rc, MPI_SUCCESS);
  if (rc == MPI_SUCCESS) {
    int value = 1000 + rank_for_io;
    MPI_File_write_at_all(fh, rank_for_io * (MPI_Offset)sizeof(int), &value, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_read_at_all(fh, rank_for_io * (MPI_Offset)sizeof(int), &back, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    expect("calls counted around collective I/O", total_calls() - calls_before, 4);
    expect("data read back", back, 1000 + rank_for_io);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_for_io == 0) MPI_File_delete("nesting_io.tmp", MPI_INFO_NULL);
  }

  MPI_Op_free(&op);
  MPI_Comm_free(&dup);
  MPI_Errhandler_free(&eh);
  MPI_Comm_free_keyval(&keyval);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("nesting: rank %d: %s\n", rank, failures ? "FAILED" : "ok");
  MPI_Finalize();
  return failures ? 1 : 0;
}

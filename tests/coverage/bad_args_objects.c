/* Coverage: bad arguments to the calls on MPI objects get the MPI's error class through the
   error handler, never a crash inside tsmpi: communicators (MPI_COMM_NULL, NULL outputs, invalid
   attribute keys, no topology), groups (ranks out of range, repeated, MPI_GROUP_NULL),
   datatypes (negative counts and block lengths, MPI_DATATYPE_NULL, freeing a predefined type,
   packing into too small a buffer), info objects (NULL, empty, too long keys and values,
   MPI_INFO_NULL, a missing key, an index out of range), operations and error handlers
   (freeing predefined and null ones), error codes that do not exist. tsmpi's object lifetime
   checks the handles of exactly these calls.
   As in bad_args.c, every case runs twice: with MPI_ERRORS_RETURN, then with a counting handler
   on MPI_COMM_WORLD, MPI_COMM_SELF and a duplicate of MPI_COMM_WORLD (the communicator the
   communicator cases name), recording each call's class and where the handler was called. */
// ranks: 2
#include "bad_args.h"

static char long_key[MPI_MAX_INFO_KEY + 40], long_value[MPI_MAX_INFO_VAL + 40];

static void cases(MPI_Comm c, int rank, int size) {
  const int big = size + 3;
  int r = -1, flag = 0, n = -1, result = -1, coords[2], ranks[8] = {0};
  MPI_Comm null_comm = MPI_COMM_NULL;
  MPI_Group g = MPI_GROUP_NULL, ng = MPI_GROUP_NULL, null_group = MPI_GROUP_NULL;
  MPI_Datatype nt = MPI_DATATYPE_NULL, null_type = MPI_DATATYPE_NULL, predefined = MPI_INT;
  MPI_Info info = MPI_INFO_NULL, null_info = MPI_INFO_NULL, ni = MPI_INFO_NULL;
  MPI_Op null_op = MPI_OP_NULL, sum = MPI_SUM;
  MPI_Errhandler null_eh = MPI_ERRHANDLER_NULL;
  MPI_Aint lb, extent;
  MPI_Count cnt;
  void* attr = NULL;
  char name[MPI_MAX_OBJECT_NAME + 1], value[MPI_MAX_INFO_VAL + 1];
  int keyval = MPI_KEYVAL_INVALID, blocklens[2] = {1, -1}, displs[2] = {0, 1};
  MPI_Aint adispls[2] = {0, 4};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  (void)rank;

  SAY(" communicators");
  CASE("comm_rank MPI_COMM_NULL", MPI_Comm_rank(MPI_COMM_NULL, &r));
  CASE("comm_size MPI_COMM_NULL", MPI_Comm_size(MPI_COMM_NULL, &r));
  CASE("comm_rank NULL rank", MPI_Comm_rank(c, NULL));
  CASE("comm_group MPI_COMM_NULL", MPI_Comm_group(MPI_COMM_NULL, &g));
  CASE("comm_group NULL group", MPI_Comm_group(c, NULL));
  CASE("comm_compare MPI_COMM_NULL", MPI_Comm_compare(c, MPI_COMM_NULL, &result));
  CASE("comm_test_inter MPI_COMM_NULL", MPI_Comm_test_inter(MPI_COMM_NULL, &flag));
  CASE("comm_free MPI_COMM_NULL", MPI_Comm_free(&null_comm));
  MPI_Comm world = MPI_COMM_WORLD, self = MPI_COMM_SELF;
  CASE("comm_free MPI_COMM_WORLD", MPI_Comm_free(&world));
  CASE("comm_free MPI_COMM_SELF", MPI_Comm_free(&self));
  CASE("comm_set_info MPI_COMM_NULL", MPI_Comm_set_info(MPI_COMM_NULL, MPI_INFO_NULL));
  CASE("comm_get_info NULL info", MPI_Comm_get_info(c, NULL));
  CASE("comm_set_name MPI_COMM_NULL", MPI_Comm_set_name(MPI_COMM_NULL, "x"));
  CASE("comm_get_name MPI_COMM_NULL", MPI_Comm_get_name(MPI_COMM_NULL, name, &n));
  CASE("comm_set_errhandler MPI_ERRHANDLER_NULL", MPI_Comm_set_errhandler(c, MPI_ERRHANDLER_NULL));
  CASE("comm_get_attr MPI_KEYVAL_INVALID", MPI_Comm_get_attr(c, MPI_KEYVAL_INVALID, &attr, &flag));
  CASE("comm_set_attr MPI_KEYVAL_INVALID", MPI_Comm_set_attr(c, MPI_KEYVAL_INVALID, attr));
  CASE("comm_delete_attr MPI_KEYVAL_INVALID", MPI_Comm_delete_attr(c, MPI_KEYVAL_INVALID));
  CASE("comm_free_keyval MPI_KEYVAL_INVALID", MPI_Comm_free_keyval(&keyval));
  CASE("comm_call_errhandler MPI_COMM_NULL", MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER));
  CASE("cart_coords without topology", MPI_Cart_coords(c, 0, 2, coords));
  CASE("cart_rank without topology", MPI_Cart_rank(c, coords, &r));
  CASE("graph_neighbors_count without topology", MPI_Graph_neighbors_count(c, 0, &n));
  CASE("topo_test MPI_COMM_NULL", MPI_Topo_test(MPI_COMM_NULL, &n));
  CASE("dims_create ndims -1", MPI_Dims_create(4, -1, coords));
  CASE("dims_create nnodes -1", MPI_Dims_create(-1, 2, coords));

  SAY(" groups");
  MPI_Comm_group(c, &g);
  ranks[0] = big;
  CASE("group_incl rank size+3", MPI_Group_incl(g, 1, ranks, &ng));
  ranks[0] = -1;
  CASE("group_incl rank -1", MPI_Group_incl(g, 1, ranks, &ng));
  ranks[0] = 0; /* (a rank given twice: neither MPI detects it) */
  CASE("group_incl n -1", MPI_Group_incl(g, -1, ranks, &ng));
  CASE("group_incl n size+3", MPI_Group_incl(g, big, ranks, &ng));
  ranks[0] = big;
  CASE("group_excl rank size+3", MPI_Group_excl(g, 1, ranks, &ng));
  int range[1][3] = {{0, big, 1}};
  CASE("group_range_incl last size+3", MPI_Group_range_incl(g, 1, range, &ng));
  range[0][1] = 1, range[0][2] = 0;
  CASE("group_range_incl stride 0", MPI_Group_range_incl(g, 1, range, &ng));
  ranks[0] = big;
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not check it: a segmentation fault */
  CASE("group_translate_ranks rank size+3", MPI_Group_translate_ranks(g, 1, ranks, g, ranks + 1));
#endif
  CASE("group_rank MPI_GROUP_NULL", MPI_Group_rank(MPI_GROUP_NULL, &r));
  CASE("group_size MPI_GROUP_NULL", MPI_Group_size(MPI_GROUP_NULL, &n));
  CASE("group_union MPI_GROUP_NULL", MPI_Group_union(g, MPI_GROUP_NULL, &ng));
  CASE("group_compare MPI_GROUP_NULL", MPI_Group_compare(MPI_GROUP_NULL, g, &result));
  CASE("group_incl NULL newgroup", MPI_Group_incl(g, 0, ranks, NULL));
  CASE("group_free MPI_GROUP_NULL", MPI_Group_free(&null_group));
  MPI_Group_free(&g);

  SAY(" datatypes");
  CASE("type_contiguous count -1", MPI_Type_contiguous(-1, MPI_INT, &nt));
  CASE("type_contiguous MPI_DATATYPE_NULL", MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &nt));
  CASE("type_contiguous NULL newtype", MPI_Type_contiguous(2, MPI_INT, NULL));
  CASE("type_vector count -1", MPI_Type_vector(-1, 1, 2, MPI_INT, &nt));
  CASE("type_vector blocklength -1", MPI_Type_vector(2, -1, 2, MPI_INT, &nt));
  CASE("type_indexed blocklength -1", MPI_Type_indexed(2, blocklens, displs, MPI_INT, &nt));
  CASE("type_create_struct count -1", MPI_Type_create_struct(-1, blocklens, adispls, types, &nt));
  CASE("type_create_struct MPI_DATATYPE_NULL", MPI_Type_create_struct(1, displs + 1, adispls, &null_type, &nt));
  CASE("type_create_resized MPI_DATATYPE_NULL", MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 8, &nt));
  CASE("type_dup MPI_DATATYPE_NULL", MPI_Type_dup(MPI_DATATYPE_NULL, &nt));
  CASE("type_commit MPI_DATATYPE_NULL", MPI_Type_commit(&null_type));
  CASE("type_free MPI_DATATYPE_NULL", MPI_Type_free(&null_type));
  CASE("type_free MPI_INT", MPI_Type_free(&predefined));
  CASE("type_size MPI_DATATYPE_NULL", MPI_Type_size(MPI_DATATYPE_NULL, &n));
  CASE("type_size_x MPI_DATATYPE_NULL", MPI_Type_size_x(MPI_DATATYPE_NULL, &cnt));
  CASE("type_get_extent MPI_DATATYPE_NULL", MPI_Type_get_extent(MPI_DATATYPE_NULL, &lb, &extent));
  CASE("type_set_name MPI_DATATYPE_NULL", MPI_Type_set_name(MPI_DATATYPE_NULL, "x"));
  int ni_, na_, nd_, comb_;
  MPI_Datatype got[1];
  CASE("type_get_envelope MPI_DATATYPE_NULL", MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni_, &na_, &nd_, &comb_));
  CASE("type_get_contents MPI_INT", MPI_Type_get_contents(MPI_INT, 0, 0, 1, NULL, NULL, got));
  CASE("type_get_attr MPI_KEYVAL_INVALID", MPI_Type_get_attr(MPI_INT, MPI_KEYVAL_INVALID, &attr, &flag));
  int in[4] = {1, 2, 3, 4}, pos = 0;
  char packed[8];
#ifndef MPICH /* MPICH 4.0.2 does not detect it: it writes past the buffer */
  CASE("pack outsize too small", MPI_Pack(in, 4, MPI_INT, packed, (int)sizeof packed, &pos, c));
#endif
  pos = 0;
  CASE("pack count -1", MPI_Pack(in, -1, MPI_INT, packed, (int)sizeof packed, &pos, c));
  pos = 0;
  CASE("unpack MPI_DATATYPE_NULL", MPI_Unpack(packed, (int)sizeof packed, &pos, in, 1, MPI_DATATYPE_NULL, c));
#ifndef OPEN_MPI /* Open MPI 4.1.4 does not detect it */
  CASE("pack_size count -1", MPI_Pack_size(-1, MPI_INT, c, &n));
#endif
  CASE("pack_size MPI_COMM_NULL", MPI_Pack_size(1, MPI_INT, MPI_COMM_NULL, &n));

  SAY(" info");
  MPI_Info_create(&info);
  MPI_Info_set(info, "present", "yes");
  CASE("info_set NULL key", MPI_Info_set(info, NULL, "v"));
  CASE("info_set empty key", MPI_Info_set(info, "", "v"));
  CASE("info_set key too long", MPI_Info_set(info, long_key, "v"));
  CASE("info_set NULL value", MPI_Info_set(info, "k", NULL));
  CASE("info_set value too long", MPI_Info_set(info, "k", long_value));
  CASE("info_set MPI_INFO_NULL", MPI_Info_set(MPI_INFO_NULL, "k", "v"));
  CASE("info_get MPI_INFO_NULL", MPI_Info_get(MPI_INFO_NULL, "present", MPI_MAX_INFO_VAL, value, &flag));
  CASE("info_get valuelen -1", MPI_Info_get(info, "present", -1, value, &flag));
  CASE("info_get key too long", MPI_Info_get(info, long_key, MPI_MAX_INFO_VAL, value, &flag));
  CASE("info_get NULL key", MPI_Info_get(info, NULL, MPI_MAX_INFO_VAL, value, &flag));
  CASE("info_get_valuelen MPI_INFO_NULL", MPI_Info_get_valuelen(MPI_INFO_NULL, "present", &n, &flag));
  CASE("info_delete missing key", MPI_Info_delete(info, "absent"));
  CASE("info_delete MPI_INFO_NULL", MPI_Info_delete(MPI_INFO_NULL, "present"));
  CASE("info_get_nkeys MPI_INFO_NULL", MPI_Info_get_nkeys(MPI_INFO_NULL, &n));
  CASE("info_get_nthkey n 5", MPI_Info_get_nthkey(info, 5, name));
  CASE("info_get_nthkey n -1", MPI_Info_get_nthkey(info, -1, name));
  CASE("info_dup MPI_INFO_NULL", MPI_Info_dup(MPI_INFO_NULL, &ni));
  CASE("info_create NULL", MPI_Info_create(NULL));
  CASE("info_free MPI_INFO_NULL", MPI_Info_free(&null_info));
  n = -1;
  MPI_Info_get_nkeys(info, &n);
  SAY("  info keeps its %d key", n);
  MPI_Info_free(&info);

  SAY(" operations, error handlers, error codes");
  CASE("op_free MPI_SUM", MPI_Op_free(&sum));
  CASE("op_free MPI_OP_NULL", MPI_Op_free(&null_op));
  CASE("op_commutative MPI_OP_NULL", MPI_Op_commutative(MPI_OP_NULL, &flag));
  CASE("errhandler_free MPI_ERRHANDLER_NULL", MPI_Errhandler_free(&null_eh));
#ifndef MPICH /* MPICH 4.0.2 does not detect it */
  CASE("error_class of code -5", MPI_Error_class(-5, &n));
#endif
#ifndef MPICH /* MPICH 4.0.2 does not check it: a segmentation fault */
  CASE("error_string of code -5", MPI_Error_string(-5, name, &n));
#endif
#ifndef MPICH /* MPICH 4.0.2 does not detect it */
  CASE("add_error_code of a class never added", MPI_Add_error_code(MPI_ERR_LASTCODE + 1000, &n));
#endif
  CASE("add_error_string of a code never added", MPI_Add_error_string(MPI_ERR_LASTCODE + 1000, "x"));
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "bad_args_objects");
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  memset(long_key, 'k', sizeof long_key - 1);
  memset(long_value, 'v', sizeof long_value - 1);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_dup(MPI_COMM_WORLD, &tested);
  for (int pass = 0; pass < 2; ++pass) {
    begin_pass(pass, eh);
    cases(tested, rank, size);
    end_pass();
    /* The objects still work: the predefined ones the cases tried to free, a new datatype. */
    int v = rank + 1, sum = -1, tsize = -1;
    MPI_Datatype t;
    int rc = MPI_Type_contiguous(2, MPI_INT, &t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_size(t, &tsize);
    if (rc == MPI_SUCCESS) rc = MPI_Type_free(&t);
    if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, tested);
    SAY("pass %d: afterwards rc %d type size %d sum %d", pass + 1, rc, tsize, sum);
    CHECK(rc == MPI_SUCCESS && tsize == 8 && sum == size * (size + 1) / 2);
  }
  MPI_Comm_free(&tested);
  MPI_Errhandler_free(&eh);
  return cov_finish();
}

/* tsmpi's memory must follow live state, not history: a long run with ever-new tags, objects
   created and freed, and threads started and ended. Rank 1 sends TAGS zero-byte messages, each
   with a new tag; rank 0 receives each with MPI_Iprobe on its exact (source, tag) and then
   MPI_Probe on (source, *) -- two pattern classes, so lock2d keeps (s,t) entries in its map --
   followed by MPI_Recv. Both ranks then create and free OBJECTS objects (infos, datatypes,
   groups, communicators), then start THREADS threads over the run, at most 8 alive at a time,
   each probing and receiving a message and creating and freeing objects before it ends.
   VmRSS is read after the first tenth of each phase and at its end; the growth over the
   remaining nine tenths must stay below LIMIT_MB (the checks fail otherwise). Messages are
   received in step with the sender (a barrier every 1024), so the MPI's unexpected messages do
   not count. Run it with MALLOC_ARENA_MAX=2: glibc gives threads arenas of their own, and
   what they keep after their threads end is glibc's, not tsmpi's.

   usage: memory_bounded TAGS OBJECTS THREADS LIMIT_MB    (2 ranks) */
#define _GNU_SOURCE
#include "test_util.h"

static int rank, peer;

static long rss_kb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

/* One message on a new tag: rank 1 sends, rank 0 probes it exactly, then by (source, *). */
static void message(int tag, MPI_Comm comm) {
  if (rank == 1) {
    MPI_Send(NULL, 0, MPI_BYTE, 0, tag, comm);
    return;
  }
  int flag = 0;
  MPI_Status st;
  while (!flag) MPI_Iprobe(1, tag, comm, &flag, &st);
  MPI_Probe(1, MPI_ANY_TAG, comm, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  MPI_Recv(NULL, 0, MPI_BYTE, 1, st.MPI_TAG, comm, &st);
  CHECK(st.MPI_TAG == tag && count == 0, "message with tag %d arrived as tag %d, %d bytes", tag, st.MPI_TAG, count);
}

static void objects(int n) {
  for (int i = 0; i < n; ++i) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "key", "value");
    MPI_Info_free(&info);
    MPI_Datatype t;
    MPI_Type_contiguous(i % 7 + 1, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&t);
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int me = rank;
    MPI_Group_incl(world, 1, &me, &g);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
  }
}

/* Communicators are collective: both ranks make the same number. */
static void communicators(int n, MPI_Comm parent) {
  for (int i = 0; i < n; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(parent, &c);
    message(1000000 + i, c);
    MPI_Comm_free(&c);
  }
}

typedef struct {
  int index;
  MPI_Comm comm;
} Job;

static void* thread_main(void* arg) {
  Job* j = arg;
  message(2000000 + j->index, j->comm);
  objects(4);
  return NULL;
}

static long phase_growth(const char* what, long base, long end) {
  long grown = end - base;
  if (rank == 0 || rank == 1)
    printf("memory_bounded: rank %d: %s: VmRSS %ld kB after the first tenth, %ld kB at the end (%+ld kB)\n", rank, what,
           base, end, grown);
  return grown;
}

int main(int argc, char** argv) {
  test_init_pair(&argc, &argv, "memory_bounded", &rank, &peer);
  if (argc != 5) {
    if (rank == 0) printf("usage: memory_bounded TAGS OBJECTS THREADS LIMIT_MB\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int tags = atoi(argv[1]), n_objects = atoi(argv[2]), threads = atoi(argv[3]);
  long limit_kb = atol(argv[4]) * 1024;

  long base = 0;
  for (int t = 0; t < tags; ++t) {
    if (t == tags / 10) base = rss_kb();
    message(t, MPI_COMM_WORLD);
    /* Keep the sender from running ahead: messages waiting to be received are live state. */
    if (t % 1024 == 1023) MPI_Barrier(MPI_COMM_WORLD);
  }
  long grown = phase_growth("distinct tags", base, rss_kb());
  CHECK(grown < limit_kb, "%d distinct tags grew VmRSS by %ld kB", tags, grown);

  MPI_Barrier(MPI_COMM_WORLD);
  objects(n_objects / 10);
  communicators(n_objects / 1000, MPI_COMM_WORLD);
  base = rss_kb();
  objects(n_objects - n_objects / 10);
  communicators(n_objects / 100 - n_objects / 1000, MPI_COMM_WORLD);
  grown = phase_growth("objects created and freed", base, rss_kb());
  CHECK(grown < limit_kb, "%d objects grew VmRSS by %ld kB", n_objects, grown);

  /* Threads, 8 at a time, each on its own duplicate of MPI_COMM_WORLD (communicators made and
     freed are the objects phase's). */
  MPI_Barrier(MPI_COMM_WORLD);
  enum { kBatch = 8 };
  Job jobs[kBatch];
  pthread_t tids[kBatch];
  for (int i = 0; i < kBatch; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &jobs[i].comm);
  for (int done = 0; done < threads; done += kBatch) {
    if (done == ((threads / 10) / kBatch) * kBatch) base = rss_kb();
    int n = threads - done < kBatch ? threads - done : kBatch;
    for (int i = 0; i < n; ++i) jobs[i].index = done + i;
    for (int i = 0; i < n; ++i) pthread_create(&tids[i], NULL, thread_main, &jobs[i]);
    for (int i = 0; i < n; ++i) pthread_join(tids[i], NULL);
  }
  for (int i = 0; i < kBatch; ++i) MPI_Comm_free(&jobs[i].comm);
  grown = phase_growth("threads started and ended", base, rss_kb());
  CHECK(grown < limit_kb, "%d threads grew VmRSS by %ld kB", threads, grown);
  return test_finish();
}

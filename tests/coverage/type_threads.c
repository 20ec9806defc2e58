/* Coverage: datatypes under MPI_THREAD_MULTIPLE. Two threads per rank each build, commit, use
   and free derived types built on types the main thread shares with them, decode a shared type
   and free the references MPI_Type_get_contents hands out, pack and unpack, and exchange
   messages with the same thread of the other rank (its own tag), and receive at once into
   disjoint bytes of one array (interleaved, or side by side through displaced types). Every
   value received is
   checked; the counts recorded do not depend on the interleaving. */
// ranks: 2
#include <pthread.h>
#include <string.h>

#include "coverage.h"

#define ROUNDS 60
static int rank, peer;
static MPI_Datatype base;   /* 2 ints, resized to an extent of 3 ints */
static MPI_Datatype shared; /* a vector of base, decoded by both threads */

struct job {
  int id, sent, received, bad, decoded, packed, errors;
};

static MPI_Datatype make(int kind, int round) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int n = 1 + round % 3;
  switch (kind % 5) {
    case 0: MPI_Type_contiguous(n, base, &t); break;
    case 1: MPI_Type_vector(n, 1, 2, base, &t); break;
    case 2: {
      int bl[2] = {1, n}, di[2] = {0, 2};
      MPI_Type_indexed(2, bl, di, base, &t);
      break;
    }
    case 3: MPI_Type_create_hvector(n, 1, 4 * (MPI_Aint)sizeof(int), base, &t); break;
    default: {
      int bl[2] = {1, n};
      MPI_Aint di[2] = {0, 6 * (MPI_Aint)sizeof(int)};
      MPI_Datatype ty[2] = {MPI_INT, base};
      MPI_Type_create_struct(2, bl, di, ty, &t);
      break;
    }
  }
  return t;
}

static void* work(void* arg) {
  struct job* j = arg;
  int src[256], dst[256], expect[256];
  for (int round = 0; round < ROUNDS; ++round) {
    MPI_Datatype t = make(j->id + round, round), d;
    MPI_Type_dup(t, &d);
    MPI_Type_free(&t); /* d keeps what it needs */
    if (MPI_Type_commit(&d) != MPI_SUCCESS) ++j->errors;
    int size = 0;
    MPI_Type_size(d, &size);
    int n = size / (int)sizeof(int);
    for (int i = 0; i < 256; ++i) src[i] = rank * 100000 + j->id * 10000 + round * 100 + i, dst[i] = -1;
    /* what the peer's ints look like: the same type's layout applied to its values */
    MPI_Request r;
    if (MPI_Irecv(dst, n, MPI_INT, peer, j->id, MPI_COMM_WORLD, &r) != MPI_SUCCESS) ++j->errors;
    if (MPI_Send(src, 1, d, peer, j->id, MPI_COMM_WORLD) != MPI_SUCCESS) ++j->errors;
    ++j->sent;
    /* the layout, by packing our own values with the type */
    int pos = 0;
    char packed[1024];
    MPI_Pack(src, 1, d, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    int mine[256], p2 = 0;
    MPI_Unpack(packed, pos, &p2, mine, n, MPI_INT, MPI_COMM_WORLD);
    ++j->packed;
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    ++j->received;
    for (int i = 0; i < n; ++i) expect[i] = mine[i] - rank * 100000 + peer * 100000;
    if (memcmp(expect, dst, (size_t)n * sizeof(int)) != 0) ++j->bad;
    MPI_Type_free(&d);

    /* decode the shared type; free the reference to base it returns */
    int ni, na, nd, comb, ints[4];
    MPI_Aint addrs[4];
    MPI_Datatype types[2];
    MPI_Type_get_envelope(shared, &ni, &na, &nd, &comb);
    MPI_Type_get_contents(shared, ni, na, nd, ints, addrs, types);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(types[0], &lb, &extent);
    if (comb == MPI_COMBINER_VECTOR && extent == 3 * (MPI_Aint)sizeof(int)) ++j->decoded;
    if (MPI_Type_free(&types[0]) != MPI_SUCCESS) ++j->errors;
  }
  return NULL;
}

/* Two threads receive into one array at once, into bytes the other does not touch: interleaved
   (vectors whose spans overlap) or side by side through types displaced from the same address. */
static int shared_in[64];
struct part {
  MPI_Datatype t;
  int tag, rc;
};
static void* receive_part(void* arg) {
  struct part* p = arg;
  p->rc = MPI_Recv(shared_in, 1, p->t, peer, p->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}
static void interleaved(const char* what, MPI_Datatype a, MPI_Datatype b) {
  MPI_Type_commit(&a);
  MPI_Type_commit(&b);
  int out[64];
  for (int i = 0; i < 64; ++i) out[i] = 1000 * rank + i, shared_in[i] = -1;
  MPI_Request r[2];
  MPI_Isend(out, 1, a, peer, 20, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 1, b, peer, 21, MPI_COMM_WORLD, &r[1]);
  struct part parts[2] = {{a, 20, -1}, {b, 21, -1}};
  pthread_t th[2];
  for (int i = 0; i < 2; ++i) pthread_create(&th[i], NULL, receive_part, &parts[i]);
  for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  int wrong = 0, untouched = 0;
  for (int i = 0; i < 64; ++i) {
    if (shared_in[i] == -1) ++untouched;
    else if (shared_in[i] != 1000 * peer + i) ++wrong;
  }
  SAY("%s: rc %d %d, wrong %d, untouched %d", what, parts[0].rc, parts[1].rc, wrong, untouched);
  MPI_Type_free(&a);
  MPI_Type_free(&b);
}

int main(int argc, char** argv) {
  rank = cov_init(&argc, &argv, "type_threads");
  peer = 1 - rank;
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_INT, &two);
  MPI_Type_create_resized(two, 0, 3 * sizeof(int), &base);
  MPI_Type_free(&two);
  MPI_Type_vector(2, 1, 2, base, &shared);
  struct job jobs[2];
  pthread_t th[2];
  for (int i = 0; i < 2; ++i) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].id = i;
    pthread_create(&th[i], NULL, work, &jobs[i]);
  }
  for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; ++i)
    SAY("thread %d: sent %d received %d wrong %d decoded %d packed %d errors %d", i, jobs[i].sent, jobs[i].received,
        jobs[i].bad, jobs[i].decoded, jobs[i].packed, jobs[i].errors);
  /* the shared types are still whole */
  MPI_Type_commit(&shared);
  int src[16], dst[16];
  for (int i = 0; i < 16; ++i) src[i] = 10 * rank + i, dst[i] = -1;
  MPI_Sendrecv(src, 1, shared, peer, 9, dst, 4, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  SAY("shared vector after the threads: %d %d %d %d", dst[0], dst[1], dst[2], dst[3]);
  SAY("frees rc %d %d", MPI_Type_free(&shared), MPI_Type_free(&base));

  {
    MPI_Datatype even, odd;
    MPI_Type_vector(32, 1, 2, MPI_INT, &even);
    MPI_Aint d[1] = {sizeof(int)};
    int bl[1] = {1};
    MPI_Datatype sub[1] = {even};
    MPI_Type_create_struct(1, bl, d, sub, &odd); /* the odd ints: the same vector, one int on */
    interleaved("even and odd ints", even, odd);
    MPI_Datatype low, high;
    MPI_Aint dl[1] = {0}, dh[1] = {32 * sizeof(int)};
    int b32[1] = {32};
    MPI_Type_create_hindexed(1, b32, dl, MPI_INT, &low);
    MPI_Type_create_hindexed(1, b32, dh, MPI_INT, &high); /* no holes, true lb 128 bytes */
    interleaved("lower and upper halves from one address", low, high);
  }
  return cov_finish();
}

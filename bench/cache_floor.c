/* cache_floor: the hardware floor for moving a small message between two cores.
   usage: cache_floor ITERATIONS
   Two threads, pinned (pthread_setaffinity_np) to CPU 0 and CPU 1, pass 8-byte payloads
   through cache lines written with release stores and read with acquire loads; no MPI, no
   system calls on the timed path, waiting by spinning (with a pause instruction on x86).
   Whatever a shared-memory MPI transport does, between processes (their shared-memory
   segment moves the same cache lines from core to core) or between threads as ranks
   (MPIX_Threadcomm, bench/threadcomm.c), a message it moves from one core to another is at
   least one such cache-line transfer: these numbers are the latency and message rate that
   neither can beat on this machine; the distance of bench/threadcomm.c's numbers from them
   is the software's cost (matching, queues, requests, locks).
   Modes (every measurement: 5 blocks after a warm-up block, the median block reported,
   CLOCK_MONOTONIC):
     pingpong thread A writes the payload and a sequence number into one 64-byte-aligned cache
              line (the sequence with a release store); thread B spins until it sees the
              sequence, checks the payload and writes an answer into a second cache line, on
              which A spins in turn. ITERATIONS round trips per block.
              cache_floor mode=pingpong iterations=N latency_us=X
              latency_us: half the round trip.
     stream   a single-producer single-consumer ring of 256 slots, one 64-byte-aligned cache
              line each holding a payload and a sequence word (a "fast box" ring): the producer
              waits until its slot is free (sequence 0), writes the payload, then publishes
              message number + 1 with a release store; the consumer waits for that number with
              acquire loads, reads and checks the payload, and frees the slot (release store of
              0). ITERATIONS messages per block.
              cache_floor mode=stream slots=256 messages=N rate=R errors=E
              rate: messages per second.
   Data: every payload (a value that depends on the message's number, so a stale or misplaced
   one fails) is checked at the receiving side; errors counts mismatches over both modes and
   the program exits with status 1 when any arrived wrong. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 5
#define SLOTS 256
#define LINE 64

#if defined(__x86_64__) || defined(__i386__)
#define PAUSE() __builtin_ia32_pause()
#else
#define PAUSE() ((void)0)
#endif

/* One cache line: a sequence word and an 8-byte payload. */
struct line {
  _Alignas(LINE) _Atomic uint64_t seq;
  uint64_t payload;
};

static struct line ping, pong;     /* pingpong: A -> B, B -> A */
static struct line ring[SLOTS];    /* stream */
static long iterations;
static atomic_long errors_total;
static double block_time[BLOCKS];  /* seconds, written by thread A */

/* Spinning barrier between the two threads (a futex wake would cost more than a block's
   noise); sense-reversing. */
static _Alignas(LINE) atomic_int barrier_count;
static _Alignas(LINE) atomic_int barrier_sense;

static void barrier(int* local_sense) {
  *local_sense = !*local_sense;
  if (atomic_fetch_add(&barrier_count, 1) == 1) {
    atomic_store_explicit(&barrier_count, 0, memory_order_relaxed);
    atomic_store(&barrier_sense, *local_sense);
  } else {
    while (atomic_load(&barrier_sense) != *local_sense) PAUSE();
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median_block(void) {
  double t[BLOCKS];
  memcpy(t, block_time, sizeof t);
  qsort(t, BLOCKS, sizeof t[0], cmp);
  return t[BLOCKS / 2];
}

/* The payload of message (or round trip) i, and of its answer. */
static uint64_t value(uint64_t i) { return i * 0x9e3779b97f4a7c15u + 0x0123456789abcdefu; }
static uint64_t answer(uint64_t i) { return ~value(i) ^ (i << 17); }

/* ---------------------------------------------------------------- ping-pong */
static void pingpong(int role, int* sense) {
  long bad = 0;
  uint64_t seq = 0;  /* continues over the blocks: the lines never need a reset */
  for (int b = -1; b < BLOCKS; ++b) {
    barrier(sense);
    double t0 = now();
    if (role == 0) {
      for (long k = 0; k < iterations; ++k) {
        ++seq;
        ping.payload = value(seq);
        atomic_store_explicit(&ping.seq, seq, memory_order_release);
        while (atomic_load_explicit(&pong.seq, memory_order_acquire) != seq) PAUSE();
        bad += pong.payload != answer(seq);
      }
      if (b >= 0) block_time[b] = now() - t0;
    } else {
      for (long k = 0; k < iterations; ++k) {
        ++seq;
        while (atomic_load_explicit(&ping.seq, memory_order_acquire) != seq) PAUSE();
        bad += ping.payload != value(seq);
        pong.payload = answer(seq);
        atomic_store_explicit(&pong.seq, seq, memory_order_release);
      }
    }
  }
  atomic_fetch_add(&errors_total, bad);
  barrier(sense);
  if (role == 0) {
    printf("cache_floor mode=pingpong iterations=%ld latency_us=%.4f\n", iterations,
           median_block() / iterations / 2 * 1e6);
    fflush(stdout);
  }
}

/* ---------------------------------------------------------------- stream */
static long stream_errors;

static void stream(int role, int* sense) {
  long bad = 0;
  uint64_t m = 0;  /* message number, continues over the blocks */
  for (int b = -1; b < BLOCKS; ++b) {
    barrier(sense);
    double t0 = now();
    if (role == 0) {  /* producer */
      for (long k = 0; k < iterations; ++k, ++m) {
        struct line* s = &ring[m % SLOTS];
        while (atomic_load_explicit(&s->seq, memory_order_acquire) != 0) PAUSE();
        s->payload = value(m);
        atomic_store_explicit(&s->seq, m + 1, memory_order_release);
      }
    } else {  /* consumer */
      for (long k = 0; k < iterations; ++k, ++m) {
        struct line* s = &ring[m % SLOTS];
        while (atomic_load_explicit(&s->seq, memory_order_acquire) != m + 1) PAUSE();
        bad += s->payload != value(m);
        atomic_store_explicit(&s->seq, 0, memory_order_release);
      }
    }
    barrier(sense);  /* the block ends when the consumer has the last message */
    if (role == 0 && b >= 0) block_time[b] = now() - t0;
  }
  if (role == 1) {
    stream_errors = bad;
    atomic_fetch_add(&errors_total, bad);
  }
  barrier(sense);
  if (role == 0) {
    printf("cache_floor mode=stream slots=%d messages=%ld rate=%.0f errors=%ld\n", SLOTS, iterations,
           iterations / median_block(), stream_errors);
    fflush(stdout);
  }
}

static void* worker(void* arg) {
  int role = (int)(long)arg, sense = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(role, &set);
  int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (rc != 0)
    fprintf(stderr, "cache_floor: warning: cannot pin thread %d to CPU %d (%s); running unpinned\n", role,
            role, strerror(rc));
  pingpong(role, &sense);
  stream(role, &sense);
  return NULL;
}

int main(int argc, char** argv) {
  char* end = NULL;
  if (argc != 2 || (iterations = strtol(argv[1], &end, 10)) <= 0 || *end != '\0') {
    fprintf(stderr, "usage: cache_floor ITERATIONS\n");
    return 2;
  }
  pthread_t tid[2];
  for (int t = 0; t < 2; ++t)
    if (pthread_create(&tid[t], NULL, worker, (void*)(long)t) != 0) {
      fprintf(stderr, "cache_floor: pthread_create failed\n");
      return 2;
    }
  for (int t = 0; t < 2; ++t) pthread_join(tid[t], NULL);
  long errors = atomic_load(&errors_total);
  if (errors != 0) {
    fprintf(stderr, "cache_floor: %ld payloads arrived wrong\n", errors);
    return 1;
  }
  return 0;
}

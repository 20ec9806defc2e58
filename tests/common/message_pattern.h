/* The data the hybrid test programs send (tests/ranks, tests/asp): element i of a message from
   a to b with tag t, sequence s, so every received byte can be checked. */
#ifndef TSMPI_TEST_MESSAGE_PATTERN_H
#define TSMPI_TEST_MESSAGE_PATTERN_H

static inline int pattern_val(int a, int b, int t, int s, int i) {
  return (int)(((unsigned)a * 1000003u) ^ ((unsigned)b * 7919u) ^ ((unsigned)t * 131u) ^
               ((unsigned)s * 524287u) ^ ((unsigned)i * 2654435761u));
}
static inline void pattern_fill(int* buf, int n, int a, int b, int t, int s) {
  for (int i = 0; i < n; ++i) buf[i] = pattern_val(a, b, t, s, i);
}
/* Index of the first wrong element, or -1. */
static inline int pattern_verify(const int* buf, int n, int a, int b, int t, int s) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != pattern_val(a, b, t, s, i)) return i;
  return -1;
}
#endif

/* tsmpi's own C interface: introspection for tests and tools. Programs need not use it; an
   unmodified binary gets every protection through LD_PRELOAD alone. Look these up with
   dlsym(RTLD_DEFAULT, ...) so the program still runs without tsmpi. */
#ifndef TSMPI_H
#define TSMPI_H
#ifdef __cplusplus
extern "C" {
#endif

/* "tsmpi <version> (<mpi>)". */
const char* tsmpi_version(void);
/* How many hooked MPI calls the calling thread is inside (0 outside MPI). */
int tsmpi_call_depth(void);
/* Calls counted so far in a category ("CommIO", "AccessOnly", ...) over all threads of this
   process when TSMPI_STATS=1; -1 for an unknown category name. */
long long tsmpi_category_calls(const char* category);

#ifdef __cplusplus
}
#endif
#endif

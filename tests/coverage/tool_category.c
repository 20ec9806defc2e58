/* Coverage: MPI tool information interface categories (MPI_T_category_get_num/get_info/
   get_index/get_cvars/get_pvars/get_categories/changed, and MPICH's get_num_events/get_events)
   and MPICH's MPI-4 events and event sources. Every category is described and its lists are
   checked against the numbers of variables; nothing that depends on the installation's set of
   variables is printed. MPICH 4.0.2 as built here has no event and no event source: the event
   functions that need neither are called with the arguments a tool would use when looking for
   some (and get the errors the MPI gives); the others (MPI_T_event_handle_free/get_info,
   callback_get_info, register_callback, set_dropped_handler, read, copy, get_source,
   get_timestamp) need an event registration or instance, cannot be called with a valid one,
   and crash natively with a null one, so they are not called. */
// ranks: 2
#include <pthread.h>
#include <string.h>

#include "coverage.h"

static const char* terr(int rc) {
  static char other[32];
  if (rc == MPI_SUCCESS) return "MPI_SUCCESS";
  if (rc == MPI_T_ERR_INVALID_INDEX) return "MPI_T_ERR_INVALID_INDEX";
  if (rc == MPI_T_ERR_INVALID_NAME) return "MPI_T_ERR_INVALID_NAME";
  if (rc == MPI_T_ERR_INVALID_HANDLE) return "MPI_T_ERR_INVALID_HANDLE";
  if (rc == MPI_T_ERR_INVALID) return "MPI_T_ERR_INVALID";
  snprintf(other, sizeof other, "other (%d)", rc);
  return other;
}

struct walk {
  int ncat, ncvar, npvar;
  int info_errors, bad_lists, index_errors, cvars, pvars, subcats, with_parent;
};

/* describes every category and checks its lists */
static void walk_all(struct walk* w) {
  for (int c = 0; c < w->ncat; ++c) {
    char name[256], desc[1024];
    int nl = sizeof name, dl = sizeof desc, nc = -1, np = -1, nsub = -1;
    int irc = MPI_T_category_get_info(c, name, &nl, desc, &dl, &nc, &np, &nsub);
    if (irc != MPI_SUCCESS) {
#ifdef OPEN_MPI
      if (irc == MPI_T_ERR_INVALID_INDEX) continue; /* a category of a closed component */
#endif
      ++w->info_errors;
      continue;
    }
    int idx = -1;
    if (MPI_T_category_get_index(name, &idx) != MPI_SUCCESS || idx > c) ++w->index_errors;
    int list[4096];
    /* the lists are asked for even when empty (a length of 0 is valid) */
    if (nc >= 0 && nc <= 4096) {
      if (MPI_T_category_get_cvars(c, nc, list) != MPI_SUCCESS) ++w->bad_lists;
      for (int i = 0; i < nc; ++i)
        if (list[i] < 0 || list[i] >= w->ncvar) ++w->bad_lists;
      w->cvars += nc;
    }
    if (np >= 0 && np <= 4096) {
      if (MPI_T_category_get_pvars(c, np, list) != MPI_SUCCESS) ++w->bad_lists;
      for (int i = 0; i < np; ++i)
        if (list[i] < 0 || list[i] >= w->npvar) ++w->bad_lists;
      w->pvars += np;
    }
    if (nsub >= 0 && nsub <= 4096) {
      if (MPI_T_category_get_categories(c, nsub, list) != MPI_SUCCESS) ++w->bad_lists;
      for (int i = 0; i < nsub; ++i)
        if (list[i] < 0 || list[i] >= w->ncat || list[i] == c) ++w->bad_lists;
      w->subcats += nsub;
    }
    /* a list shorter than the category's: only that many written */
    if (nc > 1) {
      int two[2] = {-7, -7};
      if (MPI_T_category_get_cvars(c, 1, two) != MPI_SUCCESS || two[1] != -7) ++w->bad_lists;
    }
  }
}

static void* walk_thread(void* arg) {
  walk_all(arg);
  return NULL;
}

int main(int argc, char** argv) {
  int rank = cov_init(&argc, &argv, "tool_category");
  int provided = -1;
  int rc = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
  SAY("MPI_T_init_thread %s provided %d", terr(rc), provided);

  struct walk w;
  memset(&w, 0, sizeof w);
  MPI_T_category_get_num(&w.ncat);
  MPI_T_cvar_get_num(&w.ncvar);
  MPI_T_pvar_get_num(&w.npvar);
  CHECK(w.ncat > 0);
  int stamp1 = -1, stamp2 = -2;
  MPI_T_category_changed(&stamp1);
  walk_all(&w);
  MPI_T_category_changed(&stamp2);
  SAY("category_get_info errors %d, get_index errors %d, bad lists %d", w.info_errors, w.index_errors, w.bad_lists);
  SAY("some categories list cvars %d, pvars %d (MPICH has none), subcategories %d", w.cvars > 0, w.pvars > 0, w.subcats > 0);
  SAY("category_changed: unchanged while nothing was loaded %d", stamp1 == stamp2);
#ifdef MPICH
  SAY("categories %d", w.ncat); /* fixed when MPICH is built */
#endif
  {
    char name[64], desc[64];
    int nl = sizeof name, dl = sizeof desc, nc, np, nsub, idx = -1;
    SAY("category_get_info(num): %s", terr(MPI_T_category_get_info(w.ncat, name, &nl, desc, &dl, &nc, &np, &nsub)));
    SAY("category_get_index(no such name): %s", terr(MPI_T_category_get_index("tsmpi_no_such_category", &idx)));
  }

  /* two threads walking the categories at once */
  {
    struct walk tw[2];
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) {
      memset(&tw[i], 0, sizeof tw[i]);
      tw[i].ncat = w.ncat, tw[i].ncvar = w.ncvar, tw[i].npvar = w.npvar;
      pthread_create(&th[i], NULL, walk_thread, &tw[i]);
    }
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    SAY("threads: same answers as alone %d %d", memcmp(&tw[0], &w, sizeof w) == 0, memcmp(&tw[1], &w, sizeof w) == 0);
  }

#if defined(MPICH) && MPI_VERSION >= 4
  /* events and event sources */
  {
    int nev = -1, nsrc = -1, idx = -1;
    rc = MPI_T_event_get_num(&nev);
    int rc2 = MPI_T_source_get_num(&nsrc);
    SAY("event_get_num %s: %d, source_get_num %s: %d", terr(rc), nev, terr(rc2), nsrc);
    SAY("event_get_index(no such name): %s", terr(MPI_T_event_get_index("tsmpi_no_such_event", &idx)));
    int events_listed = 0, list_errors = 0;
    for (int c = 0; c < w.ncat; ++c) {
      int n = -1;
      if (MPI_T_category_get_num_events(c, &n) != MPI_SUCCESS) ++list_errors;
      int evs[16];
      if (MPI_T_category_get_events(c, n > 0 ? (n < 16 ? n : 16) : 0, evs) != MPI_SUCCESS) ++list_errors;
      events_listed += n > 0 ? n : 0;
    }
    SAY("category_get_num_events/get_events: errors %d, events listed %d", list_errors, events_listed);
    /* the first event and source, as a tool would look for them */
    char name[64], desc[64];
    int nl = sizeof name, dl = sizeof desc, verbosity, num_elements = 4, bind;
    MPI_Datatype types[4];
    MPI_Aint displs[4];
    MPI_T_enum en;
    MPI_Info info;
    memset(&info, 0xab, sizeof info); /* what an unset variable may hold */
    SAY("event_get_info(0): %s", terr(MPI_T_event_get_info(0, name, &nl, &verbosity, types, displs, &num_elements, &en,
                                                           &info, desc, &dl, &bind)));
    MPI_T_event_registration reg;
    SAY("event_handle_alloc(0): %s", terr(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg)));
    MPI_T_source_order order;
    MPI_Count ticks, max_ticks, ts;
    nl = sizeof name, dl = sizeof desc;
    SAY("source_get_info(0): %s",
        terr(MPI_T_source_get_info(0, name, &nl, desc, &dl, &order, &ticks, &max_ticks, &info)));
    SAY("source_get_timestamp(0): %s", terr(MPI_T_source_get_timestamp(0, &ts)));
    /* the info setters check their info first: a null one is refused before the registration */
    int e1 = MPI_T_event_handle_set_info((MPI_T_event_registration)NULL, MPI_INFO_NULL);
    int e2 = MPI_T_event_callback_set_info((MPI_T_event_registration)NULL, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL);
    int c1 = -1, c2 = -1;
    MPI_Error_class(e1, &c1);
    MPI_Error_class(e2, &c2);
    SAY("event_handle_set_info, event_callback_set_info with no registration and MPI_INFO_NULL: failed %d %d, classes %d %d",
        e1 != MPI_SUCCESS, e2 != MPI_SUCCESS, c1, c2);
  }
#endif
  SAY("MPI_T_finalize %s", terr(MPI_T_finalize()));
  (void)rank;
  return cov_finish();
}

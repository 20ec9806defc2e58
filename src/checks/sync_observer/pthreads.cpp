// POSIX threads: creation and join, mutexes, read-write locks, condition variables, barriers
// and semaphores as happens-before edges. Each interposer calls the next definition (libc's, or
// libtsan's interceptor in a ThreadSanitizer build) and adds the edge around it.
#include <pthread.h>
#include <semaphore.h>

#include "checks/sync_observer/observer.h"

using namespace tsmpi::sync;

extern "C" {
int __pthread_mutex_lock(pthread_mutex_t*);
int __pthread_mutex_trylock(pthread_mutex_t*);
int __pthread_mutex_unlock(pthread_mutex_t*);
}

namespace {

using Start = void* (*)(void*);
struct Birth {
  Start start;
  void* arg;
};

// The parent's present was published to the Birth before the thread began; at its end the thread
// publishes its own to its pthread_t, which pthread_join takes.
void* begin_thread(void* p) {
  Birth b = *static_cast<Birth*>(p);
  tsmpi_hb_thread_begins(p);
  delete static_cast<Birth*>(p);
  void* result = b.start(b.arg);
  tsmpi_hb_thread_ends(reinterpret_cast<void*>(pthread_self()));
  return result;
}

int (*g_create)(pthread_t*, const pthread_attr_t*, Start, void*);
int (*g_join)(pthread_t, void**);
void (*g_exit)(void*);
int (*g_lock)(pthread_mutex_t*);
int (*g_trylock)(pthread_mutex_t*);
int (*g_timedlock)(pthread_mutex_t*, const struct timespec*);
int (*g_unlock)(pthread_mutex_t*);
int (*g_rdlock)(pthread_rwlock_t*);
int (*g_wrlock)(pthread_rwlock_t*);
int (*g_tryrdlock)(pthread_rwlock_t*);
int (*g_trywrlock)(pthread_rwlock_t*);
int (*g_rwunlock)(pthread_rwlock_t*);
int (*g_cond_wait)(pthread_cond_t*, pthread_mutex_t*);
int (*g_cond_timedwait)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
int (*g_cond_signal)(pthread_cond_t*);
int (*g_cond_broadcast)(pthread_cond_t*);
int (*g_barrier_init)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned);
int (*g_barrier_wait)(pthread_barrier_t*);
int (*g_barrier_destroy)(pthread_barrier_t*);
int (*g_sem_wait)(sem_t*);
int (*g_sem_trywait)(sem_t*);
int (*g_sem_timedwait)(sem_t*, const struct timespec*);
int (*g_sem_post)(sem_t*);

}  // namespace

extern "C" {

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, Start start, void* arg) {
  auto real = next(g_create, "pthread_create");
  if (!g_active) return real(thread, attr, start, arg);
  auto* b = new Birth{start, arg};
  tsmpi_hb_release(b);
  int rc = real(thread, attr, begin_thread, b);
  if (rc != 0) {
    tsmpi_hb_forget(b);
    delete b;
  }
  return rc;
}

int pthread_join(pthread_t thread, void** result) {
  int rc = next(g_join, "pthread_join")(thread, result);
  if (rc == 0 && g_active) {
    void* key = reinterpret_cast<void*>(thread);
    if (tsmpi_hb_counts()) tsmpi_hb_acquire(key);
    tsmpi_hb_forget(key);
  }
  return rc;
}

[[noreturn]] void pthread_exit(void* result) {
  if (g_active) tsmpi_hb_thread_ends(reinterpret_cast<void*>(pthread_self()));
  next(g_exit, "pthread_exit")(result);
  __builtin_unreachable();
}

int pthread_mutex_lock(pthread_mutex_t* m) {
  int rc = next(g_lock, "pthread_mutex_lock", nullptr, &__pthread_mutex_lock)(m);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(m);
  return rc;
}

int pthread_mutex_trylock(pthread_mutex_t* m) {
  int rc = next(g_trylock, "pthread_mutex_trylock", nullptr, &__pthread_mutex_trylock)(m);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(m);
  return rc;
}

int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* t) {
  int rc = next(g_timedlock, "pthread_mutex_timedlock")(m, t);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(m);
  return rc;
}

int pthread_mutex_unlock(pthread_mutex_t* m) {
  if (TSMPI_SYNC_COUNTS()) tsmpi_hb_release(m);
  return next(g_unlock, "pthread_mutex_unlock", nullptr, &__pthread_mutex_unlock)(m);
}

int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  int rc = next(g_rdlock, "pthread_rwlock_rdlock")(l);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(l);
  return rc;
}

int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  int rc = next(g_wrlock, "pthread_rwlock_wrlock")(l);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(l);
  return rc;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t* l) {
  int rc = next(g_tryrdlock, "pthread_rwlock_tryrdlock")(l);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(l);
  return rc;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t* l) {
  int rc = next(g_trywrlock, "pthread_rwlock_trywrlock")(l);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(l);
  return rc;
}

int pthread_rwlock_unlock(pthread_rwlock_t* l) {
  if (TSMPI_SYNC_COUNTS()) tsmpi_hb_release(l);
  return next(g_rwunlock, "pthread_rwlock_unlock")(l);
}

// A waiter unlocks the mutex (release) and relocks it (acquire); a signal publishes to the
// condition variable, which a woken waiter takes as well.
int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  const bool counted = TSMPI_SYNC_COUNTS();
  if (counted) tsmpi_hb_release(m);
  int rc = next(g_cond_wait, "pthread_cond_wait")(c, m);
  if (counted) {
    tsmpi_hb_acquire(m);
    tsmpi_hb_acquire(c);
  }
  return rc;
}

int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
  const bool counted = TSMPI_SYNC_COUNTS();
  if (counted) tsmpi_hb_release(m);
  int rc = next(g_cond_timedwait, "pthread_cond_timedwait")(c, m, t);
  if (counted) {
    tsmpi_hb_acquire(m);
    tsmpi_hb_acquire(c);
  }
  return rc;
}

int pthread_cond_signal(pthread_cond_t* c) {
  if (TSMPI_SYNC_COUNTS()) tsmpi_hb_release(c);
  return next(g_cond_signal, "pthread_cond_signal")(c);
}

int pthread_cond_broadcast(pthread_cond_t* c) {
  if (TSMPI_SYNC_COUNTS()) tsmpi_hb_release(c);
  return next(g_cond_broadcast, "pthread_cond_broadcast")(c);
}

int pthread_barrier_init(pthread_barrier_t* b, const pthread_barrierattr_t* attr, unsigned count) {
  int rc = next(g_barrier_init, "pthread_barrier_init")(b, attr, count);
  if (rc == 0 && g_active) tsmpi_hb_barrier_init(b, static_cast<int>(count));
  return rc;
}

int pthread_barrier_wait(pthread_barrier_t* b) {
  const bool counted = TSMPI_SYNC_COUNTS();
  unsigned long round = counted ? tsmpi_hb_barrier_arrive(b, 0) : 0;
  int rc = next(g_barrier_wait, "pthread_barrier_wait")(b);
  if (counted) tsmpi_hb_barrier_leave(b, round);
  return rc;
}

int pthread_barrier_destroy(pthread_barrier_t* b) {
  if (g_active) tsmpi_hb_forget(b);
  return next(g_barrier_destroy, "pthread_barrier_destroy")(b);
}

int sem_wait(sem_t* s) {
  int rc = next(g_sem_wait, "sem_wait")(s);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(s);
  return rc;
}

int sem_trywait(sem_t* s) {
  int rc = next(g_sem_trywait, "sem_trywait")(s);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(s);
  return rc;
}

int sem_timedwait(sem_t* s, const struct timespec* t) {
  int rc = next(g_sem_timedwait, "sem_timedwait")(s, t);
  if (rc == 0 && TSMPI_SYNC_COUNTS()) tsmpi_hb_acquire(s);
  return rc;
}

int sem_post(sem_t* s) {
  if (TSMPI_SYNC_COUNTS()) tsmpi_hb_release(s);
  return next(g_sem_post, "sem_post")(s);
}

}  // extern "C"

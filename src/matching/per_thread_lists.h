// One list per thread of what its probes left for it (reserved messages, held lock-map entries),
// owned by the thread and read by MPI_Finalize. A thread that ends hands its list to the
// process, so nothing a probe matched is lost with it.
#pragma once
#include <mutex>
#include <set>
#include <vector>

#include "runtime/config.h"

namespace tsmpi::matching {

// `on_thread_end` (optional) runs on each item of a thread that ends before it joins the orphans.
template <class T, void (*on_thread_end)(T&) = nullptr>
class PerThreadLists {
 public:
  // Changed only by its owner thread, without a lock: a probe→receive pair changes it twice.
  // MPI_Finalize reads every list; by then no other thread may be inside the MPI (MPI-3.1
  // §12.4.3), so the owners are not changing them.
  struct List {
    std::vector<T> items;
  };

  // The calling thread's list, registered on first use. The cached pointer is initial-exec TLS
  // (one %fs-relative load); the owner object that registers and hands over at thread exit is
  // reached only the first time.
  static List& mine() {
    if (TSMPI_LIKELY(cached_ != nullptr)) return *cached_;
    static thread_local Owner owner;
    cached_ = &owner.list;
    return owner.list;
  }

  // Every thread's items and those of threads that ended, removed from their lists.
  static std::vector<T> take_all() {
    Registry& reg = registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    std::vector<T> all = std::move(reg.orphans);
    reg.orphans.clear();
    for (List* l : reg.live) {
      all.insert(all.end(), l->items.begin(), l->items.end());
      l->items.clear();
    }
    return all;
  }

 private:
  struct Registry {
    std::mutex mutex;
    std::set<List*> live;
    std::vector<T> orphans;
  };
  static Registry& registry() {
    static Registry* r = new Registry;  // never destroyed: threads may end after static destruction
    return *r;
  }
  static constinit TSMPI_TLS List* cached_;
  struct Owner {
    List list;
    Owner() {
      std::lock_guard<std::mutex> g(registry().mutex);
      registry().live.insert(&list);
    }
    ~Owner() {
      cached_ = nullptr;
      std::lock_guard<std::mutex> g(registry().mutex);
      registry().live.erase(&list);
      if constexpr (on_thread_end != nullptr)
        for (T& item : list.items) on_thread_end(item);
      registry().orphans.insert(registry().orphans.end(), list.items.begin(), list.items.end());
    }
  };
};

template <class T, void (*on_thread_end)(T&)>
constinit TSMPI_TLS typename PerThreadLists<T, on_thread_end>::List* PerThreadLists<T, on_thread_end>::cached_ =
    nullptr;

}  // namespace tsmpi::matching

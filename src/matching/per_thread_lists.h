// One list per thread of what its probes left for it (reserved messages, held lock-map entries),
// owned by the thread and readable by MPI_Finalize. A thread that ends hands its list to the
// process, so nothing a probe matched is lost with it.
#pragma once
#include <mutex>
#include <set>
#include <vector>

namespace tsmpi::matching {

template <class T>
class PerThreadLists {
 public:
  struct List {
    std::mutex mutex;  // uncontended: taken by the owner, and by MPI_Finalize
    std::vector<T> items;
  };

  // The calling thread's list, registered on first use.
  static List& mine() {
    static thread_local Owner owner;
    return owner.list;
  }

  // Every thread's items and those of threads that ended, removed from their lists.
  static std::vector<T> take_all() {
    Registry& reg = registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    std::vector<T> all = std::move(reg.orphans);
    reg.orphans.clear();
    for (List* l : reg.live) {
      std::lock_guard<std::mutex> lg(l->mutex);
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
  struct Owner {
    List list;
    Owner() {
      std::lock_guard<std::mutex> g(registry().mutex);
      registry().live.insert(&list);
    }
    ~Owner() {
      std::lock_guard<std::mutex> g(registry().mutex);
      registry().live.erase(&list);
      registry().orphans.insert(registry().orphans.end(), list.items.begin(), list.items.end());
    }
  };
};

}  // namespace tsmpi::matching

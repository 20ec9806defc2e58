// Per-communicator state of a probe policy (lock2d's lock map, helper's match queue), found by
// the communicator's handle. Entries are made on first use and retired when the application
// frees the communicator (an attribute's delete callback), because the MPI may hand the same
// handle to a later communicator. A retired state stays allocated while it may still be used
// (State::idle() is false: an entry held across the free, a receive still posted, a helper pass
// under way) and until kKeepRetired later communicators have been retired, so a pointer taken
// just before the free never dangles; then it is freed, so a program that makes and frees
// communicators for ever keeps a bounded number. Each thread caches its last lookup, checked
// against an epoch that every retirement advances.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/concurrent_maps.h"

#include "matching/mpi_calls.h"
#include "runtime/handles.h"

namespace tsmpi::matching {

// The keyval whose delete callback retires a communicator's states (made at MPI_Init).
void comm_keyval_init();
void comm_keyval_free();
// Marks `comm` so that its states are retired when it is freed (once per communicator).
void watch_comm_free(MPI_Comm comm);
// Called by the delete callback: retires the communicator's entries in every table.
void retire_comm(std::uintptr_t bits);
extern std::atomic<std::uint64_t> g_comm_epoch;

template <class State>
class CommTable {
 public:
  // The state of `comm`, made on first use. The result stays valid until MPI_Finalize.
  State& of(MPI_Comm comm) {
    std::uintptr_t bits = handle_bits(comm);
    Cache& c = cache();
    std::uint64_t epoch = g_comm_epoch.load(std::memory_order_acquire);
    if (c.state && c.bits == bits && c.epoch == epoch) return *c.state;
    State* s = find_or_make(comm, bits);
    c = {bits, epoch, s};
    return *s;
  }

  static constexpr std::size_t kKeepRetired = 16;

  // Retires the entry of a freed communicator (its handle may be reused).
  void retire(std::uintptr_t bits) {
    typename Map::accessor a;
    if (!map_.find(a, bits)) return;
    std::lock_guard<std::mutex> g(retired_mutex_);
    retired_.push_back(std::move(a->second));
    map_.erase(a);
    // Free the idle ones among all but the newest kKeepRetired.
    for (std::size_t i = 0; i + kKeepRetired < retired_.size();) {
      if (retired_[i]->idle()) retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
      else ++i;
    }
  }

  std::size_t retired_count() {
    std::lock_guard<std::mutex> g(retired_mutex_);
    return retired_.size();
  }

  // Every live state; only while no other thread uses the table (reports at finalize).
  template <class F>
  void for_each_quiescent(F&& f) {
    for (auto& [bits, state] : map_) f(*state);
  }

 private:
  using Map = ConcurrentHashMap<std::uintptr_t, std::unique_ptr<State>>;
  struct Cache {
    std::uintptr_t bits = 0;
    std::uint64_t epoch = 0;
    State* state = nullptr;
  };
  static Cache& cache() {
    static thread_local Cache c;
    return c;
  }

  State* find_or_make(MPI_Comm comm, std::uintptr_t bits) {
    {
      typename Map::const_accessor a;
      if (map_.find(a, bits)) return a->second.get();
    }
    State* made = nullptr;
    {
      typename Map::accessor a;
      if (!map_.insert(a, bits)) return a->second.get();
      a->second = std::make_unique<State>(comm);
      made = a->second.get();
    }
    // Outside the bucket lock: setting the attribute may take serialize mode's lock, under
    // which a freeing thread's delete callback takes bucket locks.
    watch_comm_free(comm);
    return made;
  }

  Map map_;
  std::mutex retired_mutex_;
  std::vector<std::unique_ptr<State>> retired_;
};

}  // namespace tsmpi::matching

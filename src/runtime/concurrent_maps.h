// The oneTBB concurrent containers tsmpi uses, allocating with malloc instead of TBB's scalable
// allocator: tbbmalloc keeps memory per thread, and a program that starts and ends threads all its
// life grew by 40-70 bytes for every thread that had touched a map (tests/mpi/memory_bounded.c,
// 40 000 threads). With malloc the growth stops at glibc's arenas.
#pragma once
#include <oneapi/tbb/concurrent_hash_map.h>
#include <oneapi/tbb/concurrent_unordered_map.h>

#include <functional>
#include <memory>
#include <utility>

namespace tsmpi {

template <class Key, class T, class HashCompare = tbb::tbb_hash_compare<Key>>
using ConcurrentHashMap = tbb::concurrent_hash_map<Key, T, HashCompare, std::allocator<std::pair<const Key, T>>>;

template <class Key, class T, class Hash = std::hash<Key>, class Equal = std::equal_to<Key>>
using ConcurrentUnorderedMap = tbb::concurrent_unordered_map<Key, T, Hash, Equal, std::allocator<std::pair<const Key, T>>>;

}  // namespace tsmpi

// A (source, tag) pair as one 64-bit key, and a hash that mixes its bits. std::hash of an
// integer is the identity in libstdc++, and both std::unordered_map and TBB's concurrent maps
// pick buckets from the low bits: all sources with one tag would share a bucket. Used by the
// lock map (src/locking) and the match queue (src/matching).
#pragma once
#include <cstddef>
#include <cstdint>

namespace tsmpi {

inline constexpr std::uint64_t source_tag_key(int source, int tag) noexcept {
  return (std::uint64_t{static_cast<std::uint32_t>(source)} << 32) | static_cast<std::uint32_t>(tag);
}

struct MixedHash {
  std::size_t operator()(std::uint64_t k) const noexcept {  // murmur3 finalizer
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }
};

}  // namespace tsmpi

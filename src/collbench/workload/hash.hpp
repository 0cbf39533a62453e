// Counter-based hashing for the MoE workload generator: every random number is a pure function
// of a tuple (seed, layer, iteration, rank, token, expert, ...), never of a global RNG state, so
// any rank can regenerate any token's routing (that is how received rows are verified) and the
// model can rebuild a whole run's counts matrix offline. Pure C++, no hardware needed.
#pragma once

#include <cstdint>

namespace collbench::workload {

inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;  // 2^64 / golden ratio

// SplitMix64 finalizer (Steele, Lea, Flood 2014): a bijection on 64 bits whose output passes
// BigCrush when fed a counter. mix64(base + i * kGoldenGamma) is SplitMix64's i-th output.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Folds one more field into a hash. Mixing the field first makes (a, b) and (b, a) differ.
constexpr std::uint64_t hash_combine(std::uint64_t h, std::uint64_t value) {
  return mix64(h ^ mix64(value + kGoldenGamma));
}

// Domain separation: each use of randomness starts from its own tag, so e.g. the popularity of
// expert 3 and the routing of token 3 never share a stream.
enum class Stream : std::uint64_t {
  popularity = 0x706f70756c6172ULL,  // expert popularity per (seed, layer)
  permutation = 0x7065726d7574ULL,   // expert order for Zipf per (seed, layer)
  tokens = 0x746f6b656e73ULL,        // tokens per rank per (seed, layer, iteration, rank)
  routing = 0x726f757465ULL,         // per (seed, layer, iteration, rank, token)
  replica = 0x7265706c6963ULL,       // which replica of a redundant expert a token uses
  payload = 0x7061796c6f6164ULL,     // row payload signatures
  combine = 0x636f6d62696e65ULL,     // combine weights
};

constexpr std::uint64_t stream_key(Stream stream, std::uint64_t seed) {
  return hash_combine(mix64(static_cast<std::uint64_t>(stream)), seed);
}

// Uniform double in (0, 1] from the top 53 bits m: (m + 1) / 2^53, computed exactly (m + 1 <= 2^53
// is representable), so log() is always finite and 1 - u = (2^53 - 1 - m) / 2^53 is exact too.
constexpr double uniform_pos01(std::uint64_t bits) {
  return static_cast<double>((bits >> 11) + 1) * 0x1p-53;
}

}  // namespace collbench::workload

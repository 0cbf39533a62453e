// Round-robin pairing (the circle method): n participants meet every other participant exactly
// once in n-1 rounds (n even) or n rounds (n odd, one bye per round), each round a set of
// disjoint pairs. Used by send/recv's pairwise patterns (locate's link matrix, acceptance's
// pairwise checks) and by the analysis that reads them back. Pure, constexpr, no hardware.
#pragma once

#include <utility>
#include <vector>

namespace collbench {

// Rounds needed for every pair of n participants to meet once.
constexpr int round_robin_rounds(int n) {
  if (n <= 1) return 0;
  return n % 2 == 0 ? n - 1 : n;
}

// The partner of `participant` in `round` (0-based); the participant itself when it sits the
// round out (odd n), or when the round does not exist for n participants.
// Circle method: participant m-1 stays fixed (m = n rounded up to even, the extra one being a
// "bye"); in round r it meets r, and every other x meets 2r - x modulo m-1. Since m-1 is odd,
// x + y = 2r (mod m-1) has exactly one solution r for each pair {x, y}: every pair meets once.
constexpr int round_robin_partner(int participant, int round, int n) {
  if (n <= 1 || participant < 0 || participant >= n) return participant;
  const int m = n % 2 == 0 ? n : n + 1;
  const int rounds = m - 1;
  if (round < 0 || round >= rounds) return participant;
  int partner = 0;
  if (participant == m - 1) {
    partner = round;
  } else if (participant == round) {
    partner = m - 1;
  } else {
    partner = ((2 * round - participant) % rounds + rounds) % rounds;
  }
  return partner >= n ? participant : partner;
}

// The disjoint pairs (a < b) of one round.
inline std::vector<std::pair<int, int>> round_robin_pairs(int round, int n) {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < n; ++a) {
    const int b = round_robin_partner(a, round, n);
    if (b > a) pairs.emplace_back(a, b);
  }
  return pairs;
}

// `k` of the rounds of n participants, spread evenly (round floor(i * R / k) for i < k, R the
// number of rounds): each participant meets k partners spread over the circle instead of every
// other one. All rounds when k <= 0 or k >= R. locate --pair-rounds: at 1,024 ranks a full matrix
// is 1,023 rounds; 16 rounds give every rank 16 partners, most of them outside its own rack.
inline std::vector<int> sampled_rounds(int n, int k) {
  const int rounds = round_robin_rounds(n);
  if (k <= 0 || k > rounds) k = rounds;
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) out.push_back(static_cast<int>(static_cast<long long>(i) * rounds / k));
  return out;
}

}  // namespace collbench

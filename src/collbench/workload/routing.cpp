// Routing generator implementation. Per (token, expert) the hot loop is one hash and one
// branch-free multiply-compare: a cheap lower bound on the exponential-race key, tested against
// a starting threshold, marks the few experts that can enter the top-k, and only those get a log
// (TokenRouter). Proven shortcuts only: the result is bit for bit the exhaustive definition of
// routing.hpp, which the unit tests check against a direct implementation.
#include "collbench/workload/routing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "collbench/core/error.hpp"
#include "collbench/workload/expected.hpp"

namespace collbench::workload {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint64_t kMax53 = (std::uint64_t{1} << 53) - 1;

std::uint64_t rank_key(std::uint64_t seed, int layer, int iteration, int src_rank_idx) {
  std::uint64_t h = hash_combine(stream_key(Stream::routing, seed), static_cast<std::uint64_t>(layer));
  h = hash_combine(h, static_cast<std::uint64_t>(iteration));
  return hash_combine(h, static_cast<std::uint64_t>(src_rank_idx));
}

std::uint64_t token_key_from_rank_key(std::uint64_t rank_key_value, int token_idx) {
  return hash_combine(rank_key_value, static_cast<std::uint64_t>(token_idx));
}

// Inserts (key, idx) into the sorted prefix [0, n) of capacity cap, after entries with an equal
// key (so ties keep scan order = lower expert index first). Returns the new size.
inline int insert_sorted(double* keys, std::int32_t* idxs, int n, int cap, double key, std::int32_t idx) {
  int pos = n < cap ? n : cap - 1;
  while (pos > 0 && keys[pos - 1] > key) {
    keys[pos] = keys[pos - 1];
    idxs[pos] = idxs[pos - 1];
    --pos;
  }
  keys[pos] = key;
  idxs[pos] = idx;
  return n < cap ? n + 1 : cap;
}

}  // namespace

// Selects the top-k experts of one token. Holds scratch space, so one per thread of work.
class TokenRouter {
 public:
  explicit TokenRouter(const RoutingGenerator& gen)
      : gen_(gen),
        num_experts_(gen.num_experts()),
        top_k_(gen.top_k()),
        num_groups_(gen.config().num_expert_groups),
        group_size_(gen.expert_group_size()),
        inv_w_(gen.inv_weights_.data()),
        candidates_(static_cast<std::size_t>((gen.num_experts() + 63) / 64), 0) {
    const int m = gen.max_groups_per_token();
    limited_ = m > 0 && m < num_groups_;
    if (limited_) {
      groups_per_token_ = m;
      cap_ = std::min(top_k_, group_size_);
      num_score_ = std::max(1, top_k_ / m);  // DeepSeek-V3: 8 / 4 = top-2 per group
      group_keys_.resize(static_cast<std::size_t>(num_groups_) * cap_);
      group_idxs_.resize(group_keys_.size());
      group_count_.resize(num_groups_);
      group_score_.resize(num_groups_);
      group_exact_.resize(num_groups_);
      group_complete_.resize(num_groups_);
      kept_.resize(static_cast<std::size_t>(m));
    }
  }

  // Writes the k chosen experts, best first. A fast pass with a starting threshold thr0 (chosen
  // so that ~k + 4 sqrt(k) keys fall below it on average) computes only the keys that can
  // matter; when it cannot prove its answer it falls back to the exhaustive scan. Both give the
  // routing of the definition (routing.hpp), bit for bit.
  void select(std::uint64_t token_key, std::int32_t* experts_out) {
    if (limited_) {
      select_limited(token_key, experts_out);
    } else {
      if (!select_unlimited(token_key, experts_out, gen_.fast_threshold_))
        select_unlimited(token_key, experts_out, kInf);
    }
  }

  // Local rank (within the EP group) that receives the token's row for `expert_idx`.
  [[nodiscard]] std::int32_t dest_local_rank(std::uint64_t token_key, std::int32_t expert_idx) const {
    const auto begin = gen_.replica_offsets_[expert_idx];
    const auto num = gen_.replica_offsets_[expert_idx + 1] - begin;
    if (num == 1) return gen_.replica_ranks_[begin];
    const std::uint64_t h =
        hash_combine(token_key ^ static_cast<std::uint64_t>(Stream::replica), static_cast<std::uint64_t>(expert_idx));
    return gen_.replica_ranks_[begin + static_cast<std::int32_t>(h % static_cast<std::uint64_t>(num))];
  }

 private:
  // Exact key x_e = -log(u_e) / w_e, or +inf when the lower bound proves x_e > thr.
  //
  // -log(u) >= 1 - u and, with u = (m + 1) / 2^53, 1 - u = (2^53 - 1 - m) / 2^53 exactly. The
  // computed key is at least (lower bound) * (1 - 2^-50) after the rounding of log (< 1 ulp) and
  // two products, so rejecting when (lower bound) * (1 - 2^-40) > thr never drops an expert that
  // the full computation would keep: lazy and exhaustive evaluation give identical routing.
  static inline double key_or_inf(std::uint64_t bits, double inv_w, double thr) {
    const std::uint64_t m = bits >> 11;
    const double lower = static_cast<double>(kMax53 - m) * 0x1p-53 * inv_w;
    if (lower * (1.0 - 0x1p-40) > thr) return kInf;
    return -std::log(static_cast<double>(m + 1) * 0x1p-53) * inv_w;
  }

  // Keys below `thr0` only. Every expert skipped has a key >= thr0, so when at least k keys are
  // below thr0 the k smallest are exact; otherwise returns false (caller rescans with thr0 = inf).
  bool select_unlimited(std::uint64_t token_key, std::int32_t* experts_out, double thr0) {
    double keys[kMaxTopK];
    const int k = top_k_;
    int n = 0;
    double thr = thr0;
    auto visit = [&](int e) {
      const std::uint64_t bits = mix64(token_key + static_cast<std::uint64_t>(e + 1) * kGoldenGamma);
      const double x = key_or_inf(bits, inv_w_[e], thr);
      if (!(x < thr)) return;
      n = insert_sorted(keys, experts_out, n, k, x, e);
      if (n == k) thr = keys[k - 1];
    };
    if (thr0 == kInf) {
      for (int e = 0; e < num_experts_; ++e) visit(e);
    } else {
      mark_candidates(token_key, 0, num_experts_, thr0);
      for_each_candidate(0, num_experts_, visit);
    }
    return n == k;
  }

  // Phase 1 of a scan with a finite threshold, branch-free: bit e of candidates_ is set when
  // expert e's lower bound does not exclude it. Phase 2 visits only those experts, in index
  // order, exactly as the plain scan would (a tighter running threshold rejects a subset of
  // what thr0 rejects), so the result is the same; most experts cost one hash here and nothing
  // more, and the unpredictable branch disappears.
  void mark_candidates(std::uint64_t token_key, int first, int last, double thr0) {
    const double limit = thr0 / (1.0 - 0x1p-40);  // lower * (1 - 2^-40) > thr0 <=> lower > limit (up to rounding)
    const double keep_below = limit * (1.0 + 0x1p-45);
    for (int w = first / 64; w <= (last - 1) / 64; ++w) {
      // One word per 64 experts, built in a register (no store-to-load chain through memory).
      std::uint64_t word = 0;
      const int begin = std::max(first, w * 64);
      const int end = std::min(last, w * 64 + 64);
      for (int e = begin; e < end; ++e) {
        const std::uint64_t m = mix64(token_key + static_cast<std::uint64_t>(e + 1) * kGoldenGamma) >> 11;
        const double lower = static_cast<double>(kMax53 - m) * 0x1p-53 * inv_w_[e];
        // Keep when not provably above thr0; phase 2 repeats the exact test, so keeping a few
        // extra experts near the boundary (rounding of `limit`) costs time, never correctness.
        word |= static_cast<std::uint64_t>(!(lower > keep_below)) << (e & 63);
      }
      candidates_[w] = word;
    }
  }

  template <class F>
  void for_each_candidate(int first, int last, F&& visit) const {
    for (int w = first / 64; w <= (last - 1) / 64; ++w) {
      std::uint64_t bits = candidates_[w];
      while (bits != 0) {
        const int e = w * 64 + std::countr_zero(bits);
        bits &= bits - 1;
        if (e >= first && e < last) visit(e);
      }
    }
  }

  // Group-limited selection. Each group keeps its smallest min(k, group size) keys below a
  // threshold: thr0 on the first pass, +inf when the group is rescanned ("complete"). A group
  // with fewer than n known keys only has a lower bound on its score, (known product) *
  // thr0^missing, since every unknown key is >= thr0. Groups are ranked by (score or bound,
  // index); a bounded group that makes the top M is rescanned until the top M are all exact,
  // which proves they are the M groups of the exhaustive ranking. The top-k over the kept
  // groups is then exact if k known keys lie below thr0 (unknown keys are >= thr0), else the
  // kept groups are rescanned completely. Result: the routing of the definition, bit for bit.
  void select_limited(std::uint64_t token_key, std::int32_t* experts_out) {
    const double thr0 = gen_.fast_threshold_;
    mark_candidates(token_key, 0, num_experts_, thr0);
    for (int g = 0; g < num_groups_; ++g) scan_group(token_key, g, thr0);
    int* kept = kept_.data();
    for (;;) {
      // The M best groups by (score or bound, index): insertion into a short sorted list.
      int num_kept = 0;
      for (int g = 0; g < num_groups_; ++g) {
        const double score = group_score_[g];
        if (num_kept == groups_per_token_ && !(score < group_score_[kept[num_kept - 1]])) continue;
        int pos = num_kept < groups_per_token_ ? num_kept++ : num_kept - 1;
        while (pos > 0 && group_score_[kept[pos - 1]] > score) {
          kept[pos] = kept[pos - 1];
          --pos;
        }
        kept[pos] = g;
      }
      bool all_exact = true;
      for (int i = 0; i < num_kept; ++i) {
        if (!group_exact_[kept[i]]) {
          scan_group(token_key, kept[i], kInf);
          all_exact = false;
        }
      }
      if (!all_exact) continue;  // a rescanned group's score can only grow: rank again
      if (merge_kept(kept, thr0, experts_out)) return;
      for (int i = 0; i < num_kept; ++i) {
        if (!group_complete_[kept[i]]) scan_group(token_key, kept[i], kInf);
      }
      merge_kept(kept, kInf, experts_out);
      return;
    }
  }

  void scan_group(std::uint64_t token_key, int g, double thr0) {
    const int cap = cap_;
    double* keys = group_keys_.data() + static_cast<std::size_t>(g) * cap;
    std::int32_t* idxs = group_idxs_.data() + static_cast<std::size_t>(g) * cap;
    int n = 0;
    double thr = thr0;
    const int first = g * group_size_;
    auto visit = [&](int e) {
      const std::uint64_t bits = mix64(token_key + static_cast<std::uint64_t>(e + 1) * kGoldenGamma);
      const double x = key_or_inf(bits, inv_w_[e], thr);
      if (!(x < thr)) return;
      n = insert_sorted(keys, idxs, n, cap, x, e);
      if (n == cap) thr = keys[cap - 1];
    };
    if (thr0 == kInf) {
      for (int e = first; e < first + group_size_; ++e) visit(e);
    } else {  // candidates_ was marked for every expert by select_limited
      for_each_candidate(first, first + group_size_, visit);
    }
    group_count_[g] = n;
    // Sum of the group's best Gumbel scores = -log(product of its smallest keys); unknown keys
    // enter as thr0, which makes the product a lower bound (rounding is monotone).
    double product = 1.0;
    for (int j = 0; j < num_score_; ++j) product *= j < n ? keys[j] : thr0;
    group_score_[g] = product;
    group_exact_[g] = n >= num_score_;
    group_complete_[g] = thr0 == kInf || n == cap;
  }

  // Top-k by (key, expert index) over the kept groups' known keys. Exact when at least k of them
  // lie below `thr0` (every unknown key is >= thr0), which this checks.
  bool merge_kept(const int* kept, double thr0, std::int32_t* experts_out) {
    // keys[j] is read only once n == k, after all k were written (1 <= k <= kMaxTopK, checked by
    // check_shape). GCC 12 at -O3 cannot see that (-Wmaybe-uninitialized): the k slots start at
    // +inf, the value an unknown key would have, which no read can see before its write anyway.
    const int k = top_k_;
    double keys[kMaxTopK];
    std::fill_n(keys, k, kInf);
    int n = 0;
    for (int i = 0; i < groups_per_token_; ++i) {
      const int g = kept[i];
      const double* gk = group_keys_.data() + static_cast<std::size_t>(g) * cap_;
      const std::int32_t* gi = group_idxs_.data() + static_cast<std::size_t>(g) * cap_;
      for (int j = 0; j < group_count_[g]; ++j) {
        const double x = gk[j];
        const std::int32_t e = gi[j];
        if (n == k && !(x < keys[k - 1] || (x == keys[k - 1] && e < experts_out[k - 1]))) continue;
        int pos = n < k ? n++ : k - 1;
        while (pos > 0 && (keys[pos - 1] > x || (keys[pos - 1] == x && experts_out[pos - 1] > e))) {
          keys[pos] = keys[pos - 1];
          experts_out[pos] = experts_out[pos - 1];
          --pos;
        }
        keys[pos] = x;
        experts_out[pos] = e;
      }
    }
    return n == k && keys[k - 1] < thr0;
  }

  const RoutingGenerator& gen_;
  int num_experts_;
  int top_k_;
  int num_groups_;
  int group_size_;
  const double* inv_w_;
  std::vector<std::uint64_t> candidates_;  // bit per expert: not excluded by phase 1
  bool limited_ = false;
  int groups_per_token_ = 0;
  int cap_ = 0;
  int num_score_ = 0;
  std::vector<double> group_keys_;
  std::vector<std::int32_t> group_idxs_;
  std::vector<int> group_count_;
  std::vector<double> group_score_;
  std::vector<char> group_exact_;     // score known exactly (>= n known keys)
  std::vector<char> group_complete_;  // scanned without a threshold: the exact top-min(k, size)
  std::vector<int> kept_;             // the M best groups, best first
};

RoutingConfig routing_config(const WorkloadProfile& profile, int num_ranks) {
  RoutingConfig c;
  c.num_ranks = num_ranks;
  c.num_experts = profile.num_routed_experts;
  c.top_k = profile.top_k;
  c.num_expert_groups = profile.num_expert_groups;
  c.tokens_per_rank = profile.tokens_per_rank;
  c.rows = profile.rows;
  c.settings = profile.routing;
  return c;
}

std::uint64_t routing_token_key(std::uint64_t seed, int layer, int iteration, int src_rank_idx, int token_idx) {
  return token_key_from_rank_key(rank_key(seed, layer, iteration, src_rank_idx), token_idx);
}

int RoutingGenerator::slots_per_rank() const {
  return experts_per_rank() + config_.settings.num_redundant_experts / ep_size_;
}

std::span<const std::int32_t> RoutingGenerator::expert_local_ranks(int expert_idx) const {
  const auto begin = static_cast<std::size_t>(replica_offsets_[expert_idx]);
  const auto end = static_cast<std::size_t>(replica_offsets_[expert_idx + 1]);
  return {replica_ranks_.data() + begin, end - begin};
}

int RoutingGenerator::num_tokens(int src_rank_idx) const {
  const auto& s = config_.settings;
  const int t = config_.tokens_per_rank;
  switch (s.tokens) {
    case TokenDistribution::fixed:
      return t;
    case TokenDistribution::linear:
      return t - src_rank_idx;
    case TokenDistribution::uniform: {
      const int lo = s.min_tokens >= 0 ? s.min_tokens : t - t / 2;
      const int hi = s.max_tokens >= 0 ? s.max_tokens : t + t / 2;
      std::uint64_t h = hash_combine(stream_key(Stream::tokens, s.seed), static_cast<std::uint64_t>(s.layer));
      h = hash_combine(h, static_cast<std::uint64_t>(config_.iteration));
      h = hash_combine(h, static_cast<std::uint64_t>(src_rank_idx));
      return lo + static_cast<int>(h % static_cast<std::uint64_t>(hi - lo + 1));
    }
  }
  return t;
}

int RoutingGenerator::max_tokens_per_rank() const {
  const auto& s = config_.settings;
  const int t = config_.tokens_per_rank;
  if (s.tokens == TokenDistribution::uniform) return s.max_tokens >= 0 ? s.max_tokens : t + t / 2;
  return t;
}

void RoutingGenerator::route_token(int src_rank_idx, int token_idx, std::span<std::int32_t> experts_out,
                                   std::span<std::int32_t> dest_ranks_out) const {
  if (experts_out.size() < static_cast<std::size_t>(top_k()) ||
      dest_ranks_out.size() < static_cast<std::size_t>(top_k())) {
    throw InputError(fmt::format("route_token: output spans need top_k = {} entries", top_k()));
  }
  TokenRouter router(*this);
  const auto& s = config_.settings;
  const std::uint64_t key = routing_token_key(s.seed, s.layer, config_.iteration, src_rank_idx, token_idx);
  router.select(key, experts_out.data());
  const int base = ep_group_of(src_rank_idx) * ep_size_;
  for (int j = 0; j < top_k(); ++j) dest_ranks_out[j] = base + router.dest_local_rank(key, experts_out[j]);
}

RankRouting RoutingGenerator::route_rank(int src_rank_idx) const {
  RankRouting out;
  out.src_rank_idx = src_rank_idx;
  out.num_tokens = num_tokens(src_rank_idx);
  out.top_k = top_k();
  const auto total = static_cast<std::size_t>(out.num_tokens) * static_cast<std::size_t>(top_k());
  out.experts.resize(total);
  out.dest_ranks.resize(total);
  TokenRouter router(*this);
  const auto& s = config_.settings;
  const std::uint64_t rk = rank_key(s.seed, s.layer, config_.iteration, src_rank_idx);
  const int base = ep_group_of(src_rank_idx) * ep_size_;
  for (int t = 0; t < out.num_tokens; ++t) {
    const std::uint64_t key = token_key_from_rank_key(rk, t);
    std::int32_t* experts = out.experts.data() + static_cast<std::size_t>(t) * top_k();
    std::int32_t* dests = out.dest_ranks.data() + static_cast<std::size_t>(t) * top_k();
    router.select(key, experts);
    for (int j = 0; j < top_k(); ++j) dests[j] = base + router.dest_local_rank(key, experts[j]);
  }
  return out;
}

DestinationCounts RoutingGenerator::count_destinations(int src_rank_idx) const {
  DestinationCounts out;
  out.copy_rows.assign(static_cast<std::size_t>(num_ranks()), 0);
  out.dedup_rows.assign(static_cast<std::size_t>(num_ranks()), 0);
  TokenRouter router(*this);
  const auto& s = config_.settings;
  const std::uint64_t rk = rank_key(s.seed, s.layer, config_.iteration, src_rank_idx);
  const int base = ep_group_of(src_rank_idx) * ep_size_;
  const int k = top_k();
  std::int32_t experts[kMaxTopK];
  std::int32_t dests[kMaxTopK];
  const int tokens = num_tokens(src_rank_idx);
  for (int t = 0; t < tokens; ++t) {
    const std::uint64_t key = token_key_from_rank_key(rk, t);
    router.select(key, experts);
    for (int j = 0; j < k; ++j) {
      const std::int32_t dst = base + router.dest_local_rank(key, experts[j]);
      dests[j] = dst;
      ++out.copy_rows[dst];
      bool seen = false;
      for (int i = 0; i < j && !seen; ++i) seen = dests[i] == dst;
      if (!seen) ++out.dedup_rows[dst];
    }
  }
  return out;
}

CountsMatrices RoutingGenerator::counts_matrices() const {
  CountsMatrices m;
  const auto n = static_cast<std::size_t>(num_ranks());
  m.copy.num_ranks = m.dedup.num_ranks = num_ranks();
  m.copy.rows.assign(n * n, 0);
  m.dedup.rows.assign(n * n, 0);
  for (int src = 0; src < num_ranks(); ++src) {
    const DestinationCounts c = count_destinations(src);
    std::copy(c.copy_rows.begin(), c.copy_rows.end(), m.copy.rows.begin() + static_cast<std::ptrdiff_t>(src * n));
    std::copy(c.dedup_rows.begin(), c.dedup_rows.end(), m.dedup.rows.begin() + static_cast<std::ptrdiff_t>(src * n));
  }
  return m;
}

}  // namespace collbench::workload

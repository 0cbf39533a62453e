// MoE routing generator: which experts (and so which ranks) each token goes to, deterministic
// from (seed, layer, iteration, source rank, token) so that any rank can regenerate the routing
// of any token it receives (verification) and the model can build a whole run's counts matrix
// offline. Pure C++, no hardware needed.
//
// Definition (what every implementation, e.g. a future GPU kernel, must reproduce exactly):
//
//   Layout. num_ranks ranks form num_ranks / ep_size EP groups; EP group g = global ranks
//   [g*ep_size, (g+1)*ep_size). Tokens of a source rank go only to ranks of its own EP group.
//   Within a group, expert e lives on local rank e / experts_per_rank (experts_per_rank =
//   num_experts / ep_size, contiguous). With redundant slots, every rank also has
//   num_redundant_experts / ep_size extra slots; each of the num_redundant_experts hottest
//   experts gets one replica, on the least loaded rank with a free slot that does not hold it
//   yet (a replica that fits nowhere is dropped and its slot stays empty).
//   Expert group = num_experts / num_expert_groups contiguous experts.
//
//   Popularity w_e (per seed and layer; the same in every EP group, normalized to sum 1):
//     uniform       w_e = 1
//     lognormal     w_e = exp(sigma z_e), z_e ~ N(0,1) (Box-Muller from hash(seed, layer, e))
//     zipf          w_e = 1 / (pos_e + 1)^s, pos = a seeded random permutation of the experts
//     one-hot-rank  w_e = hot_factor for the experts on local rank hot_rank, 1 otherwise
//
//   Top-k without replacement, Gumbel-top-k: token t of rank r draws u_e = uniform_pos01(
//   mix64(token_key(r, t) + (e + 1) * kGoldenGamma)) and takes the k experts with the largest
//   log w_e + G_e, G_e = -log(-log u_e) a standard Gumbel. Equivalently (what the code compares,
//   saving a log): the k smallest keys x_e = -log(u_e) * (1 / w_e) (w normalized to sum 1, the
//   double expression exactly so), an exponential race with rates w_e. Ties go to the lower
//   expert index; choices are listed best first. This samples k experts without replacement
//   with probability proportional to w (Plackett-Luce). Bit-exact across ranks as long as they
//   run the same binary and libm (std::log, exp, cos), as the ranks of one run do.
//
//   Group-limited routing (groups_per_token = M > 0): each expert group scores the sum of its
//   n = max(1, k / M) best Gumbel scores (DeepSeek-V3 scores a group by its top-2 affinities,
//   k/M = 8/4 = 2), i.e. the product of its n smallest keys; the M best groups are kept (ties to
//   the lower group) and top-k is taken over their experts only.
//
//   A token choosing a replicated expert uses replica hash(token_key, e) mod num_replicas.
//
// Every const member function is safe to call from several threads at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collbench/workload/hash.hpp"
#include "collbench/workload/profile.hpp"

namespace collbench::workload {

inline constexpr int kMaxTopK = 64;

struct RoutingConfig {
  int num_ranks = 1;
  int num_experts = 256;
  int top_k = 8;
  int num_expert_groups = 1;
  int tokens_per_rank = 4096;  // T
  int iteration = 0;
  RowConvention rows = RowConvention::dedup;  // the rows an imbalance target counts
  RoutingSettings settings;                   // popularity, group limit, tokens, ep_size, seed, layer, ...
};

// The model numbers, T and routing defaults of a profile, for a run on num_ranks ranks.
RoutingConfig routing_config(const WorkloadProfile& profile, int num_ranks);

// The key that seeds token `token_idx` of global rank `src_rank_idx` (see the definition above).
std::uint64_t routing_token_key(std::uint64_t seed, int layer, int iteration, int src_rank_idx, int token_idx);

// u_e of the definition: uniform in (0, 1], for expert `expert_idx` of the token with this key.
inline double routing_uniform(std::uint64_t token_key, int expert_idx) {
  return uniform_pos01(mix64(token_key + static_cast<std::uint64_t>(expert_idx + 1) * kGoldenGamma));
}

// Normalized popularity w_e of every expert (sum 1). `sigma` is used for lognormal.
std::vector<double> expert_popularity(const RoutingSettings& settings, int num_experts, int ep_size, double sigma);

// Routing of every token of one source rank.
struct RankRouting {
  int src_rank_idx = 0;
  int num_tokens = 0;
  int top_k = 0;
  std::vector<std::int32_t> experts;     // [token_idx * top_k + j]: j-th choice, best first
  std::vector<std::int32_t> dest_ranks;  // same shape: global rank holding the chosen expert (slot)

  [[nodiscard]] std::span<const std::int32_t> token_experts(int token_idx) const {
    return {experts.data() + static_cast<std::size_t>(token_idx) * top_k, static_cast<std::size_t>(top_k)};
  }
  [[nodiscard]] std::span<const std::int32_t> token_dest_ranks(int token_idx) const {
    return {dest_ranks.data() + static_cast<std::size_t>(token_idx) * top_k, static_cast<std::size_t>(top_k)};
  }
};

// Rows one source rank sends to each destination (global rank index), both conventions.
struct DestinationCounts {
  std::vector<std::int64_t> copy_rows;   // one row per (token, expert): sums to T * k
  std::vector<std::int64_t> dedup_rows;  // one row per (token, destination rank)
  [[nodiscard]] const std::vector<std::int64_t>& rows(RowConvention c) const {
    return c == RowConvention::copy ? copy_rows : dedup_rows;
  }
};

// num_ranks x num_ranks row counts, [src][dst] row-major. Block-diagonal when block_size > 0:
// every non-zero count lies inside blocks of block_size consecutive ranks (EP groups) and rows
// holds num_ranks x block_size entries, [src][dst - the first rank of src's block]; N x EP
// instead of N x N (2 MB instead of 8 MB at 1,024 ranks in EP groups of 256).
struct CountsMatrix {
  int num_ranks = 0;
  std::vector<std::int64_t> rows;
  int block_size = 0;  // 0: dense

  // The destinations row src may have non-zero counts for: [first_peer, first_peer + width).
  [[nodiscard]] int width() const { return block_size > 0 ? block_size : num_ranks; }
  [[nodiscard]] int first_peer(int src_rank_idx) const {
    return block_size > 0 ? src_rank_idx - src_rank_idx % block_size : 0;
  }
  [[nodiscard]] std::int64_t at(int src_rank_idx, int dst_rank_idx) const {
    const int first = first_peer(src_rank_idx);
    if (dst_rank_idx < first || dst_rank_idx >= first + width()) return 0;
    return rows[static_cast<std::size_t>(src_rank_idx) * static_cast<std::size_t>(width()) +
                static_cast<std::size_t>(dst_rank_idx - first)];
  }
  [[nodiscard]] std::vector<std::int64_t> send_rows() const;     // per source: row sums
  [[nodiscard]] std::vector<std::int64_t> receive_rows() const;  // per destination: column sums
  [[nodiscard]] std::int64_t total_rows() const;
};

struct CountsMatrices {
  CountsMatrix copy;
  CountsMatrix dedup;
  [[nodiscard]] const CountsMatrix& rows(RowConvention c) const { return c == RowConvention::copy ? copy : dedup; }
};

// One row of a send buffer: the token it carries and, for copy rows, the expert (dedup: -1).
struct RowRef {
  std::int32_t token_idx;
  std::int32_t expert_idx;
};

class RoutingGenerator {
 public:
  // Validates the configuration (InputError naming the setting) and resolves an imbalance
  // target into sigma (sigma_for_imbalance in expected.hpp).
  explicit RoutingGenerator(const RoutingConfig& config);

  [[nodiscard]] const RoutingConfig& config() const { return config_; }
  [[nodiscard]] int num_ranks() const { return config_.num_ranks; }
  [[nodiscard]] int top_k() const { return config_.top_k; }
  [[nodiscard]] int num_experts() const { return config_.num_experts; }
  [[nodiscard]] int ep_size() const { return ep_size_; }
  [[nodiscard]] int num_ep_groups() const { return config_.num_ranks / ep_size_; }
  [[nodiscard]] int ep_group_of(int rank_idx) const { return rank_idx / ep_size_; }
  [[nodiscard]] int experts_per_rank() const { return config_.num_experts / ep_size_; }
  [[nodiscard]] int slots_per_rank() const;
  [[nodiscard]] int expert_group_size() const { return config_.num_experts / config_.num_expert_groups; }
  [[nodiscard]] int max_groups_per_token() const { return config_.settings.groups_per_token; }
  // sigma in use (lognormal; resolved from an imbalance target when one was given), else 0.
  [[nodiscard]] double sigma() const { return sigma_; }
  [[nodiscard]] const std::vector<double>& expert_weights() const { return weights_; }
  // Local ranks (within an EP group) holding expert e: its home rank first, then replicas.
  [[nodiscard]] std::span<const std::int32_t> expert_local_ranks(int expert_idx) const;

  [[nodiscard]] int num_tokens(int src_rank_idx) const;
  [[nodiscard]] int max_tokens_per_rank() const;

  // Routing of one token: k experts (best first) and the global rank each one is sent to.
  void route_token(int src_rank_idx, int token_idx, std::span<std::int32_t> experts_out,
                   std::span<std::int32_t> dest_ranks_out) const;
  [[nodiscard]] RankRouting route_rank(int src_rank_idx) const;
  // Per-destination row counts of one source rank, without keeping the routing.
  [[nodiscard]] DestinationCounts count_destinations(int src_rank_idx) const;
  // The whole run, offline: every source rank's counts.
  [[nodiscard]] CountsMatrices counts_matrices() const;

 private:
  RoutingConfig config_;
  int ep_size_ = 1;
  double sigma_ = 0.0;
  std::vector<double> weights_;
  std::vector<double> inv_weights_;
  std::vector<std::int32_t> replica_offsets_;  // [e], [e+1]: range in replica_ranks_
  std::vector<std::int32_t> replica_ranks_;    // local ranks, home first
  double fast_threshold_ = 0.0;                // starting threshold of the fast selection pass (routing.cpp)

  friend class TokenRouter;
};

// Send layout of one source rank: rows grouped by destination rank (ascending), each group in
// token order and, for copy rows, in choice order. offsets has num_ranks + 1 entries.
struct SendLayout {
  std::vector<std::int64_t> offsets;
  std::vector<RowRef> rows;
};
SendLayout send_layout(const RankRouting& routing, int num_ranks, RowConvention convention);

// The rows `dst_rank_idx` receives from the source whose routing is given, in arrival order
// (the segment of the source's send layout for dst). Receivers regenerate the source's routing
// (route_rank) to know exactly what must arrive.
std::vector<RowRef> rows_for_destination(const RankRouting& routing, int dst_rank_idx, RowConvention convention);

}  // namespace collbench::workload

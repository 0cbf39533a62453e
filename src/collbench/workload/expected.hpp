// Closed forms and exact expectations for MoE dispatch traffic (docs/hardware-context.md section 6), and the
// search that turns an imbalance target (`--imbalance 1.25`) into a log-normal sigma. Pure
// functions; no hardware needed.
//
// Notation: E routed experts, P = ep_size ranks per EP group, k = top_k, T tokens per rank,
// E/P experts per rank (contiguous), w_e normalized expert popularity.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collbench/workload/profile.hpp"
#include "collbench/workload/routing.hpp"

namespace collbench::workload {

// Expected destination ranks per token with uniform routing and no group limit:
//
//   U = P [1 - C(E - E/P, k) / C(E, k)]
//
// Derivation: a token picks k distinct experts uniformly, i.e. a uniform k-subset of E. A given
// rank holds E/P of them and receives the token unless all k picks avoid its experts, which
// happens for C(E - E/P, k) of the C(E, k) subsets. Summing the hit probability over the P ranks
// (linearity of expectation) gives U. The ratio is computed as the exact product
// prod_{i<k} (E - E/P - i) / (E - i), so no factorial overflows. EP8: 5.29, EP64: 7.68, EP256: 8
// (k = 8, E = 256).
double expected_destination_ranks(int num_experts, int ep_size, int top_k);

// Rows a source rank sends per token: copy = k; dedup = U (closed form above).
double expected_rows_per_token(int num_experts, int ep_size, int top_k, RowConvention convention);

// Per-GPU dispatch bytes = T * rows per token * bytes per row. DeepSeek-V3 at T = 4096, FP8
// (7392 B), dedup, uniform unlimited routing: EP8 160 MB, EP16 198 MB, EP32 220 MB,
// EP64 232 MB, EP256 242 MB (MB = 1e6 B); per peer divide by P (EP64: 3.6 MB, EP256: 0.95 MB).
double expected_dispatch_bytes_per_rank(int tokens_per_rank, int num_experts, int ep_size, int top_k,
                                        RowConvention convention, std::int64_t bytes_per_row);

// Exact expected rows per token that each local rank of an EP group receives, for arbitrary
// popularity w, unlimited routing and no redundant slots (vector of P entries; dedup entries sum
// to the expected destination ranks per token, copy entries to k).
//
// Derivation (exponential race): Gumbel-top-k with weights w is the same as giving expert j an
// independent arrival time X_j ~ Exp(w_j) and taking the first k arrivals. For a set A of
// experts (one expert for copy rows, a rank's experts for dedup rows) the first arrival in A is
// Exp(lambda_A) with lambda_A = sum_{j in A} w_j, and A is hit iff fewer than k experts outside
// A arrive before it:
//
//   P(hit A) = int_0^inf lambda_A exp(-lambda_A t) P(N_{not A}(t) < k) dt,
//
// where N_{not A}(t) counts independent Bernoulli(1 - exp(-w_j t)) arrivals, a Poisson-binomial
// whose first k states follow from a DP over experts; prefix and suffix DPs over the contiguous
// blocks give the leave-A-out distribution for every A in O(E k + P k^2) per t. The integral runs
// on a log-spaced grid (trapezoid rule, smooth integrand) around the time tau at which k
// arrivals are expected. Copy rows of a rank = sum of its experts' P(hit).
std::vector<double> expected_rank_rows_per_token(std::span<const double> weights, int ep_size, int top_k,
                                                 RowConvention convention);

// Expected receive imbalance I = max / mean expected rank load of a configuration at this
// log-normal sigma (tokens per rank included; group limit calibrated and redundant slots
// ignored, as in sigma_for_imbalance).
double expected_imbalance(const RoutingConfig& config, double sigma, RowConvention convention);

// The log-normal sigma whose routing gives receive imbalance I = `target_imbalance`
// (max / mean expected rank load in `convention` rows), by bisection: the z_e of the seed and
// layer stay fixed while sigma scales them, so the imbalance grows with sigma.
//
// Unlimited routing: the exact expected loads above. Group-limited routing changes which
// experts are hot together (a lot at EP8, where a group is a rank; little at EP64) and has no
// closed form: a calibration sample of 32768 tokens is routed with and without the limit, the
// same random numbers for both and for every sigma, and the unlimited routing serves as a
// control variate (share = exact unlimited share + (limited - unlimited) / tokens), which keeps
// sampling noise from inflating the max. Redundant slots are ignored on purpose: the target
// describes the skew of the routing, and replicas are the mitigation whose effect the achieved
// imbalance then shows. The achieved imbalance of a run also carries its own sampling noise
// (small at thousands of tokens per rank). InputError when the target is below what the token
// distribution alone gives, or above what any sigma reaches (with dedup rows I <= P / U).
double sigma_for_imbalance(double target_imbalance, const RoutingConfig& config, RowConvention convention);

}  // namespace collbench::workload

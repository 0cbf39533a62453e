// NCCL's own tuning terms that the model uses (NCCL 2.30.7, github.com/NVIDIA/nccl at 5067397c,
// src/graph/tuning.cc: the default tuner constants `baseLatencies` and `hwLatencies`, the ring
// protocols' bandwidth ratings, CollNet Direct's and CollNet Chain's latency formulas and
// CollNet Direct's rating). Values are read from that file, not copied code; every
// formula is derived in docs/model.md ("Protocols" and "CollNet Direct and CollNet Chain").
// Plain constexpr arithmetic on doubles, so each one is testable by hand.
#pragma once

#include <array>
#include <string_view>

namespace collbench::model::nccl {

// ---- ring protocols ----------------------------------------------------------------------------

enum class Protocol { ll, ll128, simple };

// One protocol's ring terms: the base latency (tuning.cc `baseLatencies[Ring][p]`), the per-step
// latency of an NVLink step and of a network step (`hwLatencies[NVLINK|NET][Ring][p]`), and the
// fraction of the Simple protocol's bandwidth it reaches (tuning.cc: ring LL busBw x .5, ring
// LL128 busBw x 0.92; Simple 1).
struct RingProtocol {
  Protocol protocol;
  std::string_view name;
  double base_s;
  double nvlink_hop_s;
  double net_hop_s;
  double bandwidth_factor;
};

// NCCL's defaults. The LL row is what the shipped GPU profiles carry as launch_latency and hop
// latencies (6.6, 0.6 and 2.7 us); the model takes LL's from the profile (estimate: ring_protocols).
inline constexpr std::array<RingProtocol, 3> kRingProtocols{{
    {Protocol::ll, "LL", 6.6e-6, 0.6e-6, 2.7e-6, 0.5},
    {Protocol::ll128, "LL128", 14.0e-6, 1.9e-6, 4.0e-6, 0.92},
    {Protocol::simple, "Simple", 8.4e-6, 3.4e-6, 14.0e-6, 1.0},
}};

// Across nodes NCCL charges every in-node ring step at least the network overhead (tuning.cc
// `getNetOverhead`: 1 us on Intel x86 and other CPUs, 2 us on AMD; the model takes the default,
// 1 us), three times that with Simple ("Inter-node rings still have to launch nsteps * net
// overhead").
inline constexpr double kNetOverheadS = 1.0e-6;
constexpr double ring_intra_step_s(const RingProtocol& p, double nvlink_hop_s, int num_domains) {
  if (num_domains <= 1) return nvlink_hop_s;
  const double overhead = p.protocol == Protocol::simple ? 3.0 * kNetOverheadS : kNetOverheadS;
  return nvlink_hop_s > overhead ? nvlink_hop_s : overhead;
}

// A ring of `steps` steps (2(n-1) for all-reduce, n-1 for reduce-scatter / all-gather) of which
// `net_steps` cross the network (2(R-1), R-1): base + (steps - net_steps) x intra + net_steps x net.
constexpr double ring_protocol_latency_s(double base_s, double intra_step_s, double net_step_s, int steps,
                                         int net_steps) {
  return base_s + (steps - net_steps) * intra_step_s + net_steps * net_step_s;
}

// ---- CollNet (in-network reduction through a CollNet plugin such as SHARP) ---------------------

// hwLatencies[NVLINK][CollNetDirect|CollNetChain][Simple]: 3.7 and 2.8 us (CollNet runs Simple only).
inline constexpr double kCollNetDirectNvlinkS = 3.7e-6;
inline constexpr double kCollNetChainNvlinkS = 2.8e-6;
// CollNet Direct's "arity serialization latency", 0.4 us per other local rank.
inline constexpr double kCollNetDirectArityS = 0.4e-6;

// CollNet Direct (tuning.cc): 2 (min(1, m-1) a_nvl + (m-1) x 0.4 us) + a_net, m GPUs per node.
constexpr double collnet_direct_latency_s(int m, double net_s) {
  const int others = m - 1;
  return 2.0 * ((others < 1 ? others : 1) * kCollNetDirectNvlinkS + others * kCollNetDirectArityS) + net_s;
}

// CollNet Chain (tuning.cc): a chain through the node's m GPUs up and back: 2 (m-1) a_nvl + a_net.
constexpr double collnet_chain_latency_s(int m, double net_s) {
  return 2.0 * (m - 1) * kCollNetChainNvlinkS + net_s;
}

// CollNet Direct's rating: x .85 on compute capability 9.0 and later (every shipped GPU profile).
// NCCL also divides it by a GPU:NIC factor f = ppn / heads, softened to f - (f-1)/2; its heads
// are at most one per GPU (search.cc: the CollNet Direct graph's maxChannels), and with one NIC
// per GPU f = 1, so the factor is 1 on every profile the model accepts (nics_per_gpu >= 1).
inline constexpr double kCollNetDirectRating = 0.85;

}  // namespace collbench::model::nccl

// In-network reduction across domains (InfiniBand SHARP through NCCL's CollNet, or an Ethernet
// equivalent): the plans of NCCL's CollNet Direct and CollNet Chain, of `collnet` (NCCL's choice
// between them), and of NVLS in the domain with in-network reduction across (docs/model.md,
// "In-network all-reduce"). Every plan is pipelined: the NVLink part and the network part stream
// concurrently, so the busier link class sets the time.
#include <fmt/format.h>

#include "collbench/model/algorithm_plans.hpp"
#include "collbench/model/bounds.hpp"
#include "collbench/model/nccl_tuning.hpp"

namespace collbench::model::detail {
namespace {

// Why in-network reduction cannot run this case, if it cannot.
std::optional<NotModelled> in_network_unusable(const Ctx& c) {
  const auto& inr = c.system.scale_out.in_network;
  if (!inr.supported) {
    return NotModelled{fmt::format(
        "system '{}' has no in-network reduction (scale_out.in_network_reduction; off unless the profile enables it, "
        "e.g. --set scale_out.in_network_reduction.supported=true)",
        c.system.name)};
  }
  if (!inr.reduces(c.geometry.dtype)) {
    return NotModelled{fmt::format("the network of '{}' cannot reduce {}", c.system.name, to_string(c.geometry.dtype))};
  }
  if (c.shape.num_domains == 1) return NotModelled{"CollNet reduces across domains; one domain: use nvls or ring"};
  return std::nullopt;
}

// Each NIC of the smallest domain sends its GPU's S/m_min chunk once and receives the sum once.
Phase network_phase(const Ctx& c, double latency_s) {
  return Phase{{{Link::scale_out, in_network_allreduce_nic_bytes(c.bytes, c.shape.m_min)}}, latency_s};
}

// CollNet over NVLink in the domain: the bound's NVLink term is a reduce-scatter plus an
// all-gather, 2(m-1)/m S per GPU and direction, whatever the in-domain pattern.
Plan collnet_nvlink_plan(const Ctx& c, std::string algo, double expected_up_bytes, double latency_s) {
  const double up = 2.0 * ring_gather_scatter_wire_bytes(c.bytes, c.shape.m_max);
  const double out = in_network_allreduce_nic_bytes(c.bytes, c.shape.m_min);
  Plan p(std::move(algo), std::max(up, expected_up_bytes) + out, 1, /*overlap=*/true);
  p.phases.push_back(Phase{{{Link::scale_up, up, expected_up_bytes}}, 0.0});
  p.phases.push_back(network_phase(c, latency_s));
  return p;
}

}  // namespace

// CollNet Direct: every GPU is the head of an S/m chunk (one NIC per GPU). It sends each other
// head that head's share of its buffer directly over NVLink and receives the others' shares of
// its own chunk ((m-1)/m S each way), sends its chunk's partial sum through its NIC once, gets
// the sum back and sends it to every other GPU ((m-1)/m S each way): 2(m-1)/m S per direction on
// NVLink, S/m per NIC. Expected: NCCL's rating x .85 and its latency (nccl_tuning.hpp).
Planned allreduce_collnet_direct(const Ctx& c) {
  if (auto why = in_network_unusable(c)) return *why;
  const int m = c.shape.m_max;
  Plan p = collnet_nvlink_plan(c, "collnet-direct", 0.0,
                               nccl::collnet_direct_latency_s(m, c.system.scale_out.in_network.latency_s));
  if (!c.system.is_cpu()) p.algorithm_efficiency = nccl::kCollNetDirectRating;
  p.note = fmt::format(
      "pipelined; CollNet Direct: direct reduce-scatter/all-gather over NVLink (2(m-1)/m S), each NIC sends and "
      "receives S/{} once; NCCL rating x{:.2f}",
      c.shape.m_min, nccl::kCollNetDirectRating);
  return p;
}

// CollNet Chain: a chain through the domain's GPUs reduces up to the GPU whose NIC sends it, and
// the sum comes back down the chain. A GPU inside the chain receives and sends the whole channel
// share twice (up and down): 2S per direction when m >= 3 (S for m = 2). Channels may start their
// chains at different GPUs, which balances the load to 2(m-1)/m S at best: that is the bound's
// term; the expected value charges 2S, as NCCL's own model of the chain does (its algorithm
// bandwidth is half its NVLink bus bandwidth). NICs: S/m each, the chains' ends spread over them.
Planned allreduce_collnet_chain(const Ctx& c) {
  if (auto why = in_network_unusable(c)) return *why;
  const int m = c.shape.m_max;
  const double chain_bytes = m >= 3 ? 2.0 * c.bytes : (m == 2 ? c.bytes : 0.0);
  Plan p = collnet_nvlink_plan(c, "collnet-chain", chain_bytes,
                               nccl::collnet_chain_latency_s(m, c.system.scale_out.in_network.latency_s));
  p.note = fmt::format(
      "pipelined; CollNet Chain: a chain of {} GPUs up and back over NVLink (expected 2S per GPU, bound 2(m-1)/m S), "
      "each NIC sends and receives S/{} once",
      m, c.shape.m_min);
  return p;
}

// NCCL_ALGO=CollNet enables both and lets NCCL's tuner choose: the faster expected one.
Planned allreduce_collnet(const Ctx& c) {
  if (auto why = in_network_unusable(c)) return *why;
  Plan direct = std::get<Plan>(allreduce_collnet_direct(c));
  Plan chain = std::get<Plan>(allreduce_collnet_chain(c));
  const int r = c.shape.num_domains;
  const double t_direct = plan_expected_time(direct, c.system, r).seconds;
  const double t_chain = plan_expected_time(chain, c.system, r).seconds;
  Plan& best = t_chain < t_direct ? chain : direct;
  best.note += fmt::format("; collnet: predicted {} (expected {:.1f} us against {:.1f} us for {})", best.algo,
                           std::min(t_direct, t_chain) * 1e6, std::max(t_direct, t_chain) * 1e6,
                           &best == &chain ? "collnet-direct" : "collnet-chain");
  return best;
}

// NVLS in the domain ((1 + 1/m) S per GPU and direction, the switch's calibrated cap in the
// expected value) with in-network reduction across: NCCL's NVLS algorithm over several nodes,
// which needs CollNet. Latency: a_nvls + the network's in-network latency.
Planned allreduce_nvls_collnet(const Ctx& c) {
  if (auto why = in_network_unusable(c)) return *why;
  if (c.system.is_cpu() || !c.system.in_switch.reduces(c.geometry.dtype)) {
    return NotModelled{fmt::format("nvls-collnet needs an NVLink switch that reduces {} ('{}' has none)",
                                   to_string(c.geometry.dtype), c.system.name)};
  }
  const double up = nvls_allreduce_wire_bytes(c.bytes, c.shape.m_max);
  Plan p("nvls-collnet", up + in_network_allreduce_nic_bytes(c.bytes, c.shape.m_min), 1, /*overlap=*/true);
  p.phases.push_back(Phase{{{Link::scale_up, up}, {Link::switch_reduce, c.bytes}}, c.system.in_switch.latency_s});
  p.phases.push_back(network_phase(c, c.system.scale_out.in_network.latency_s));
  p.note =
      fmt::format("pipelined; NVLS in the domain, in-network reduction across: each NIC sends and receives S/{} once",
                  c.shape.m_min);
  return p;
}

}  // namespace collbench::model::detail

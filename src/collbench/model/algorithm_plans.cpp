// The plan of every modelled algorithm (bounds.hpp's formulas per phase and link class), and
// how a plan is evaluated at a set of rates. See estimate.cpp for how bound and expected use them.
#include "collbench/model/algorithm_plans.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/bounds.hpp"
#include "collbench/model/fabric.hpp"
#include "collbench/model/nccl_tuning.hpp"

namespace collbench::model::detail {

// Line rates: what the links allow, nothing calibrated. The taper applies to traffic above the
// leaf (fabric.hpp).
Rates bound_rates(const SystemProfile& s, int num_domains) {
  return {s.scale_up.bytes_per_s, scale_out_line_rate(s.scale_out, num_domains), kInf};
}

// Achievable rates. On CPU every MPI transfer is a memory copy by some core while all other
// ranks copy too, so the concurrent copy rate also caps what one rank can expect. Static ECMP
// collisions above the leaf cost what the expected most loaded uplink costs (fabric.hpp).
Rates expected_rates(const SystemProfile& s, int num_domains) {
  Rates r{s.scale_up.bytes_per_s * s.efficiency.scale_up,
          scale_out_line_rate(s.scale_out, num_domains) * s.efficiency.scale_out *
              scale_out_routing_factor(s.scale_out, num_domains),
          kInf};
  if (s.memory_copy_bytes_per_s) {
    r.up = std::min(r.up, *s.memory_copy_bytes_per_s);
    r.out = std::min(r.out, *s.memory_copy_bytes_per_s);
  }
  if (s.in_switch.reduction_cap) r.reduce = s.in_switch.reduction_cap->algbw_bytes_per_s();
  return r;
}

// `expected` selects each term's expected bytes (see Term) instead of its provable minimum.
double plan_transfer_time_s(const Plan& plan, const Rates& rates, bool expected) {
  if (plan.pipelined) {
    // Overlapped phases: each link class carries the sum of its bytes; the slowest link wins.
    std::map<Link, double> per_link;
    for (const auto& phase : plan.phases) {
      for (const auto& t : phase.terms) per_link[t.link] += t.for_estimate(expected);
    }
    double worst = 0.0;
    for (const auto& [link, bytes] : per_link) worst = std::max(worst, transfer_time_s(bytes, rates.of(link)));
    return worst;
  }
  double total = 0.0;
  for (const auto& phase : plan.phases) {
    double slowest = 0.0;
    for (const auto& t : phase.terms) {
      slowest = std::max(slowest, transfer_time_s(t.for_estimate(expected), rates.of(t.link)));
    }
    total += slowest;
  }
  return total;
}

double plan_latency_s(const Plan& plan, const SystemProfile& s) {
  double total = plan.library_calls * s.launch_latency_s;
  for (const auto& phase : plan.phases) total += phase.latency_s;
  return total;
}

ExpectedTime plan_expected_time(const Plan& plan, const SystemProfile& s, int num_domains) {
  const double transfer_s =
      plan_transfer_time_s(plan, expected_rates(s, num_domains), true) / plan.algorithm_efficiency;
  if (plan.protocols.empty()) return {transfer_s + plan_latency_s(plan, s), ""};
  ExpectedTime best{kInf, ""};
  for (const auto& p : plan.protocols) {
    const double t = transfer_s / p.bandwidth_factor + p.latency_s;
    if (t < best.seconds) best = {t, p.name};
  }
  return best;
}

Shape shape_of(const std::vector<int>& sizes) {
  Shape sh;
  sh.num_domains = static_cast<int>(sizes.size());
  sh.n = std::accumulate(sizes.begin(), sizes.end(), 0);
  sh.m_max = *std::max_element(sizes.begin(), sizes.end());
  sh.m_min = *std::min_element(sizes.begin(), sizes.end());
  sh.team = std::accumulate(sizes.begin(), sizes.end(), 0, gcd_int);
  sh.distinct = sizes;
  std::sort(sh.distinct.begin(), sh.distinct.end());
  sh.distinct.erase(std::unique(sh.distinct.begin(), sh.distinct.end()), sh.distinct.end());
  return sh;
}

namespace {

// ---- plans per algorithm ----------------------------------------------------------------------

// NCCL's ring protocols on a GPU profile (nccl_tuning.hpp): LL with the profile's launch and hop
// latencies (NCCL's LL figures), LL128 and Simple with NCCL's; a ring of `steps` steps of which
// `net_steps` cross the network. CPU profiles (MPI) have one protocol: none here.
std::vector<ProtocolOption> ring_protocols(const Ctx& c, int steps, int net_steps) {
  if (c.system.is_cpu()) return {};
  std::vector<ProtocolOption> out;
  for (const auto& p : nccl::kRingProtocols) {
    const bool ll = p.protocol == nccl::Protocol::ll;
    const double base = ll ? c.system.launch_latency_s : p.base_s;
    const double up = ll ? c.system.scale_up.hop_latency_s : p.nvlink_hop_s;
    const double out_hop = ll ? c.system.scale_out.hop_latency_s : p.net_hop_s;
    const double intra = nccl::ring_intra_step_s(p, up, c.shape.num_domains);
    out.push_back({std::string(p.name), nccl::ring_protocol_latency_s(base, intra, out_hop, steps, net_steps),
                   p.bandwidth_factor});
  }
  return out;
}

Plan ring_plan(const Ctx& c, double wire_bytes, double latency_s) {
  Plan p("ring", wire_bytes);
  Phase ph{{{Link::scale_up, wire_bytes}}, latency_s};
  if (c.shape.num_domains > 1) ph.terms.push_back({Link::scale_out, per_nic_share(wire_bytes, c.shape.m_min)});
  p.phases.push_back(ph);
  return p;
}

Plan allreduce_ring(const Ctx& c) {
  const auto& sh = c.shape;
  Plan p = ring_plan(c, ring_allreduce_wire_bytes(c.bytes, sh.n),
                     ring_allreduce_latency_s(sh.n, sh.num_domains, c.system.scale_up.hop_latency_s,
                                              c.system.scale_out.hop_latency_s));
  p.protocols = ring_protocols(c, 2 * (sh.n - 1), 2 * (sh.num_domains - 1));
  return p;
}

Plan allreduce_tree(const Ctx& c) {
  const auto& sh = c.shape;
  // Inside a domain the double tree over m_max GPUs (NCCL uses a chain, which moves at least
  // as much) loads NVLink; across domains the tree over R domains moves its wire bytes per
  // domain, at best spread over that domain's NICs (the smallest domain has the fewest).
  const double up = tree_allreduce_wire_bytes(c.bytes, sh.m_max);
  Plan p("tree", up);
  // NCCL's tuner rates its tree all-reduce at 0.92 of the ring's bus bandwidth
  // (src/graph/tuning.cc); the physical bound is unaffected.
  p.algorithm_efficiency = kNcclTreeEfficiency;
  Phase ph{{{Link::scale_up, up}},
           tree_allreduce_latency_s(sh.m_max, sh.num_domains, c.system.scale_up.hop_latency_s,
                                    c.system.scale_out.hop_latency_s)};
  if (sh.num_domains > 1) {
    ph.terms.push_back({Link::scale_out, per_nic_share(tree_allreduce_wire_bytes(c.bytes, sh.num_domains), sh.m_min)});
  }
  p.phases.push_back(ph);
  return p;
}

// Why the in-switch path cannot run this case, if it cannot.
std::optional<NotModelled> in_switch_unusable(const Ctx& c, bool needs_reduction) {
  const auto& sw = c.system.in_switch;
  if (!sw.supported) return NotModelled{fmt::format("system '{}' has no in-switch reduction (NVLS)", c.system.name)};
  if (needs_reduction && !sw.reduces(c.geometry.dtype)) {
    return NotModelled{fmt::format("the switch of '{}' cannot reduce {}", c.system.name, to_string(c.geometry.dtype))};
  }
  return std::nullopt;
}

// NVLS all-reduce on one domain of m GPUs (multimem.ld_reduce + multimem.st).
Plan allreduce_nvls_plan(const Ctx& c, int m, std::string algo) {
  const double wire = nvls_allreduce_wire_bytes(c.bytes, m);
  Plan p(std::move(algo), wire);
  // The switch_reduce term is the calibrated cap (expected only): each GPU's all-reduce algbw
  // cannot exceed what the switch sustained in the calibration run.
  p.phases.push_back(Phase{{{Link::scale_up, wire}, {Link::switch_reduce, c.bytes}}, c.system.in_switch.latency_s});
  p.note = fmt::format(
      "in-switch: busbw may exceed the link rate; hardware bound busbw {:.0f} GB/s, ld_reduce+st bound {:.0f} GB/s",
      in_switch_allreduce_busbw_bound(m, c.system.scale_up.bytes_per_s) / kBytesPerGB,
      nvls_allreduce_busbw_bound(m, c.system.scale_up.bytes_per_s) / kBytesPerGB);
  if (!c.system.in_switch.reduction_cap) p.note += "; no calibrated switch cap in the profile (expected is optimistic)";
  return p;
}

Planned allreduce_nvls(const Ctx& c, const std::string& algo) {
  if (auto why = in_switch_unusable(c, true)) return *why;
  if (c.shape.num_domains > 1) {
    return NotModelled{
        "NVLS spans one NVLink domain (NCCL needs CollNet to run it across domains); "
        "use nvlstree or hierarchical across domains"};
  }
  return allreduce_nvls_plan(c, c.shape.n, algo);
}

// NVLS-tree (NCCL): NVLS inside each team of g GPUs, a double binary tree across the n/g teams
// over the NICs, pipelined. g = gcd of the domain sizes, so uneven packing shrinks the team.
Planned allreduce_nvlstree(const Ctx& c) {
  if (auto why = in_switch_unusable(c, true)) return *why;
  const auto& sh = c.shape;
  if (sh.num_domains == 1) {
    Plan p = allreduce_nvls_plan(c, sh.n, "nvlstree");
    p.note = "one domain: NVLS-tree reduces to NVLS; " + p.note;
    return p;
  }
  const int g = sh.team;
  const int teams = sh.n / g;
  const double up = nvls_allreduce_wire_bytes(c.bytes, g);
  // Uniform racks: teams are racks, and each rack's tree traffic is spread over its g NICs.
  const double tree_on_nics = per_nic_share(tree_allreduce_wire_bytes(c.bytes, teams), g);
  // NCCL sends a team's tree traffic through its NVLS heads only, at most NCCL_MAX_NVLS_ARITY
  // GPU:NIC pairs per node (src/graph/search.cc): expected only, the bound keeps all g NICs.
  const int heads = nvls_tree_heads(g);
  const double tree_on_heads = per_nic_share(tree_allreduce_wire_bytes(c.bytes, teams), heads);
  double out = tree_on_nics;
  if (g < sh.m_max) {
    // Uneven racks: several teams share a rack and may exchange over NVLink, so only tree edges
    // that cross racks provably use NICs. A team on a crossing edge moves at least S/2 (one
    // tree's half) per direction over its g NICs; a rack-level tree is the other lower bound.
    out = std::max(c.bytes / 2.0 / g, per_nic_share(tree_allreduce_wire_bytes(c.bytes, sh.num_domains), sh.m_min));
  }
  Plan p("nvlstree", up + tree_on_nics, 1, /*overlap=*/true);
  p.phases.push_back(Phase{{{Link::scale_up, up}, {Link::switch_reduce, c.bytes}}, c.system.in_switch.latency_s});
  p.phases.push_back(
      Phase{{{Link::scale_out, out, tree_on_heads}}, 2.0 * ceil_log2(teams) * c.system.in_switch.tree_hop_latency_s});
  p.note = fmt::format("pipelined; NVLS team {} GPUs, tree over {} teams", g, teams);
  if (heads < g) p.note += fmt::format(" through {} NVLS heads per team (expected)", heads);
  if (g < sh.m_max) {
    p.note += fmt::format(
        "; uneven packing {} shrinks the NVLS team to gcd = {} (expected assumes all inter-team tree traffic on NICs, "
        "the bound only the rack-crossing part)",
        packing_string(c.geometry.placement), g);
  }
  return p;
}

// collbench's own composition: reduce-scatter in each domain, all-reduce of S/m across domains
// on each GPU's NIC, all-gather in each domain; three library calls one after another.
Plan allreduce_hierarchical(const Ctx& c) {
  const auto& sh = c.shape;
  const auto& su = c.system.scale_up;
  const auto& so = c.system.scale_out;
  const double in_domain = ring_gather_scatter_wire_bytes(c.bytes, sh.m_max);
  // The smallest domain's GPUs carry the largest chunk S/m_min across.
  const double network = hierarchical_allreduce_network_bytes(c.bytes, sh.m_min, sh.num_domains);
  Plan p("hierarchical", 2.0 * in_domain + network, sh.num_domains > 1 ? 3 : 2);
  p.phases.push_back(Phase{{{Link::scale_up, in_domain}}, (sh.m_max - 1) * su.hop_latency_s});
  if (sh.num_domains > 1) {
    p.phases.push_back(Phase{{{Link::scale_out, network}}, 2.0 * (sh.num_domains - 1) * so.hop_latency_s});
  }
  p.phases.push_back(Phase{{{Link::scale_up, in_domain}}, (sh.m_max - 1) * su.hop_latency_s});
  if (sh.num_domains > 1) {
    Plan pipelined = p;
    pipelined.pipelined = true;
    p.note = fmt::format("sequential RS + network AR + AG; pipelined bound would be {:.1f} us",
                         plan_transfer_time_s(pipelined, bound_rates(c.system, sh.num_domains), false) * 1e6);
  } else {
    p.note = "one domain: reduce-scatter + all-gather";
  }
  return p;
}

Plan gather_scatter_ring(const Ctx& c) {
  const auto& sh = c.shape;
  Plan p = ring_plan(
      c, ring_gather_scatter_wire_bytes(c.bytes, sh.n),
      ring_latency_s(sh.n, sh.num_domains, c.system.scale_up.hop_latency_s, c.system.scale_out.hop_latency_s));
  p.protocols = ring_protocols(c, sh.n - 1, sh.num_domains - 1);
  return p;
}

Planned gather_scatter_nvls(const Ctx& c, const std::string& algo) {
  const bool reduces = collective_facts(c.collective).reduces;
  if (auto why = in_switch_unusable(c, reduces)) return *why;
  if (c.shape.num_domains > 1) return NotModelled{"NVLS reduce-scatter/all-gather span one NVLink domain"};
  if (algo == "nvls" && c.shape.n > kNcclMaxNvlsArity) {
    return NotModelled{fmt::format("NCCL skips NVLS reduce-scatter/all-gather above {} local ranks ({} here)",
                                   kNcclMaxNvlsArity, c.shape.n)};
  }
  const double wire = nvls_gather_scatter_wire_bytes(c.bytes);
  Plan p(algo, wire);
  p.phases.push_back(Phase{{{Link::scale_up, wire}}, c.system.in_switch.latency_s});
  p.note = "in-switch: no bandwidth gain over ring, saves latency and SMs";
  return p;
}

// Reduce-scatter in the domain, then across domains on each GPU's NIC (all-gather: reversed).
Plan gather_scatter_hierarchical(const Ctx& c) {
  const auto& sh = c.shape;
  const double in_domain = ring_gather_scatter_wire_bytes(c.bytes, sh.m_max);
  const double network = hierarchical_gather_scatter_network_bytes(c.bytes, sh.m_min, sh.num_domains);
  Plan p("hierarchical", in_domain + network, sh.num_domains > 1 ? 2 : 1);
  p.phases.push_back(Phase{{{Link::scale_up, in_domain}}, (sh.m_max - 1) * c.system.scale_up.hop_latency_s});
  if (sh.num_domains > 1) {
    p.phases.push_back(Phase{{{Link::scale_out, network}}, (sh.num_domains - 1) * c.system.scale_out.hop_latency_s});
  }
  p.note = sh.num_domains > 1 ? "sequential: in-domain phase, then network phase" : "one domain: plain ring";
  return p;
}

// One-hop latency of a direct exchange: peers are reached concurrently; the slowest link class
// involved sets it. No per-peer overhead is modelled, so small-message expectations are optimistic.
double direct_latency_s(const Ctx& c) {
  return c.shape.num_domains > 1 ? c.system.scale_out.hop_latency_s : c.system.scale_up.hop_latency_s;
}

Plan alltoall_flat(const Ctx& c) {
  const auto& sh = c.shape;
  // Worst rank per link class: the largest domain has the most NVLink peers, the smallest the
  // largest off-domain fraction (72+72+72+40: f = 216/256 = 0.84 for the 40-GPU rack).
  const double up = alltoall_in_domain_fraction(sh.n, sh.m_max) * c.bytes;
  const double out = alltoall_off_domain_fraction(sh.n, sh.m_min) * c.bytes;
  Plan p("flat", collbench::busbw_factor(BusbwRule::n_minus_1_over_n, sh.n) * c.bytes);
  p.phases.push_back(Phase{{{Link::scale_up, up}, {Link::scale_out, out}}, direct_latency_s(c)});
  if (sh.num_domains > 1) {
    p.note = fmt::format("worst off-domain fraction f = {:.4f} (domain of {}), algbw bound = B_out / f",
                         alltoall_off_domain_fraction(sh.n, sh.m_min), sh.m_min);
  }
  return p;
}

// collbench's own: each domain first gathers, per destination domain, what its GPUs send there
// (NVLink), exchanges it across on every GPU's NIC, then scatters it inside the receiving
// domain. Off-domain bytes per NIC stay f S (aggregation merges messages, it does not shrink
// them); NVLink carries the forwarded share (m-1)/m f S on each side in addition.
Plan alltoall_hierarchical(const Ctx& c) {
  const auto& sh = c.shape;
  if (sh.num_domains == 1) {
    Plan p = alltoall_flat(c);
    p.algo = "hierarchical";
    p.note = "one domain: same as flat";
    return p;
  }
  double gather = 0.0;
  double scatter = 0.0;
  for (const int m : sh.distinct) {
    const double f = alltoall_off_domain_fraction(sh.n, m);
    const double forwarded = (m - 1.0) / m * f * c.bytes;
    gather = std::max(gather, alltoall_in_domain_fraction(sh.n, m) * c.bytes + forwarded);
    scatter = std::max(scatter, forwarded);
  }
  const double out = alltoall_off_domain_fraction(sh.n, sh.m_min) * c.bytes;
  Plan p("hierarchical", gather + out + scatter, 3);
  const double up_lat = c.system.scale_up.hop_latency_s;
  p.phases.push_back(Phase{{{Link::scale_up, gather}}, up_lat});
  p.phases.push_back(Phase{{{Link::scale_out, out}}, c.system.scale_out.hop_latency_s});
  p.phases.push_back(Phase{{{Link::scale_up, scatter}}, up_lat});
  p.note = "sequential: aggregate in domain, exchange across, scatter in domain";
  return p;
}

// Broadcast as a pipelined chain (NCCL's ring broadcast): every rank receives S and forwards
// it; each domain receives S once over the network, at best spread over its NICs. A reduce to the
// root is its mirror (the same chain, data flowing towards the root, reduced on the way): the
// same bytes per link and the same (n-1) steps.
Plan rooted_ring(const Ctx& c) {
  const auto& sh = c.shape;
  Plan p = ring_plan(
      c, c.bytes,
      ring_latency_s(sh.n, sh.num_domains, c.system.scale_up.hop_latency_s, c.system.scale_out.hop_latency_s));
  return p;
}

// nccl-tests sendrecv: every rank sends S to the next rank and receives S from the previous one.
// A rank whose neighbour is in another domain sends S over its NIC.
Plan sendrecv_flat(const Ctx& c) {
  const auto& sh = c.shape;
  Plan p("flat", c.bytes);
  Phase ph{{}, direct_latency_s(c)};
  if (sh.m_max > 1) ph.terms.push_back({Link::scale_up, c.bytes});
  if (sh.num_domains > 1) ph.terms.push_back({Link::scale_out, c.bytes});
  p.phases.push_back(ph);
  return p;
}

// Gather to (or scatter from) the root, as NCCL's point-to-point: the root receives (sends) one
// chunk of S/n from (to) every other rank at once, the chunks of its domain over NVLink and the
// others' over its NICs: the links of one rank of an all-to-all of S (alltoall_flat's worst rank).
Plan rooted_direct(const Ctx& c) {
  Plan p = alltoall_flat(c);
  p.note = "the root's links: (m-1)/n S over NVLink, (n-m)/n S over its NICs" +
           std::string(p.note.empty() ? "" : "; ") + p.note;
  return p;
}

// ---- algorithm selection -----------------------------------------------------------------------

NotModelled no_variant(const std::string& collective, const std::string& algo, std::string_view modelled) {
  return NotModelled{fmt::format("{} has no modelled '{}' variant (modelled: {})", collective, algo, modelled)};
}

Planned allreduce_plan(const Ctx& c, const std::string& algo) {
  if (algo == "ring") return allreduce_ring(c);
  if (algo == "tree") return allreduce_tree(c);
  if (algo == "nvls" || algo == "cb-multimem") return allreduce_nvls(c, algo);
  if (algo == "nvlstree") return allreduce_nvlstree(c);
  if (algo == "hierarchical") return allreduce_hierarchical(c);
  if (algo == "collnet") return allreduce_collnet(c);
  if (algo == "collnet-direct") return allreduce_collnet_direct(c);
  if (algo == "collnet-chain") return allreduce_collnet_chain(c);
  if (algo == "nvls-collnet") return allreduce_nvls_collnet(c);
  return no_variant(c.geometry.collective, algo,
                    "auto, flat, ring, tree, nvls, nvlstree, cb-multimem, hierarchical, collnet, collnet-direct, "
                    "collnet-chain, nvls-collnet");
}

Planned gather_scatter_plan(const Ctx& c, const std::string& algo) {
  if (algo == "ring") return gather_scatter_ring(c);
  if (algo == "nvls" || algo == "cb-multimem") return gather_scatter_nvls(c, algo);
  if (algo == "hierarchical") return gather_scatter_hierarchical(c);
  return no_variant(c.geometry.collective, algo, "auto, flat, ring, nvls, cb-multimem, hierarchical");
}

Planned alltoall_plan(const Ctx& c, const std::string& algo) {
  // linear: the MPI backend's posted schedule, every peer at once, the direct exchange flat models.
  if (algo == "flat" || algo == "linear") {
    Plan p = alltoall_flat(c);
    p.algo = algo;
    if (c.collective == CollectiveId::alltoallv) {
      p.note += std::string(p.note.empty() ? "" : "; ") +
                "uniform spread of the max rank's bytes (use the traffic-matrix model for real counts)";
    }
    return p;
  }
  if (algo == "hierarchical") return alltoall_hierarchical(c);
  return no_variant(c.geometry.collective, algo, "auto, flat, linear, hierarchical");
}

}  // namespace

std::vector<std::string> auto_candidates(const Ctx& c) {
  const bool gpu = !c.system.is_cpu();
  const bool switch_reduces = c.system.in_switch.reduces(c.geometry.dtype);
  switch (collective_facts(c.collective).model) {
    case ModelPlan::allreduce: {
      std::vector<std::string> out{"ring", "tree"};
      if (gpu && switch_reduces) out.emplace_back(c.shape.num_domains == 1 ? "nvls" : "nvlstree");
      // In-network reduction only where the profile enables it (docs/model.md, CollNet).
      if (gpu && c.shape.num_domains > 1 && c.system.scale_out.in_network.reduces(c.geometry.dtype)) {
        out.insert(out.end(), {"collnet-direct", "collnet-chain"});
        if (switch_reduces) out.emplace_back("nvls-collnet");
      }
      return out;
    }
    case ModelPlan::ring_chunks: {
      std::vector<std::string> out{"ring"};
      const bool switch_ok = collective_facts(c.collective).reduces ? switch_reduces : c.system.in_switch.supported;
      if (gpu && switch_ok && c.shape.num_domains == 1 && c.shape.n <= kNcclMaxNvlsArity) out.emplace_back("nvls");
      return out;
    }
    case ModelPlan::rooted_pipeline:
      return {"ring"};
    default:
      return {"flat"};
  }
}

Planned plan_for(const Ctx& c, const std::string& algo) {
  const std::string& coll = c.geometry.collective;
  switch (collective_facts(c.collective).model) {
    case ModelPlan::allreduce:
      return allreduce_plan(c, algo);
    case ModelPlan::ring_chunks:
      return gather_scatter_plan(c, algo);
    case ModelPlan::exchange:
      return alltoall_plan(c, algo);
    case ModelPlan::rooted_pipeline:
      if (algo == "ring" || algo == "flat") return rooted_ring(c);
      return no_variant(coll, algo, "auto, flat, ring");
    case ModelPlan::point_to_point:
      if (algo == "flat" || algo == "ring") return sendrecv_flat(c);
      return no_variant(coll, algo, "auto, flat");
    case ModelPlan::rooted_direct:
      if (algo == "flat") return rooted_direct(c);
      return no_variant(coll, algo, "auto, flat");
    case ModelPlan::none:
      break;
  }
  return NotModelled{unknown_name_message("collective", coll, modelled_collectives())};
}

bool flat_is_direct(CollectiveId id) {
  const ModelPlan m = collective_facts(id).model;
  return m == ModelPlan::exchange || m == ModelPlan::point_to_point || m == ModelPlan::rooted_direct;
}

}  // namespace collbench::model::detail

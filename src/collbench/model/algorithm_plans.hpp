// Internal to the model: an algorithm as a Plan (phases of bytes per rank over link classes),
// the rates a plan is evaluated at, and the plan of every modelled algorithm of every modelled
// collective (algorithm_plans.cpp). estimate.cpp turns plans into estimates and picks among
// them for `auto`.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "collbench/core/collective_facts.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"

namespace collbench::model::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// NCCL does not run NVLS reduce-scatter / all-gather with more local ranks than this
// (NCCL_MAX_NVLS_ARITY in src/include/device.h); all-reduce has no such limit.
constexpr int kNcclMaxNvlsArity = 32;

// NCCL's NVLS graph has at most min(NCCL_MAX_NVLS_ARITY, GPUs per node) channels, one head
// (a GPU and its NIC) each (src/graph/search.cc); NVLS-tree's inter-node traffic goes through
// the heads only.
constexpr int nvls_tree_heads(int team) {
  return team < kNcclMaxNvlsArity ? team : kNcclMaxNvlsArity;
}

// NCCL's own model of its tree all-reduce relative to ring bandwidth (busBw * .92 in
// src/graph/tuning.cc): an implementation property, used in expected values only.
constexpr double kNcclTreeEfficiency = 0.92;

enum class Link { scale_up, scale_out, switch_reduce };

struct Term {
  Link link;
  double bytes;                // per rank, per direction, on this link class (the bound's)
  double expected_bytes = -1;  // when the expected traffic exceeds the provable minimum
  // Expected traffic is never below the bound's, so expected can never beat the bound.
  [[nodiscard]] double for_estimate(bool expected) const { return expected ? std::max(expected_bytes, bytes) : bytes; }
};

struct Phase {
  Phase() = default;
  Phase(std::vector<Term> concurrent, double latency) : terms(std::move(concurrent)), latency_s(latency) {}
  std::vector<Term> terms;  // concurrent within the phase
  double latency_s = 0.0;
};

// A protocol the library may run a plan with (NCCL's ring: LL, LL128, Simple). Its latency
// replaces the phases' latencies and the launch latency; its factor scales the expected
// bandwidth. The expected value is the fastest protocol's (NCCL's tuner picks the same way).
struct ProtocolOption {
  std::string name;
  double latency_s = 0.0;
  double bandwidth_factor = 1.0;
};

struct Plan {
  Plan() = default;
  Plan(std::string name, double wire_bytes, int calls = 1, bool overlap = false)
      : algo(std::move(name)), pipelined(overlap), library_calls(calls), wire_bytes_per_rank(wire_bytes) {}
  std::string algo;
  std::vector<Phase> phases;
  bool pipelined = false;  // phases overlap: each link's total bytes set the time
  int library_calls = 1;   // each call pays the profile's launch latency
  double wire_bytes_per_rank = 0.0;
  // Efficiency of the library's implementation of this algorithm relative to its ring, on top
  // of the profile's link efficiencies (expected only).
  double algorithm_efficiency = 1.0;
  std::vector<ProtocolOption> protocols;  // empty: one protocol, latency from the phases and launches
  std::string note;
};

struct NotModelled {
  std::string reason;
};

using Planned = std::variant<Plan, NotModelled>;

struct Rates {
  double up = 0.0;
  double out = 0.0;
  double reduce = kInf;  // the switch's reduction throughput per GPU (expected only)

  [[nodiscard]] double of(Link link) const {
    switch (link) {
      case Link::scale_up:
        return up;
      case Link::scale_out:
        return out;
      case Link::switch_reduce:
        return reduce;
    }
    return up;
  }
};

// The facts of a placement the formulas need.
struct Shape {
  int n = 0;
  int num_domains = 0;
  int m_max = 0;
  int m_min = 0;
  int team = 0;               // gcd of the domain sizes (NCCL's NVLS team)
  std::vector<int> distinct;  // distinct domain sizes
};

struct Ctx {
  const SystemProfile& system;
  const CaseGeometry& geometry;
  CollectiveId collective;  // geometry.collective's
  Shape shape;
  double bytes;  // S
};

// Line rates of a job over `num_domains` domains: what the links allow, nothing calibrated.
Rates bound_rates(const SystemProfile& s, int num_domains);
// Achievable rates (calibrated efficiencies, static-ECMP collisions above the leaf, and on CPU
// the concurrent memory-copy rate).
Rates expected_rates(const SystemProfile& s, int num_domains);
// `expected` selects each term's expected bytes (see Term) instead of its provable minimum.
double plan_transfer_time_s(const Plan& plan, const Rates& rates, bool expected);
double plan_latency_s(const Plan& plan, const SystemProfile& s);

// The expected time of a plan (achievable rates, algorithm efficiency, latencies; the fastest of
// its protocols when it has several) and the protocol that gives it ("" without protocols).
struct ExpectedTime {
  double seconds = 0.0;
  std::string protocol;
};
ExpectedTime plan_expected_time(const Plan& plan, const SystemProfile& s, int num_domains);

Shape shape_of(const std::vector<int>& sizes);

// In-network reduction across domains (collnet_plans.cpp): NCCL's CollNet Direct and CollNet
// Chain, `collnet` (the faster of the two, as NCCL_ALGO=CollNet leaves the choice to NCCL's
// tuner) and NVLS in the domain with in-network reduction across (nvls-collnet).
Planned allreduce_collnet_direct(const Ctx& c);
Planned allreduce_collnet_chain(const Ctx& c);
Planned allreduce_collnet(const Ctx& c);
Planned allreduce_nvls_collnet(const Ctx& c);

// The candidates NCCL's tuner chooses from for `auto` (it picks the lowest modelled time).
std::vector<std::string> auto_candidates(const Ctx& c);
// The plan of `algo` for the case, or why that variant is not modelled.
Planned plan_for(const Ctx& c, const std::string& algo);
// Direct exchanges, whose `flat` is the one library call modelled as such; for the others
// `flat` (one call over all ranks) is the library's own choice, modelled as `auto`.
bool flat_is_direct(CollectiveId id);

}  // namespace collbench::model::detail

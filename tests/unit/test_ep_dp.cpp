// ep-dp-concurrent (coll/ep_dp.cpp): shapes, the exchange simulated on the host (all-to-all inside
// each domain, all-reduce across domains) verifying with 0 wrong and catching one wrong element in
// either part or a block from the wrong domain, waiver reasons, parameters, the parts the model
// bounds, and the acceptance side: the max_interference threshold (parse and judge) and the
// shipped GB200/GB300 profiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collbench/accept/judge.hpp"
#include "collbench/accept/profile.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"

namespace {

using namespace collbench;

const coll::Collective& epdp() {
  return coll::find_collective("ep-dp-concurrent");
}

coll::CaseContext context(int rank, const std::vector<int>& sizes, Dtype dtype = Dtype::float32,
                          Redop redop = Redop::sum, const std::map<std::string, std::string>* params = nullptr) {
  coll::CaseContext ctx;
  ctx.dtype = dtype;
  ctx.redop = redop;
  int n = 0;
  for (int s : sizes) n += s;
  ctx.rank = rank;
  ctx.num_ranks = n;
  ctx.params = params;
  ctx.placement = placement_from_sizes(n, sizes);
  return ctx;
}

std::string waiver_text(const coll::CaseContext& ctx) {
  return epdp().waiver(ctx).value_or("(none)");
}

TEST(EpDp, Registered) {
  const auto names = coll::collective_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "ep-dp-concurrent"), names.end());
  EXPECT_TRUE(epdp().uses_levels());
  EXPECT_TRUE(epdp().has_redop());
  EXPECT_DOUBLE_EQ(epdp().busbw_factor(8), 0.0);  // no bus bandwidth: judged on time
  EXPECT_EQ(epdp().side_operations({}), (std::vector<std::string>{"ep_alone", "dp_alone"}));
  EXPECT_FALSE(coll::find_collective("alltoall").uses_levels());
}

TEST(EpDp, ShapeFollowsTheDomainAndDpBytes) {
  // 8 ranks in 2 domains of 4, float32, 1 MiB: all-to-all of 4 blocks of 65536 elements.
  const auto ctx = context(5, {4, 4});
  const auto s = epdp().shape_for(1u << 20, ctx);
  EXPECT_EQ(s.count, 262144u);
  EXPECT_EQ(s.bytes, 1u << 20);
  EXPECT_EQ(s.send_elems, 262144u + 262144u);  // dp_bytes defaults to the requested bytes
  EXPECT_EQ(s.recv_elems, s.send_elems);
  EXPECT_EQ(s.bytes_per_rank_send, 2u << 20);
  EXPECT_EQ(epdp().size_label(s, ctx), "dp_bytes=1048576");

  const std::map<std::string, std::string> params{{"dp_bytes", "64K"}};
  const auto ctx2 = context(5, {4, 4}, Dtype::float32, Redop::sum, &params);
  const auto s2 = epdp().shape_for(1000, ctx2);
  // 250 elements over 4 peers: 62, rounded down to whole 16-byte units (4 elements) -> 60.
  EXPECT_EQ(s2.count, 240u);
  EXPECT_EQ(s2.bytes, 960u);
  EXPECT_EQ(s2.send_elems, 240u + 16384u);
  EXPECT_EQ(epdp().size_label(s2, ctx2), "dp_bytes=65536");
}

TEST(EpDp, ConcurrentPartsForTheModel) {
  const std::map<std::string, std::string> params{{"dp_bytes", "4M"}};
  const auto ctx = context(0, {4, 4, 4}, Dtype::bfloat16, Redop::sum, &params);
  const auto s = epdp().shape_for(1u << 20, ctx);
  const auto parts = epdp().concurrent_parts(s, ctx);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "ep");
  EXPECT_EQ(parts[0].collective, "alltoall");
  EXPECT_EQ(parts[0].bytes, 1u << 20);
  EXPECT_EQ(parts[0].ranks, 4);
  EXPECT_EQ(parts[0].scope, Scope::domain);
  EXPECT_EQ(parts[0].placement.domain_sizes, (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(parts[1].name, "dp");
  EXPECT_EQ(parts[1].collective, "allreduce");
  EXPECT_EQ(parts[1].bytes, 4u << 20);
  EXPECT_EQ(parts[1].ranks, 3);
  EXPECT_EQ(parts[1].scope, Scope::global);
  EXPECT_EQ(parts[1].placement.domain_sizes, (std::vector<int>{1, 1, 1}));  // every hop crosses domains
  EXPECT_TRUE(coll::find_collective("allreduce").concurrent_parts(s, ctx).empty());
}

// The exchange on the host: rank r's result = all-to-all of its domain's inputs + the reduction of
// the inputs of the ranks with its local index (one per domain).
struct Simulation {
  std::vector<int> sizes;
  Dtype dtype;
  Redop redop;
  std::vector<coll::Shape> shapes;
  std::vector<std::vector<unsigned char>> send, recv;
};

Simulation simulate(const std::vector<int>& sizes, Dtype dtype, Redop redop, std::uint64_t bytes) {
  Simulation sim{sizes, dtype, redop, {}, {}, {}};
  int n = 0;
  for (int s : sizes) n += s;
  const int m = sizes[0];
  const int domains = static_cast<int>(sizes.size());
  const std::size_t elem = dtype_size(dtype);
  for (int r = 0; r < n; ++r) {
    const auto ctx = context(r, sizes, dtype, redop);
    sim.shapes.push_back(epdp().shape_for(bytes, ctx));
    sim.send.emplace_back(sim.shapes.back().send_elems * elem);
    epdp().fill(sim.send.back().data(), sim.shapes.back(), ctx);
    sim.recv.emplace_back(sim.shapes.back().recv_elems * elem);
  }
  const std::size_t per_peer = sim.shapes[0].count / static_cast<std::size_t>(m);
  const std::size_t ep = sim.shapes[0].count;
  const std::size_t dp = sim.shapes[0].send_elems - ep;
  for (int r = 0; r < n; ++r) {
    const int d = r / m;
    const int l = r % m;
    for (int src = 0; src < m; ++src) {  // block l of (d, src) lands at block src of r
      const int g = d * m + src;
      std::copy_n(sim.send[g].begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * per_peer * elem),
                  per_peer * elem,
                  sim.recv[r].begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(src) * per_peer * elem));
    }
    for (std::size_t i = 0; i < dp; ++i) {
      double acc = load_element(sim.send[l].data(), ep + i, dtype);
      for (int e = 1; e < domains; ++e) {
        const double v = load_element(sim.send[e * m + l].data(), ep + i, dtype);
        switch (redop) {
          case Redop::sum:
            acc += v;
            break;
          case Redop::prod:
            acc *= v;
            break;
          case Redop::min:
            acc = std::min(acc, v);
            break;
          case Redop::max:
            acc = std::max(acc, v);
            break;
        }
      }
      store_element(sim.recv[r].data(), ep + i, dtype, acc);
    }
  }
  return sim;
}

std::uint64_t verify_rank(const Simulation& sim, int r) {
  return epdp().verify(sim.recv[static_cast<std::size_t>(r)].data(), sim.shapes[static_cast<std::size_t>(r)],
                       context(r, sim.sizes, sim.dtype, sim.redop));
}

TEST(EpDp, VerifiesTheSimulatedExchangeExactly) {
  for (const Dtype dtype : {Dtype::float32, Dtype::bfloat16, Dtype::int32, Dtype::float8e4m3}) {
    for (const Redop redop : {Redop::sum, Redop::max, Redop::prod}) {
      const auto sim = simulate({4, 4, 4}, dtype, redop, 4096);
      for (int r = 0; r < 12; ++r) EXPECT_EQ(verify_rank(sim, r), 0u) << to_string(dtype) << " rank " << r;
    }
  }
}

TEST(EpDp, CatchesOneWrongElementInEitherPart) {
  auto sim = simulate({2, 2}, Dtype::float32, Redop::sum, 1024);
  const std::size_t ep = sim.shapes[0].count;
  const std::size_t total = sim.shapes[0].recv_elems;
  auto flip = [&](int rank, std::size_t i) {
    auto* p = sim.recv[static_cast<std::size_t>(rank)].data();
    store_element(p, i, Dtype::float32, coll::corrupted(load_element(p, i, Dtype::float32)));
  };
  flip(3, ep / 2);  // the all-to-all part
  EXPECT_EQ(verify_rank(sim, 3), 1u);
  EXPECT_EQ(verify_rank(sim, 2), 0u);
  flip(1, ep + (total - ep) / 2);  // the all-reduce part
  EXPECT_EQ(verify_rank(sim, 1), 1u);
  EXPECT_EQ(verify_rank(sim, 0), 0u);
}

TEST(EpDp, CatchesABlockFromTheWrongDomainOrRail) {
  auto sim = simulate({2, 2}, Dtype::float32, Redop::sum, 1024);
  const std::size_t per_peer = sim.shapes[0].count / 2;
  const std::size_t ep = sim.shapes[0].count;
  // Rank 0's block from rank 1 replaced by rank 3's block for local index 0 (same local ranks, other domain).
  auto& r0 = sim.recv[0];
  std::copy_n(sim.send[3].begin(), per_peer * 4, r0.begin() + static_cast<std::ptrdiff_t>(per_peer * 4));
  EXPECT_GT(verify_rank(sim, 0), per_peer / 2);  // values mix (src, dst, i): most differ
  // Rank 1's all-reduce result replaced by rank 0's (the other rail's sum).
  auto sim2 = simulate({2, 2}, Dtype::float32, Redop::sum, 1024);
  const std::size_t dp = sim2.shapes[0].recv_elems - ep;
  std::copy_n(sim2.recv[0].begin() + static_cast<std::ptrdiff_t>(ep * 4), dp * 4,
              sim2.recv[1].begin() + static_cast<std::ptrdiff_t>(ep * 4));
  EXPECT_GT(verify_rank(sim2, 1), 0u);
}

TEST(EpDp, WaiverReasons) {
  EXPECT_EQ(waiver_text(context(0, {2, 2})), "(none)");
  EXPECT_NE(waiver_text(context(0, {4})).find("needs at least 2 domains"), std::string::npos)
      << waiver_text(context(0, {4}));
  const auto uneven = waiver_text(context(0, {4, 2}));
  EXPECT_NE(uneven.find("equal domain sizes"), std::string::npos) << uneven;
  EXPECT_NE(uneven.find("4,2"), std::string::npos) << uneven;
  auto interleaved = context(0, {2, 2});
  interleaved.placement.interleaved = {0, 1, 0, 1};  // hosts alternate between the two domains
  EXPECT_NE(waiver_text(interleaved).find("needs rack-major ranks"), std::string::npos) << waiver_text(interleaved);
  auto ring = context(0, {2, 2});
  ring.algo = "ring";
  EXPECT_NE(waiver_text(ring).find("--algo ring does not apply (use auto)"), std::string::npos) << waiver_text(ring);
  const std::map<std::string, std::string> tiny{{"dp_bytes", "2"}};
  const auto small = waiver_text(context(0, {2, 2}, Dtype::float32, Redop::sum, &tiny));
  EXPECT_NE(small.find("smaller than one float32 element"), std::string::npos) << small;
}

std::string params_error(const std::map<std::string, std::string>& params) {
  try {
    epdp().check_params(params);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(EpDp, Parameters) {
  EXPECT_EQ(params_error({{"dp_bytes", "64M"}}), "(no error)");
  const auto unknown = params_error({{"tokens", "8"}});
  EXPECT_NE(unknown.find("unknown parameter 'tokens'; accepted: dp_bytes"), std::string::npos) << unknown;
  const auto bad = params_error({{"dp_bytes", "12Q"}});
  EXPECT_NE(bad.find("dp_bytes '12Q'"), std::string::npos) << bad;
  const auto zero = params_error({{"dp_bytes", "0"}});
  EXPECT_NE(zero.find("must be at least one element"), std::string::npos) << zero;
}

// ---- acceptance ----

std::string profile_error(const std::string& yaml) {
  try {
    accept::parse_acceptance_profile(yaml, "t.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string check_yaml(const std::string& collective, const std::string& threshold) {
  return "name: t\nchecks:\n  - name: c\n    collective: " + collective +
         "\n    bytes: 1M\n    threshold: " + threshold + "\n";
}

TEST(EpDpAccept, ParsesMaxInterferenceAndDpBytes) {
  const auto p = accept::parse_acceptance_profile(R"(name: t
checks:
  - name: epdp
    collective: ep-dp-concurrent
    bytes: [1M, 4M]
    dp_bytes: 16M
    threshold: {max_interference: 1.25, max_time_us: 5000}
)",
                                                  "t.yaml");
  ASSERT_EQ(p.checks.size(), 1u);
  EXPECT_EQ(p.checks[0].threshold.max_interference, 1.25);
  EXPECT_TRUE(p.checks[0].threshold.has_absolute());
  EXPECT_EQ(p.checks[0].base.params.at("dp_bytes"), "16M");
  const auto& keys = accept::threshold_keys();
  EXPECT_NE(std::find(keys.begin(), keys.end(), "max_interference"), keys.end());
}

TEST(EpDpAccept, RejectsBadMaxInterference) {
  const auto below = profile_error(check_yaml("ep-dp-concurrent", "{max_interference: 0.9}"));
  EXPECT_NE(below.find("t.yaml:6: key 'checks[0] (c).threshold.max_interference': must be at least 1"),
            std::string::npos)
      << below;
  const auto text = profile_error(check_yaml("ep-dp-concurrent", "{max_interference: fast}"));
  EXPECT_NE(text.find("expected a number, got 'fast'"), std::string::npos) << text;
  const auto huge = profile_error(check_yaml("ep-dp-concurrent", "{max_interference: 1000}"));
  EXPECT_NE(huge.find("must be in (0, 100]"), std::string::npos) << huge;
  const auto other = profile_error(check_yaml("allreduce", "{max_interference: 1.5}"));
  EXPECT_NE(other.find("applies only to the concurrent families (ep-dp-concurrent), not allreduce"), std::string::npos)
      << other;
  const auto param = profile_error(
      "name: t\nchecks:\n  - name: c\n    collective: ep-dp-concurrent\n    bytes: 1M\n    dp_bytes: 0\n"
      "    threshold: {max_interference: 1.5}\n");
  EXPECT_NE(param.find("dp_bytes '0': must be at least one element"), std::string::npos) << param;
}

record::CaseRecord concurrent_record(const accept::PlannedCase& pc, double both_us, std::optional<double> ratio) {
  record::CaseRecord r;
  r.collective = pc.spec.collective;
  r.algo_requested = pc.spec.algo;
  r.backend = pc.spec.backend;
  r.dtype = std::string(to_string(pc.spec.dtype));
  r.scope = std::string(to_string(pc.spec.scope));
  r.bytes = pc.bytes;
  r.num_ranks = 4;
  r.domain_sizes = {2, 2};
  r.num_domains = 2;
  record::TimeStats t;
  t.p50 = t.mean = t.min = t.max = t.p99 = both_us;
  r.time_us = t;
  r.algbw_gbps = gbps(static_cast<double>(pc.bytes), both_us);
  r.busbw_gbps = 0.0;
  r.per_rank = record::PerRank{std::vector<double>(4, both_us), std::vector<double>(4, both_us),
                               std::vector<double>(4, both_us / 2)};
  if (ratio) {
    r.extra["concurrent"] = {{"ep_alone_us", both_us / *ratio},
                             {"dp_alone_us", both_us / *ratio / 2},
                             {"both_us", both_us},
                             {"interference", *ratio}};
  }
  return r;
}

accept::AcceptReport judge_with(const std::string& yaml, const std::vector<std::optional<double>>& ratios) {
  static accept::AcceptanceProfile profile;
  static std::vector<accept::PlacementGroup> groups;
  profile = accept::parse_acceptance_profile(yaml, "t.yaml");
  groups = accept::plan_acceptance(profile, [](const std::optional<int>&, const std::optional<std::string>&) {
    return placement_from_sizes(4, {2, 2});
  });
  std::vector<accept::GroupRecords> records;
  for (const auto& g : groups) {
    accept::GroupRecords gr;
    gr.group = &g;
    for (std::size_t i = 0; i < g.cases.size(); ++i) {
      gr.records.push_back(concurrent_record(g.cases[i], 100.0, ratios[i % ratios.size()]));
    }
    records.push_back(std::move(gr));
  }
  return accept::judge(profile, records, nullptr);
}

TEST(EpDpAccept, JudgesTheInterferenceRatio) {
  const std::string yaml = R"(name: t
checks:
  - name: epdp
    collective: ep-dp-concurrent
    bytes: 1M
    repetitions: 3
    threshold: {max_interference: 1.3}
)";
  // Median of 1.1, 1.2, 1.6 = 1.2 <= 1.3.
  auto rep = judge_with(yaml, {1.1, 1.2, 1.6});
  ASSERT_EQ(rep.rows.size(), 1u);
  EXPECT_EQ(rep.rows[0].verdict, accept::Verdict::pass) << rep.rows[0].reason;
  EXPECT_EQ(rep.rows[0].interference, 1.2);
  EXPECT_NE(rep.rows[0].reason.find("interference 1.2 <= 1.3 (ceiling)"), std::string::npos) << rep.rows[0].reason;
  // Median 1.6 > 1.3.
  rep = judge_with(yaml, {1.6, 1.7, 1.2});
  EXPECT_EQ(rep.rows[0].verdict, accept::Verdict::fail);
  EXPECT_NE(rep.rows[0].reason.find("interference 1.6 > 1.3 (ceiling)"), std::string::npos) << rep.rows[0].reason;
  // Policy best: the smallest ratio.
  const std::string best = yaml + "    policy: best\n";
  rep = judge_with(best, {1.6, 1.7, 1.2});
  EXPECT_EQ(rep.rows[0].verdict, accept::Verdict::pass) << rep.rows[0].reason;
  // Records without the ratio cannot be judged on it.
  rep = judge_with(yaml, {std::nullopt});
  EXPECT_EQ(rep.rows[0].verdict, accept::Verdict::fail);
  EXPECT_NE(rep.rows[0].reason.find("cannot judge"), std::string::npos) << rep.rows[0].reason;
  EXPECT_NE(rep.rows[0].reason.find("the records carry no interference ratio"), std::string::npos)
      << rep.rows[0].reason;
}

TEST(EpDpAccept, ShippedGpuProfilesCarryTheCheck) {
  for (const std::string name : {"gb300-nvl72", "gb200-nvl72"}) {
    const auto p =
        accept::load_acceptance_profile(std::string(COLLBENCH_SOURCE_DIR) + "/profiles/acceptance/" + name + ".yaml");
    const auto it = std::find_if(p.checks.begin(), p.checks.end(),
                                 [](const accept::Check& c) { return c.name == "fabric-ep-dp-concurrent"; });
    ASSERT_NE(it, p.checks.end()) << name;
    EXPECT_EQ(it->base.collective, "ep-dp-concurrent");
    EXPECT_EQ(it->base.scope, Scope::global);
    EXPECT_EQ(it->base.params.at("dp_bytes"), "512M");
    EXPECT_TRUE(it->threshold.max_interference.has_value());
    EXPECT_TRUE(it->threshold.fraction_of_expected.has_value());
  }
}

}  // namespace

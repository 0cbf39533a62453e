// MoE harness plumbing: parameters, cached workloads, waivers (see moe_plan.hpp; the buffer layouts
// and traffic in moe_layout.cpp).
#include "collbench/coll/moe_plan.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <deque>
#include <mutex>

#include "collbench/core/error.hpp"
#include "collbench/core/join.hpp"
#include "collbench/yamlio/structure.hpp"

namespace collbench::coll {
namespace {

using workload::CountsMatrix;

int parse_int_param(const std::string& key, const std::string& text, int min_value) {
  int v = 0;
  const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc{} || res.ptr != text.data() + text.size() || v < min_value) {
    throw InputError(fmt::format("moe parameter '{}': '{}' is not an integer >= {}", key, text, min_value));
  }
  return v;
}

std::string cache_key(const MoeParams& p, int n) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", p.workload, p.tokens ? *p.tokens : -1, p.routing,
                     p.ep_size ? *p.ep_size : -1, p.imbalance.value_or("-"), p.seed.value_or("-"),
                     p.rows ? workload::to_string(*p.rows) : "-", n);
}

// The counts matrices shared over the processes (share_moe_counts), by cache key: the last 4.
// Only share_moe_counts adds to it, so every process of a run holds the same keys.
class SharedCounts {
 public:
  static SharedCounts& instance() {
    static SharedCounts store;
    return store;
  }
  std::shared_ptr<const CountsMatrix> find(const std::string& key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [k, m] : store_) {
      if (k == key) return m;
    }
    return nullptr;
  }
  void add(const std::string& key, std::shared_ptr<const CountsMatrix> m) {
    const std::lock_guard<std::mutex> lock(mutex_);
    store_.emplace_back(key, std::move(m));
    if (store_.size() > 4) store_.pop_front();
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<std::string, std::shared_ptr<const CountsMatrix>>> store_;
};

// Every rank's tokens routed here: the whole matrix on this process.
std::shared_ptr<const CountsMatrix> routed_counts(const workload::RoutingGenerator& g, workload::RowConvention rows) {
  return std::make_shared<const CountsMatrix>(g.counts_matrices().rows(rows));
}

}  // namespace

void share_moe_counts(const MoeParams& params, int num_ranks, RowGather& gather) {
  const std::string key = cache_key(params, num_ranks);
  if (SharedCounts::instance().find(key)) return;
  const MoeConfig config = moe_config(params, num_ranks);
  const workload::RoutingGenerator generator(config.routing);
  auto m = std::make_shared<CountsMatrix>();
  m->num_ranks = num_ranks;
  // Tokens stay in their EP group: with several groups only the group's block of a row travels.
  const int ep = generator.ep_size();
  m->block_size = ep < num_ranks && num_ranks % ep == 0 ? ep : 0;
  const auto width = static_cast<std::size_t>(m->width());
  const std::vector<int> sources = gather.my_rows(num_ranks);
  std::vector<std::int64_t> mine;
  mine.reserve(sources.size() * width);
  for (const int src : sources) {
    const workload::DestinationCounts counts = generator.count_destinations(src);
    const auto& row = counts.rows(config.profile.rows);
    const auto first = row.begin() + m->first_peer(src);
    if (std::any_of(row.begin(), first, [](std::int64_t v) { return v != 0; }) ||
        std::any_of(first + static_cast<std::ptrdiff_t>(width), row.end(), [](std::int64_t v) { return v != 0; })) {
      throw std::logic_error(fmt::format("moe counts: rank {} routes tokens outside its EP group", src));
    }
    mine.insert(mine.end(), first, first + static_cast<std::ptrdiff_t>(width));
  }
  m->rows = gather.gather(mine, num_ranks, width);
  if (m->rows.size() != static_cast<std::size_t>(num_ranks) * width) {
    throw std::logic_error(fmt::format("moe counts: gathered {} values for {} ranks", m->rows.size(), num_ranks));
  }
  SharedCounts::instance().add(key, std::move(m));
}

MoeParams case_moe_params(std::uint64_t requested_bytes, const std::map<std::string, std::string>* params,
                          int num_ranks) {
  MoeParams p = params != nullptr ? parse_moe_params(*params) : MoeParams{};
  if (params == nullptr && !p.tokens) {
    const auto row = moe_config(p, num_ranks).profile.dispatch.bytes_per_row;
    p.tokens = static_cast<int>(std::min<std::uint64_t>(requested_bytes / static_cast<std::uint64_t>(row), 1u << 20));
  }
  return p;
}

const std::vector<std::string>& moe_param_keys() {
  static const std::vector<std::string> kKeys{"workload",  "tokens", "routing", "ep_size",
                                              "imbalance", "seed",   "rows",    "counts_exchange"};
  return kKeys;
}

MoeParams parse_moe_params(const std::map<std::string, std::string>& params) {
  MoeParams p;
  for (const auto& [key, value] : params) {
    if (key == "workload") {
      if (value.empty()) throw InputError("moe parameter 'workload' is empty; e.g. deepseek-v3");
      p.workload = value;
    } else if (key == "tokens") {
      p.tokens = parse_int_param(key, value, 0);
    } else if (key == "routing") {
      p.routing = value;
    } else if (key == "ep_size") {
      p.ep_size = parse_int_param(key, value, 1);
    } else if (key == "imbalance") {
      p.imbalance = value;
    } else if (key == "seed") {
      p.seed = value;
    } else if (key == "rows") {
      p.rows = workload::parse_row_convention(value);
    } else if (key == "counts_exchange") {
      if (value == "timed") {
        p.counts_timed = true;
      } else if (value == "untimed") {
        p.counts_timed = false;
      } else {
        throw InputError(unknown_name_message("counts_exchange", value, {"timed", "untimed"}));
      }
    } else {
      throw InputError(unknown_name_message("moe parameter", key, moe_param_keys()));
    }
  }
  return p;
}

MoeConfig moe_config(const MoeParams& p, int num_ranks) {
  MoeConfig c;
  c.profile = workload::load_workload_profile(p.workload);
  auto& s = c.profile.routing;
  if (!p.routing.empty()) {
    YAML::Node node;
    try {
      node = YAML::Load(p.routing);
    } catch (const YAML::Exception& e) {
      throw InputError(fmt::format("routing '{}': invalid YAML: {}", p.routing, e.msg));
    }
    yamlio::check_structure(p.routing, fmt::format("routing '{}'", p.routing));
    if (!node.IsMap()) {
      throw InputError(
          fmt::format("routing '{}' must be a map of routing settings, e.g. {{popularity: lognormal, "
                      "sigma: 0.5}}; keys: {}",
                      p.routing, join(workload::routing_setting_keys())));
    }
    workload::apply_routing_map(s, node, "routing");
  }
  if (p.ep_size) workload::apply_routing_setting(s, "ep_size", std::to_string(*p.ep_size), "ep_size");
  if (p.imbalance) workload::apply_routing_setting(s, "imbalance", *p.imbalance, "imbalance");
  if (p.seed) workload::apply_routing_setting(s, "seed", *p.seed, "seed");
  if (p.rows) c.profile.rows = *p.rows;
  if (p.tokens) c.profile.tokens_per_rank = *p.tokens;
  for (const auto* f : {&c.profile.dispatch, &c.profile.combine}) {
    if (f->bytes_per_row <= 0 || f->bytes_per_row % static_cast<std::int64_t>(kMoeCarrierBytes) != 0) {
      throw InputError(
          fmt::format("workload '{}': rows of {} B are not a multiple of {} B, the unit the MoE harness "
                      "moves them in",
                      c.profile.name, f->bytes_per_row, kMoeCarrierBytes));
    }
  }
  c.routing = workload::routing_config(c.profile, num_ranks);
  return c;
}

void check_moe_params(const MoeParams& params) {
  MoeConfig c = moe_config(params, 1);
  auto& r = c.routing;
  r.settings.imbalance.reset();  // the sigma search needs the run's ranks and tokens
  // Settings checked against the rank count wait for the run (moe_waiver): without ep_size the EP
  // group is the whole communicator; `linear` tokens need T >= ranks - 1.
  r.num_ranks = std::max(1, r.settings.ep_size);
  if (r.settings.ep_size <= 0) {
    r.settings.hot_rank_idx = 0;
    r.settings.num_redundant_experts = 0;
  }
  r.settings.tokens = workload::TokenDistribution::fixed;
  try {
    const workload::RoutingGenerator check(r);
  } catch (const InputError& e) {
    throw InputError(fmt::format("workload '{}' with these settings: {}", c.profile.name, e.what()));
  }
}

MoeWorkload::MoeWorkload(MoeConfig c, std::shared_ptr<const workload::CountsMatrix> shared)
    : config(std::move(c)),
      generator(config.routing),
      counts(shared ? shared : routed_counts(generator, config.profile.rows)),
      counts_shared(shared != nullptr),
      rows(config.profile.rows),
      dispatch_row_bytes(config.profile.dispatch.bytes_per_row),
      combine_row_bytes(config.profile.combine.bytes_per_row),
      dispatch_max_value(workload::max_row_value(config.profile.dispatch.dtype)),
      combine_rule(workload::combine_rule(config.profile.top_k, config.profile.combine.dtype)) {
  exchange_group = confined_group(*counts, generator.ep_size());
}

std::shared_ptr<const MoeWorkload> moe_workload(const MoeParams& params, int num_ranks) {
  static std::mutex mutex;
  static std::deque<std::pair<std::string, std::shared_ptr<const MoeWorkload>>> cache;
  const std::string key = cache_key(params, num_ranks);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, w] : cache) {
      if (k == key) return w;
    }
  }
  auto w = std::make_shared<const MoeWorkload>(moe_config(params, num_ranks), SharedCounts::instance().find(key));
  const std::lock_guard<std::mutex> lock(mutex);
  cache.emplace_back(key, w);
  if (cache.size() > 4) cache.pop_front();  // a sweep moves on: keep the last few routings
  return w;
}

std::optional<std::string> moe_waiver(const MoeParams& params, MoeAlgo algo, int num_ranks,
                                      const Placement& placement) {
  const MoeConfig c = moe_config(params, num_ranks);
  const int ep = c.routing.settings.ep_size > 0 ? c.routing.settings.ep_size : num_ranks;
  if (ep > num_ranks) {
    return fmt::format("ep_size {} exceeds the {} ranks of the case's communicator", ep, num_ranks);
  }
  if (num_ranks % ep != 0) {
    return fmt::format("the communicator's {} ranks do not form whole EP groups of ep_size {}", num_ranks, ep);
  }
  if (algo == MoeAlgo::hierarchical) {
    const Placement p = moe_placement(placement, num_ranks);
    if (!p.uniform()) return std::string("hierarchical needs equal domain sizes (the placement is uneven)");
  }
  // Settings that need more ranks than this communicator has (hot_rank, redundant experts,
  // `linear` tokens): the case cannot run here.
  workload::RoutingConfig r = c.routing;
  r.settings.imbalance.reset();
  try {
    const workload::RoutingGenerator check(r);
  } catch (const InputError& e) {
    return fmt::format("not runnable on {} ranks: {}", num_ranks, e.what());
  }
  return std::nullopt;
}

CollectiveId collective_id_of(MoeOp op) {
  switch (op) {
    case MoeOp::dispatch:
      return CollectiveId::moe_dispatch;
    case MoeOp::combine:
      return CollectiveId::moe_combine;
    case MoeOp::roundtrip:
      return CollectiveId::moe_roundtrip;
  }
  return CollectiveId::moe_dispatch;
}

std::string_view to_string(MoeOp op) {
  return to_string(collective_id_of(op));
}

MoeOp moe_op_of(std::string_view collective) {
  switch (collective_id(collective).value_or(CollectiveId::moe_dispatch)) {
    case CollectiveId::moe_combine:
      return MoeOp::combine;
    case CollectiveId::moe_roundtrip:
      return MoeOp::roundtrip;
    default:
      return MoeOp::dispatch;
  }
}

MoeAlgo moe_algo_of(std::string_view algo) {
  return algo == "hierarchical" ? MoeAlgo::hierarchical : MoeAlgo::flat;
}

Placement moe_placement(const Placement& p, int num_ranks) {
  if (!p.domain_sizes.empty() && p.num_ranks() == num_ranks) return p;
  return placement_from_sizes(num_ranks, {num_ranks});
}

}  // namespace collbench::coll

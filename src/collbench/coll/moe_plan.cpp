// MoE harness plumbing: parameters, cached workloads, buffer layouts (see moe_plan.hpp).
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

std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

// Ranks of each domain, ascending (the domain communicator's rank order).
std::vector<std::vector<int>> domain_members(const Placement& p) {
  std::vector<std::vector<int>> members(static_cast<std::size_t>(p.num_domains()));
  for (int r = 0; r < p.num_ranks(); ++r) members[static_cast<std::size_t>(p.domain_of(r))].push_back(r);
  return members;
}

// Builds blocks in order and hands out their offsets from `start`.
struct RegionBuilder {
  std::uint64_t start = 0;
  std::uint64_t next = 0;
  explicit RegionBuilder(std::uint64_t at) : start(at), next(at) {}
  RowBlock add(bool combine, int src, int dst, std::int64_t rows, std::int64_t row_bytes) {
    RowBlock b{combine, src, dst, rows, next};
    next += u64(rows) * u64(row_bytes);
    return b;
  }
  [[nodiscard]] std::uint64_t bytes() const { return next - start; }
};

std::size_t units(std::uint64_t bytes) {
  return static_cast<std::size_t>(bytes / kMoeCarrierBytes);
}

ExchangeStage make_stage(ExchangeStage::Level level, bool from_recv, std::uint64_t send_region,
                         std::uint64_t recv_region, std::size_t peers) {
  ExchangeStage s;
  s.level = level;
  s.send_from_recv = from_recv;
  s.send_region = send_region;
  s.recv_region = recv_region;
  s.send_counts.assign(peers, 0);
  s.send_displs.assign(peers, 0);
  s.recv_counts.assign(peers, 0);
  s.recv_displs.assign(peers, 0);
  return s;
}

void flat_dispatch(ExchangePlan& plan, const CountsMatrix& c, std::int64_t row_bytes, int r, std::uint64_t send_at,
                   std::uint64_t recv_at, std::uint64_t& send_end, std::uint64_t& recv_end) {
  const int n = c.num_ranks;
  RegionBuilder send(send_at);
  RegionBuilder fin(recv_at);
  auto st = make_stage(ExchangeStage::Level::comm, false, send_at, recv_at, static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    const auto i = static_cast<std::size_t>(p);
    const RowBlock sb = send.add(false, r, p, c.at(r, p), row_bytes);
    const RowBlock rb = fin.add(false, p, r, c.at(p, r), row_bytes);
    st.send_counts[i] = units(u64(sb.rows) * u64(row_bytes));
    st.send_displs[i] = units(sb.offset - send_at);
    st.recv_counts[i] = units(u64(rb.rows) * u64(row_bytes));
    st.recv_displs[i] = units(rb.offset - recv_at);
    plan.send_blocks.push_back(sb);
    plan.final_blocks.push_back(rb);
  }
  plan.stages.push_back(std::move(st));
  send_end = send.next;
  recv_end = fin.next;
}

void flat_combine(ExchangePlan& plan, const CountsMatrix& c, std::int64_t row_bytes, int r, std::uint64_t send_at,
                  std::uint64_t recv_at, std::uint64_t& send_end, std::uint64_t& recv_end) {
  const int n = c.num_ranks;
  RegionBuilder send(send_at);
  RegionBuilder fin(recv_at);
  auto st = make_stage(ExchangeStage::Level::comm, false, send_at, recv_at, static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    const auto i = static_cast<std::size_t>(p);
    const RowBlock sb = send.add(true, p, r, c.at(p, r), row_bytes);  // my outputs for p's tokens
    const RowBlock rb = fin.add(true, r, p, c.at(r, p), row_bytes);   // p's outputs for my tokens
    st.send_counts[i] = units(u64(sb.rows) * u64(row_bytes));
    st.send_displs[i] = units(sb.offset - send_at);
    st.recv_counts[i] = units(u64(rb.rows) * u64(row_bytes));
    st.recv_displs[i] = units(rb.offset - recv_at);
    plan.send_blocks.push_back(sb);
    plan.final_blocks.push_back(rb);
  }
  plan.stages.push_back(std::move(st));
  send_end = send.next;
  recv_end = fin.next;
}

struct Grid {
  std::vector<std::vector<int>> members;  // [domain][local index] -> rank
  int num_domains = 0;
  int m = 0;  // ranks per domain
  int my_d = 0;
  int my_l = 0;
  // The domains with rows to or from this rank's: all of them, or its EP group's (confine_grid).
  int d_first = 0;
  int d_count = 0;
  [[nodiscard]] int at(int d, int l) const { return members[static_cast<std::size_t>(d)][static_cast<std::size_t>(l)]; }
};

Grid make_grid(const Placement& p, int r) {
  if (!p.uniform()) {
    const std::string sizes = join_ints(p.domain_sizes);
    throw InputError("hierarchical moe needs equal domain sizes (the placement is " + sizes + ")");
  }
  Grid g;
  g.members = domain_members(p);
  g.num_domains = p.num_domains();
  g.m = p.largest_domain();
  g.my_d = p.domain_of(r);
  const auto& mine = g.members[static_cast<std::size_t>(g.my_d)];
  g.my_l = static_cast<int>(std::find(mine.begin(), mine.end(), r) - mine.begin());
  g.d_count = g.num_domains;
  return g;
}

// Confines a grid to the rank's EP group of `group_size` ranks when the group is whole domains of
// consecutive ranks (domain d holds ranks d*m .. d*m+m-1) and the routing keeps every row inside
// such groups (the caller's confined_group): the other domains' stages would move nothing, so they
// are skipped, and the cross stage runs among the group's domains only.
bool confine_grid(Grid& g, int group_size, int n) {
  if (group_size <= 0 || group_size >= n || n % group_size != 0 || group_size % g.m != 0) return false;
  for (int d = 0; d < g.num_domains; ++d) {
    for (int l = 0; l < g.m; ++l) {
      if (g.at(d, l) != d * g.m + l) return false;
    }
  }
  const int k = group_size / g.m;
  g.d_first = g.my_d / k * k;
  g.d_count = k;
  return true;
}

// A cross stage of a confined grid: the entries of the group's domains, on the block of the
// cross communicator (ordered by domain) that holds them.
void confine_cross(ExchangeStage& st, const Grid& g) {
  if (g.d_count == g.num_domains) return;
  st.group_first = g.d_first;
  st.group_size = g.d_count;
}

void hier_dispatch(ExchangePlan& plan, const CountsMatrix& c, std::int64_t rb, int r, const Grid& g,
                   std::uint64_t send_at, std::uint64_t recv_at, std::uint64_t& send_end, std::uint64_t& recv_end) {
  const int n = c.num_ranks;
  const int dd = g.num_domains;
  const int m = g.m;
  // Send rows in destination rank order, as flat.
  RegionBuilder send(send_at);
  std::vector<std::uint64_t> send_off(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    const RowBlock b = send.add(false, r, t, c.at(r, t), rb);
    send_off[static_cast<std::size_t>(t)] = b.offset;
    plan.send_blocks.push_back(b);
  }
  // Final region: [source domain][source local index].
  RegionBuilder fin(recv_at);
  std::vector<std::uint64_t> fin_domain_off(static_cast<std::size_t>(dd));
  std::vector<std::uint64_t> fin_domain_bytes(static_cast<std::size_t>(dd), 0);
  for (int d = 0; d < dd; ++d) {
    fin_domain_off[static_cast<std::size_t>(d)] = fin.next;
    for (int l = 0; l < m; ++l) {
      const int s = g.at(d, l);
      plan.final_blocks.push_back(fin.add(false, s, r, c.at(s, r), rb));
    }
    fin_domain_bytes[static_cast<std::size_t>(d)] = fin.next - fin_domain_off[static_cast<std::size_t>(d)];
  }
  // Staging: [destination domain d'][local source l]: rows from (my d, l) to (d', my l).
  RegionBuilder stg(fin.next);
  std::vector<std::uint64_t> stg_off(static_cast<std::size_t>(dd * m));
  std::vector<std::uint64_t> stg_domain_bytes(static_cast<std::size_t>(dd), 0);
  for (int d = 0; d < dd; ++d) {
    const std::uint64_t begin = stg.next;
    for (int l = 0; l < m; ++l) {
      const int s = g.at(g.my_d, l);
      const int t = g.at(d, g.my_l);
      const RowBlock b = stg.add(false, s, t, c.at(s, t), rb);
      stg_off[static_cast<std::size_t>(d * m + l)] = b.offset;
      plan.staging_blocks.push_back(b);
    }
    stg_domain_bytes[static_cast<std::size_t>(d)] = stg.next - begin;
  }
  // Stage 1: one all-to-all-v inside the domain per destination domain (of the EP group).
  for (int d = g.d_first; d < g.d_first + g.d_count; ++d) {
    auto st = make_stage(ExchangeStage::Level::domain, false, send_at, stg.start, static_cast<std::size_t>(m));
    for (int l = 0; l < m; ++l) {
      const auto i = static_cast<std::size_t>(l);
      const int t = g.at(d, l);
      st.send_counts[i] = units(u64(c.at(r, t)) * u64(rb));
      st.send_displs[i] = units(send_off[static_cast<std::size_t>(t)] - send_at);
      const int s = g.at(g.my_d, l);
      st.recv_counts[i] = units(u64(c.at(s, g.at(d, g.my_l))) * u64(rb));
      st.recv_displs[i] = units(stg_off[static_cast<std::size_t>(d * m + l)] - stg.start);
    }
    plan.stages.push_back(std::move(st));
  }
  // Stage 2: across domains, between the ranks with my local index.
  auto st = make_stage(ExchangeStage::Level::cross, true, stg.start, recv_at, static_cast<std::size_t>(dd));
  confine_cross(st, g);
  for (int d = 0; d < dd; ++d) {
    const auto i = static_cast<std::size_t>(d);
    st.send_counts[i] = units(stg_domain_bytes[i]);
    st.send_displs[i] = units(stg_off[static_cast<std::size_t>(d * m)] - stg.start);
    st.recv_counts[i] = units(fin_domain_bytes[i]);
    st.recv_displs[i] = units(fin_domain_off[i] - recv_at);
  }
  plan.stages.push_back(std::move(st));
  send_end = send.next;
  recv_end = stg.next;
}

void hier_combine(ExchangePlan& plan, const CountsMatrix& c, std::int64_t rb, int r, const Grid& g,
                  std::uint64_t send_at, std::uint64_t recv_at, std::uint64_t& send_end, std::uint64_t& recv_end) {
  const int dd = g.num_domains;
  const int m = g.m;
  // Send: my outputs for every source, [source domain][source local index].
  RegionBuilder send(send_at);
  std::vector<std::uint64_t> send_domain_off(static_cast<std::size_t>(dd));
  std::vector<std::uint64_t> send_domain_bytes(static_cast<std::size_t>(dd));
  for (int d = 0; d < dd; ++d) {
    send_domain_off[static_cast<std::size_t>(d)] = send.next;
    for (int l = 0; l < m; ++l) {
      const int s = g.at(d, l);
      plan.send_blocks.push_back(send.add(true, s, r, c.at(s, r), rb));
    }
    send_domain_bytes[static_cast<std::size_t>(d)] = send.next - send_domain_off[static_cast<std::size_t>(d)];
  }
  // Final: every expert rank's outputs for my tokens, [expert domain][expert local index].
  RegionBuilder fin(recv_at);
  std::vector<std::uint64_t> fin_off(static_cast<std::size_t>(dd * m));
  for (int d = 0; d < dd; ++d) {
    for (int l = 0; l < m; ++l) {
      const int t = g.at(d, l);
      const RowBlock b = fin.add(true, r, t, c.at(r, t), rb);
      fin_off[static_cast<std::size_t>(d * m + l)] = b.offset;
      plan.final_blocks.push_back(b);
    }
  }
  // Staging at the forwarder: [expert domain d'][local source l]: outputs of (d', my l) for (my d, l).
  RegionBuilder stg(fin.next);
  std::vector<std::uint64_t> stg_off(static_cast<std::size_t>(dd * m));
  std::vector<std::uint64_t> stg_domain_bytes(static_cast<std::size_t>(dd));
  for (int d = 0; d < dd; ++d) {
    const std::uint64_t begin = stg.next;
    for (int l = 0; l < m; ++l) {
      const int s = g.at(g.my_d, l);
      const int t = g.at(d, g.my_l);
      const RowBlock b = stg.add(true, s, t, c.at(s, t), rb);
      stg_off[static_cast<std::size_t>(d * m + l)] = b.offset;
      plan.staging_blocks.push_back(b);
    }
    stg_domain_bytes[static_cast<std::size_t>(d)] = stg.next - begin;
  }
  // Stage 1: across domains, to the rank of the source domain with my local index.
  auto st = make_stage(ExchangeStage::Level::cross, false, send_at, stg.start, static_cast<std::size_t>(dd));
  confine_cross(st, g);
  for (int d = 0; d < dd; ++d) {
    const auto i = static_cast<std::size_t>(d);
    st.send_counts[i] = units(send_domain_bytes[i]);
    st.send_displs[i] = units(send_domain_off[i] - send_at);
    st.recv_counts[i] = units(stg_domain_bytes[i]);
    st.recv_displs[i] = units(stg_off[static_cast<std::size_t>(d * m)] - stg.start);
  }
  plan.stages.push_back(std::move(st));
  // Stage 2: one all-to-all-v inside the domain per expert domain (of the EP group): scatter to
  // the sources.
  for (int d = g.d_first; d < g.d_first + g.d_count; ++d) {
    auto s2 = make_stage(ExchangeStage::Level::domain, true, stg.start, recv_at, static_cast<std::size_t>(m));
    for (int l = 0; l < m; ++l) {
      const auto i = static_cast<std::size_t>(l);
      const int s = g.at(g.my_d, l);
      s2.send_counts[i] = units(u64(c.at(s, g.at(d, g.my_l))) * u64(rb));
      s2.send_displs[i] = units(stg_off[static_cast<std::size_t>(d * m + l)] - stg.start);
      const int t = g.at(d, l);  // the expert rank whose outputs the forwarder (my d, l) holds for me
      s2.recv_counts[i] = units(u64(c.at(r, t)) * u64(rb));
      s2.recv_displs[i] = units(fin_off[static_cast<std::size_t>(d * m + l)] - recv_at);
    }
    plan.stages.push_back(std::move(s2));
  }
  send_end = send.next;
  recv_end = stg.next;
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

int confined_group(const CountsMatrix& counts, int group_size) {
  const int n = counts.num_ranks;
  if (group_size <= 0 || group_size >= n || n % group_size != 0) return 0;
  if (counts.block_size > 0 && group_size % counts.block_size == 0) return group_size;  // by its storage
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s / group_size != d / group_size && counts.at(s, d) != 0) return 0;
    }
  }
  return group_size;
}

MoeLayout moe_layout(const CountsMatrix& counts, std::int64_t dispatch_row_bytes, std::int64_t combine_row_bytes,
                     MoeOp op, MoeAlgo algo, int rank_idx, const Placement& placement, int group_size) {
  const int n = counts.num_ranks;
  if (rank_idx < 0 || rank_idx >= n) throw InputError(fmt::format("moe layout: rank {} outside [0, {})", rank_idx, n));
  MoeLayout L;
  L.rank_idx = rank_idx;
  L.num_ranks = n;
  L.op = op;
  L.algo = algo;
  L.has_counts = op != MoeOp::combine;
  L.counts_bytes = L.has_counts ? static_cast<std::uint64_t>(n) * sizeof(std::int64_t) : 0;
  std::optional<Grid> grid;
  bool confined = false;
  if (algo == MoeAlgo::hierarchical) {
    const Placement p = moe_placement(placement, n);
    grid = make_grid(p, rank_idx);
    confined = confine_grid(*grid, group_size, n);
  }
  std::uint64_t send_at = L.counts_bytes;
  std::uint64_t recv_at = L.counts_bytes;
  if (op != MoeOp::combine) {
    if (grid) {
      hier_dispatch(L.dispatch, counts, dispatch_row_bytes, rank_idx, *grid, send_at, recv_at, send_at, recv_at);
    } else {
      flat_dispatch(L.dispatch, counts, dispatch_row_bytes, rank_idx, send_at, recv_at, send_at, recv_at);
    }
  }
  if (op != MoeOp::dispatch) {
    if (grid) {
      hier_combine(L.combine, counts, combine_row_bytes, rank_idx, *grid, send_at, recv_at, send_at, recv_at);
    } else {
      flat_combine(L.combine, counts, combine_row_bytes, rank_idx, send_at, recv_at, send_at, recv_at);
    }
  }
  L.send_bytes = send_at;
  L.recv_bytes = recv_at;
  if (!grid && group_size > 0 && group_size < n && n % group_size == 0) confined = true;
  if (confined) {
    L.group_size = group_size;
    L.group_first = rank_idx / group_size * group_size;
  }
  if (confined && !grid) {
    for (ExchangePlan* plan : {&L.dispatch, &L.combine}) {
      for (ExchangeStage& st : plan->stages) {
        st.group_first = L.group_first;
        st.group_size = L.group_size;
      }
    }
  }
  return L;
}

model::TrafficMatrix moe_traffic(const CountsMatrix& counts, std::int64_t dispatch_row_bytes,
                                 std::int64_t combine_row_bytes, MoeOp op) {
  const int n = counts.num_ranks;
  model::TrafficMatrix t;
  t.num_ranks = n;
  t.bytes.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      const std::uint64_t rows = u64(counts.at(s, d));
      const auto sd = static_cast<std::size_t>(s) * static_cast<std::size_t>(n) + static_cast<std::size_t>(d);
      const auto ds = static_cast<std::size_t>(d) * static_cast<std::size_t>(n) + static_cast<std::size_t>(s);
      if (op != MoeOp::combine) t.bytes[sd] += rows * u64(dispatch_row_bytes);
      if (op != MoeOp::dispatch) t.bytes[ds] += rows * u64(combine_row_bytes);
    }
  }
  return t;
}

model::TrafficSummary moe_traffic_summary(const CountsMatrix& counts, std::int64_t dispatch_row_bytes,
                                          std::int64_t combine_row_bytes, MoeOp op, const Placement& placement) {
  const int n = counts.num_ranks;
  if (placement.num_ranks() != n) {
    throw InputError(fmt::format("moe traffic: {} ranks, but the placement has {}", n, placement.num_ranks()));
  }
  std::vector<int> domain(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) domain[static_cast<std::size_t>(r)] = placement.domain_of(r);
  const std::uint64_t drb = op != MoeOp::combine ? u64(dispatch_row_bytes) : 0;
  const std::uint64_t crb = op != MoeOp::dispatch ? u64(combine_row_bytes) : 0;
  // Blocks are symmetric (an EP group's ranks), so the entries of (s, d) and (d, s) are in range
  // together.
  return model::summarize_traffic_entries(
      domain, counts.width(), [&counts](int s) { return counts.first_peer(s); },
      [&](int s, int d) { return u64(counts.at(s, d)) * drb + u64(counts.at(d, s)) * crb; });
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

// MoE expert-parallel exchanges with generated routing (docs/moe.md): moe-dispatch (token rows
// to the ranks holding their experts), moe-combine (expert outputs back to the token owners) and
// moe-roundtrip (both, back to back), each `flat` (one all-to-all-v) or `hierarchical` (inside
// the domain, then one exchange per domain pair and rail; moe_plan.hpp), with the counts
// exchange (an all-to-all of per-destination row counts) inside or outside the timed region.
//
// Only Comm calls move data, so the families run unchanged on every backend (host buffers for
// MPI, GPU buffers for NCCL). Rows travel as 4-byte units; the case dtype (the workload's wire
// format) sizes the buffers and names the record. Every byte of the receive buffer is verified
// exactly: counts, every row of every block (staging included), and the combined (weighted-sum)
// output of every token. The combine's weighted reduction is host arithmetic in verification,
// not part of the timed exchange.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <span>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/coll/moe_rows.hpp"
#include "collbench/core/error.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/workload/counts.hpp"
#include "collbench/workload/hash.hpp"
#include "collbench/workload/payload.hpp"

namespace collbench::coll {
namespace {

using moe_rows::RowCodec;
using workload::RankRouting;
using workload::RowConvention;
using workload::RowRef;

struct MoeCase final : ShapeDetail {
  std::shared_ptr<const MoeWorkload> w;
  MoeParams params;
  MoeLayout layout;
  Placement placement;  // of the communicator's ranks
  model::TrafficSummary traffic;
};

const MoeCase& moe_detail_of(const Shape& s) {
  const auto* d = dynamic_cast<const MoeCase*>(s.detail.get());
  if (d == nullptr) throw InputError("a moe-* shape lacks its routing detail (build it with shape_for)");
  return *d;
}

// Routing of source ranks, computed on first use.
class RoutingCache {
 public:
  explicit RoutingCache(const workload::RoutingGenerator& g) : g_(g) {}
  const RankRouting& of(int src) {
    auto it = cache_.find(src);
    if (it == cache_.end()) it = cache_.emplace(src, g_.route_rank(src)).first;
    return it->second;
  }

 private:
  const workload::RoutingGenerator& g_;
  std::map<int, RankRouting> cache_;
};

std::string routing_text(const workload::RoutingSettings& s, std::optional<double> sigma_used) {
  std::string t;
  switch (s.popularity) {
    case workload::Popularity::uniform:
      t = "uniform";
      break;
    case workload::Popularity::lognormal:
      if (s.imbalance) {
        t = sigma_used ? fmt::format("lognormal(imbalance={:g},sigma={:.4g})", *s.imbalance, *sigma_used)
                       : fmt::format("lognormal(imbalance={:g})", *s.imbalance);
      } else {
        t = fmt::format("lognormal(sigma={:g})", s.sigma);
      }
      break;
    case workload::Popularity::zipf:
      t = fmt::format("zipf(s={:g})", s.zipf_s);
      break;
    case workload::Popularity::one_hot_rank:
      t = fmt::format("one-hot-rank(rank={},factor={:g})", s.hot_rank_idx, s.hot_factor);
      break;
  }
  if (s.groups_per_token > 0) t += fmt::format(",groups_per_token={}", s.groups_per_token);
  if (s.tokens != workload::TokenDistribution::fixed) t += fmt::format(",tokens={}", workload::to_string(s.tokens));
  if (s.num_redundant_experts > 0) t += fmt::format(",redundant_experts={}", s.num_redundant_experts);
  if (s.seed != 1) t += fmt::format(",seed={}", s.seed);
  if (s.layer != 0) t += fmt::format(",layer={}", s.layer);
  return t;
}

nlohmann::json routing_settings_json(const workload::RoutingSettings& s) {
  nlohmann::json j{{"popularity", workload::to_string(s.popularity)},
                   {"groups_per_token", s.groups_per_token},
                   {"tokens", workload::to_string(s.tokens)},
                   {"ep_size", s.ep_size},
                   {"redundant_experts", s.num_redundant_experts},
                   {"seed", s.seed},
                   {"layer", s.layer}};
  if (s.popularity == workload::Popularity::lognormal) {
    j["sigma"] = s.sigma;
    j["imbalance"] = s.imbalance ? nlohmann::json(*s.imbalance) : nlohmann::json(nullptr);
  }
  if (s.popularity == workload::Popularity::zipf) j["zipf_s"] = s.zipf_s;
  if (s.popularity == workload::Popularity::one_hot_rank) {
    j["hot_rank"] = s.hot_rank_idx;
    j["hot_factor"] = s.hot_factor;
  }
  return j;
}

// A record's traffic_matrix: the bytes of every (source, destination) pair, [i][j] in the
// dispatch direction, `per_row` bytes a row.
nlohmann::json moe_record_traffic_matrix(const workload::CountsMatrix& matrix, std::uint64_t per_row) {
  const int n = matrix.num_ranks;
  nlohmann::json m = nlohmann::json::array();
  for (int s = 0; s < n; ++s) {
    nlohmann::json row = nlohmann::json::array();
    for (int d = 0; d < n; ++d) row.push_back(static_cast<std::uint64_t>(matrix.at(s, d)) * per_row);
    m.push_back(std::move(row));
  }
  return m;
}

// A record's link_bytes_max_rank (the largest of each direction and link over the ranks) and
// link_bytes_per_rank (every rank's, or null unless `per_rank_too`).
void moe_record_link_bytes(nlohmann::json& j, const model::TrafficSummary& traffic, bool per_rank_too) {
  std::uint64_t max_in_send = 0, max_in_recv = 0, max_off_send = 0, max_off_recv = 0;
  nlohmann::json per_rank{{"send_in_domain", nlohmann::json::array()},
                          {"send_off_domain", nlohmann::json::array()},
                          {"recv_in_domain", nlohmann::json::array()},
                          {"recv_off_domain", nlohmann::json::array()}};
  for (const auto& x : traffic.per_rank) {
    max_in_send = std::max(max_in_send, x.send_in_domain);
    max_in_recv = std::max(max_in_recv, x.recv_in_domain);
    max_off_send = std::max(max_off_send, x.send_off_domain);
    max_off_recv = std::max(max_off_recv, x.recv_off_domain);
    per_rank["send_in_domain"].push_back(x.send_in_domain);
    per_rank["send_off_domain"].push_back(x.send_off_domain);
    per_rank["recv_in_domain"].push_back(x.recv_in_domain);
    per_rank["recv_off_domain"].push_back(x.recv_off_domain);
  }
  j["link_bytes_max_rank"] = {{"send_in_domain", max_in_send},
                              {"send_off_domain", max_off_send},
                              {"recv_in_domain", max_in_recv},
                              {"recv_off_domain", max_off_recv}};
  j["link_bytes_per_rank"] = per_rank_too ? per_rank : nlohmann::json(nullptr);
}

// The EP group's communicator for a layout or stage confined to one (group_size > 0), when the
// backend splits communicators; else the whole communicator.
backend::Comm& exchange_comm(backend::Comm& comm, int group_size) {
  backend::Comm* block = group_size > 0 ? comm.block_level(group_size) : nullptr;
  return block != nullptr ? *block : comm;
}

// The per-destination row counts: one int64 per peer, inside the EP group when the layout is
// confined to one (the group's entries of the n-entry regions), else over the communicator.
void run_counts(backend::Comm& comm, const MoeLayout& L, const void* send, void* recv) {
  backend::Comm& c = exchange_comm(comm, L.group_size);
  const std::size_t first = c.size() < comm.size() ? static_cast<std::size_t>(L.group_first) : 0;
  c.run({.op = NcclOp::alltoall,
         .dtype = Dtype::int64,
         .send = static_cast<const std::int64_t*>(send) + first,
         .recv = static_cast<std::int64_t*>(recv) + first,
         .count = 1});
}

// A stage on `comm` (the whole communicator, or the cross level), inside the EP group's block of
// it when the stage is confined to one.
void run_group_stage(backend::Comm& comm, const ExchangeStage& st, const unsigned char* from, unsigned char* to) {
  backend::Comm& c = exchange_comm(comm, st.group_size);
  if (c.size() == comm.size()) {
    const backend::PeerLayout peers{st.send_counts, st.send_displs, st.recv_counts, st.recv_displs};
    c.run({.op = NcclOp::alltoallv, .dtype = Dtype::int32, .send = from, .recv = to, .peers = &peers});
    return;
  }
  // Displacements are relative to the region starts, so the group's entries keep theirs.
  const auto first = static_cast<std::size_t>(st.group_first);
  const auto size = static_cast<std::size_t>(st.group_size);
  const auto part = [&](const std::vector<std::size_t>& v) {
    return std::span<const std::size_t>(v).subspan(first, size);
  };
  const backend::PeerLayout peers{part(st.send_counts), part(st.send_displs), part(st.recv_counts),
                                  part(st.recv_displs)};
  c.run({.op = NcclOp::alltoallv, .dtype = Dtype::int32, .send = from, .recv = to, .peers = &peers});
}

void run_plan(backend::Comm& comm, const ExchangePlan& plan, const void* send, void* recv) {
  auto* recv_base = static_cast<unsigned char*>(recv);
  const auto* send_base = static_cast<const unsigned char*>(send);
  for (const auto& st : plan.stages) {
    backend::Comm* c = &comm;
    if (st.level == ExchangeStage::Level::domain) c = comm.domain_level();
    if (st.level == ExchangeStage::Level::cross) c = comm.cross_level();
    if (c == nullptr) {
      throw InputError(
          "hierarchical moe needs a communicator composed of domain levels (the runner's hierarchical one)");
    }
    const unsigned char* from = (st.send_from_recv ? recv_base : send_base) + st.send_region;
    if (st.level != ExchangeStage::Level::domain) {
      run_group_stage(*c, st, from, recv_base + st.recv_region);
      continue;
    }
    const backend::PeerLayout peers{st.send_counts, st.send_displs, st.recv_counts, st.recv_displs};
    c->run({.op = NcclOp::alltoallv,
            .dtype = Dtype::int32,
            .send = from,
            .recv = recv_base + st.recv_region,
            .peers = &peers});
  }
}

class MoeCollective final : public Collective {
 public:
  explicit MoeCollective(MoeOp op) : Collective(collective_id_of(op)), op_(op) {}

  [[nodiscard]] std::string_view description() const override {
    switch (op_) {
      case MoeOp::dispatch:
        return "MoE dispatch: token rows to the ranks of their experts (all-to-all-v, generated routing)";
      case MoeOp::combine:
        return "MoE combine: expert outputs back to the token owners, weighted sum verified";
      case MoeOp::roundtrip:
        return "MoE dispatch then combine, back to back";
    }
    return "";
  }

  // Without parameters (tests that walk the registry): the default workload with as many tokens
  // per rank as dispatch rows fit in requested_bytes.
  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int rank, int num_ranks) const override {
    CaseContext ctx;
    ctx.dtype = dtype;
    ctx.rank = rank;
    ctx.num_ranks = num_ranks;
    return build(requested_bytes, ctx);
  }
  [[nodiscard]] Shape shape_for(std::uint64_t requested_bytes, const CaseContext& ctx) const override {
    return build(requested_bytes, ctx);
  }
  // Each process routes its own tokens and the counts matrix is gathered (a waived case has none).
  void share_inputs(std::uint64_t requested_bytes, const CaseContext& ctx, RowGather& gather) const override {
    if (waiver(ctx)) return;
    share_moe_counts(case_moe_params(requested_bytes, ctx.params, ctx.num_ranks), ctx.num_ranks, gather);
  }

  [[nodiscard]] std::optional<Dtype> case_dtype(const std::map<std::string, std::string>& params) const override {
    const auto profile = workload::load_workload_profile(parse_moe_params(params).workload);
    return op_ == MoeOp::combine ? profile.combine.dtype : profile.dispatch.dtype;
  }
  void check_params(const std::map<std::string, std::string>& params) const override {
    check_moe_params(parse_moe_params(params));
  }
  [[nodiscard]] std::optional<std::string> waiver(const CaseContext& ctx) const override {
    const MoeParams p = ctx.params ? parse_moe_params(*ctx.params) : MoeParams{};
    return moe_waiver(p, moe_algo_of(ctx.algo), ctx.num_ranks, ctx.placement);
  }

  void fill(void* host_send, const Shape& shape, const CaseContext&) const override {
    const MoeCase& mc = moe_detail_of(shape);
    const MoeWorkload& w = *mc.w;
    const MoeLayout& L = mc.layout;
    auto* out = static_cast<unsigned char*>(host_send);
    const int r = L.rank_idx;
    const int n = L.num_ranks;
    if (L.has_counts) {
      for (int t = 0; t < n; ++t) {
        const std::int64_t rows = w.matrix().at(r, t);
        std::memcpy(out + static_cast<std::size_t>(t) * sizeof(std::int64_t), &rows, sizeof(rows));
      }
    }
    RowCodec codec(w);
    RoutingCache routing(w.generator);
    for (const auto& b : L.dispatch.send_blocks) {
      const auto rows = workload::rows_for_destination(routing.of(b.src_rank_idx), b.dst_rank_idx, w.rows);
      check_block(b, rows.size());
      for (std::size_t j = 0; j < rows.size(); ++j) {
        const RowRef& row = rows[j];
        codec.dispatch_row(out + b.offset + j * codec.row_bytes(false), b.src_rank_idx, row.token_idx,
                           row.expert_idx >= 0 ? row.expert_idx : b.dst_rank_idx);
      }
    }
    for (const auto& b : L.combine.send_blocks) {
      const RankRouting& src = routing.of(b.src_rank_idx);
      const auto rows = workload::rows_for_destination(src, b.dst_rank_idx, w.rows);
      check_block(b, rows.size());
      for (std::size_t j = 0; j < rows.size(); ++j) {
        codec.combine_row(out + b.offset + j * codec.row_bytes(true), src, b.dst_rank_idx, rows[j]);
      }
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* host_result, const Shape& shape, const CaseContext&) const override {
    const MoeCase& mc = moe_detail_of(shape);
    const MoeWorkload& w = *mc.w;
    const MoeLayout& L = mc.layout;
    const auto* in = static_cast<const unsigned char*>(host_result);
    const int r = L.rank_idx;
    std::uint64_t wrong = 0;
    if (L.has_counts) {
      // Only the EP group's entries travel when the exchange is confined to it.
      const int first = L.group_size > 0 ? L.group_first : 0;
      const int last = L.group_size > 0 ? L.group_first + L.group_size : L.num_ranks;
      for (int s = first; s < last; ++s) {
        std::int64_t rows = 0;
        std::memcpy(&rows, in + static_cast<std::size_t>(s) * sizeof(std::int64_t), sizeof(rows));
        wrong += rows != w.matrix().at(s, r) ? 1 : 0;
      }
    }
    RowCodec codec(w);
    RoutingCache routing(w.generator);
    // Every row of every block, final and staging.
    const auto check_blocks = [&](const std::vector<RowBlock>& blocks) {
      for (const auto& b : blocks) {
        const RankRouting& src = routing.of(b.src_rank_idx);
        const auto rows = workload::rows_for_destination(src, b.dst_rank_idx, w.rows);
        check_block(b, rows.size());
        const std::size_t bytes = codec.row_bytes(b.combine);
        for (std::size_t j = 0; j < rows.size(); ++j) {
          wrong += codec.check(in + b.offset + j * bytes, b.combine, src, b.dst_rank_idx, rows[j]);
        }
      }
    };
    check_blocks(L.dispatch.final_blocks);
    check_blocks(L.dispatch.staging_blocks);
    check_blocks(L.combine.final_blocks);
    check_blocks(L.combine.staging_blocks);
    if (!L.combine.final_blocks.empty()) wrong += check_combined(in, mc, codec, routing.of(r));
    return wrong;
  }

  void launch(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
              const CaseContext&) const override {
    const MoeCase& mc = moe_detail_of(shape);
    const MoeLayout& L = mc.layout;
    if (L.has_counts && mc.params.counts_timed) run_counts(comm, L, send, recv);
    run_plan(comm, L.dispatch, send, recv);
    run_plan(comm, L.combine, send, recv);
  }

  // The round trip is two stages (dispatch, then combine after the experts computed); the
  // one-way families are one.
  [[nodiscard]] int num_stages() const override { return op_ == MoeOp::roundtrip ? 2 : 1; }
  void launch_stage(int stage, backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                    const CaseContext& ctx) const override {
    if (num_stages() == 1) {
      launch(comm, send, recv, shape, ctx);
      return;
    }
    const MoeCase& mc = moe_detail_of(shape);
    const MoeLayout& L = mc.layout;
    if (stage == 0) {
      if (L.has_counts && mc.params.counts_timed) run_counts(comm, L, send, recv);
      run_plan(comm, L.dispatch, send, recv);
    } else {
      run_plan(comm, L.combine, send, recv);
    }
  }

  void prepare(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
               const CaseContext&) const override {
    const MoeCase& mc = moe_detail_of(shape);
    if (mc.layout.has_counts && !mc.params.counts_timed) run_counts(comm, mc.layout, send, recv);
  }

  [[nodiscard]] std::vector<std::string> side_operations(const Shape& shape) const override {
    if (moe_detail_of(shape).layout.has_counts) return {"counts_exchange"};
    return {};
  }
  void launch_side(std::string_view op, backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                   const CaseContext&) const override {
    const MoeLayout& L = moe_detail_of(shape).layout;
    if (op == "counts_exchange" && L.has_counts) run_counts(comm, L, send, recv);
  }

  // The shape's own summary when `placement` is the one it was built on (the runner's rank-0
  // context), else one from the EP-group blocks.
  [[nodiscard]] std::optional<model::TrafficSummary> traffic_summary(const Shape& shape,
                                                                     const Placement& placement) const override {
    const MoeCase& mc = moe_detail_of(shape);
    const MoeWorkload& w = *mc.w;
    const Placement p = moe_placement(placement, w.matrix().num_ranks);
    if (p.domain_sizes == mc.placement.domain_sizes && p.interleaved == mc.placement.interleaved) return mc.traffic;
    return moe_traffic_summary(w.matrix(), w.dispatch_row_bytes, w.combine_row_bytes, op_, p);
  }

  [[nodiscard]] nlohmann::json workload_record(const Shape& shape) const override {
    const MoeCase& mc = moe_detail_of(shape);
    const MoeWorkload& w = *mc.w;
    const auto& matrix = w.matrix();
    const int n = matrix.num_ranks;
    const auto& settings = w.config.routing.settings;
    const auto receive = matrix.receive_rows();
    const workload::LoadStats load = workload::load_stats(receive);
    nlohmann::json j;
    j["name"] = w.config.profile.name;
    j["tokens_per_rank"] = w.config.routing.tokens_per_rank;
    j["routing"] = routing_text(settings, w.generator.sigma());
    j["imbalance"] = load.imbalance;
    j["gini"] = load.gini;
    j["bytes_in_domain"] = mc.traffic.bytes_in_domain;
    j["bytes_off_domain"] = mc.traffic.bytes_off_domain;
    j["hottest_rank"] = load.hottest_rank_idx;
    if (n <= 64) {
      // Plotting convention: [i][j] in the dispatch direction (combine: the transpose travels).
      const std::uint64_t per_row = static_cast<std::uint64_t>((op_ != MoeOp::combine ? w.dispatch_row_bytes : 0) +
                                                               (op_ != MoeOp::dispatch ? w.combine_row_bytes : 0));
      j["traffic_matrix"] = moe_record_traffic_matrix(matrix, per_row);
    } else {
      j["traffic_matrix"] = nullptr;
    }
    j["row_convention"] = workload::to_string(w.rows);
    j["ep_size"] = w.generator.ep_size();
    j["counts_exchange"] =
        mc.layout.has_counts ? nlohmann::json(mc.params.counts_timed ? "timed" : "untimed") : nlohmann::json(nullptr);
    j["counts_exchange_us"] = nullptr;  // measured by the runner (side operation)
    // Additions (optional in the schema):
    j["routing_settings"] = routing_settings_json(settings);
    j["sigma"] = settings.popularity == workload::Popularity::lognormal ? nlohmann::json(w.generator.sigma())
                                                                        : nlohmann::json(nullptr);
    j["imbalance_target"] = settings.imbalance ? nlohmann::json(*settings.imbalance) : nlohmann::json(nullptr);
    j["max_rank_rows"] = load.max_rows;
    j["mean_rank_rows"] = load.mean_rows;
    j["rows_total"] = matrix.total_rows();
    j["bytes_per_row"] = {{"dispatch", w.dispatch_row_bytes}, {"combine", w.combine_row_bytes}};
    j["algorithm"] = mc.layout.algo == MoeAlgo::hierarchical ? "hierarchical" : "flat";
    moe_record_link_bytes(j, mc.traffic, n <= 64);
    return j;
  }

  [[nodiscard]] std::string size_label(const Shape& shape, const CaseContext& ctx) const override {
    std::string label;
    if (const auto* mc = dynamic_cast<const MoeCase*>(shape.detail.get())) {
      const auto& w = *mc->w;
      label = fmt::format("{}:T{}:{}:ep{}:{}", w.config.profile.name, w.config.routing.tokens_per_rank,
                          routing_text(w.config.routing.settings, std::nullopt), w.generator.ep_size(),
                          workload::to_string(w.rows));
      if (mc->layout.has_counts) label += mc->params.counts_timed ? ":cx-timed" : ":cx-untimed";
    } else if (ctx.params != nullptr) {
      for (const auto& [k, v] : *ctx.params) label += fmt::format("{}{}={}", label.empty() ? "" : ";", k, v);
    }
    for (auto& ch : label) {
      if (ch == '|') ch = '/';
    }
    label.erase(std::remove(label.begin(), label.end(), ' '), label.end());
    return label;
  }

 private:
  static void check_block(const RowBlock& b, std::size_t rows) {
    if (static_cast<std::int64_t>(rows) != b.rows) {
      throw Error(ExitCode::check_failed,
                  fmt::format("moe: routing of rank {} gives {} rows for rank {}, the counts matrix {}", b.src_rank_idx,
                              rows, b.dst_rank_idx, b.rows));
    }
  }

  Shape build(std::uint64_t requested_bytes, const CaseContext& ctx) const {
    const MoeParams p = case_moe_params(requested_bytes, ctx.params, ctx.num_ranks);
    const int n = ctx.num_ranks;
    auto mc = std::make_shared<MoeCase>();
    mc->w = moe_workload(p, n);
    mc->params = p;
    mc->placement = moe_placement(ctx.placement, n);
    const MoeWorkload& w = *mc->w;
    mc->layout = moe_layout(w.matrix(), w.dispatch_row_bytes, w.combine_row_bytes, op_, moe_algo_of(ctx.algo), ctx.rank,
                            mc->placement, w.exchange_group);
    mc->traffic = moe_traffic_summary(w.matrix(), w.dispatch_row_bytes, w.combine_row_bytes, op_, mc->placement);
    const std::uint64_t elem = dtype_size(ctx.dtype);
    Shape s;
    s.send_elems = static_cast<std::size_t>((mc->layout.send_bytes + elem - 1) / elem);
    s.recv_elems = static_cast<std::size_t>((mc->layout.recv_bytes + elem - 1) / elem);
    s.bytes = mc->traffic.bytes_max_rank;
    s.count = s.bytes / elem;
    const auto& mine = mc->traffic.per_rank[static_cast<std::size_t>(ctx.rank)];
    s.bytes_per_rank_send = mine.send_total;
    s.bytes_per_rank_recv = mine.recv_total;
    s.bytes_max_rank = mc->traffic.bytes_max_rank;
    s.bytes_logical_total = mc->traffic.bytes_logical_total;
    s.detail = std::move(mc);
    return s;
  }

  // The combined output of every token: the weighted sum of its rows (copy: weight x expert
  // output; dedup: the destinations' partial sums) against combine_expected over all k experts.
  static std::uint64_t check_combined(const unsigned char* in, const MoeCase& mc, RowCodec& codec,
                                      const RankRouting& own) {
    const MoeWorkload& w = *mc.w;
    const int hidden = codec.hidden();
    const Dtype dtype = codec.combine_dtype();
    // Where each token's rows are.
    std::vector<std::vector<std::pair<const unsigned char*, int>>> rows_of(static_cast<std::size_t>(own.num_tokens));
    for (const auto& b : mc.layout.combine.final_blocks) {
      const auto rows = workload::rows_for_destination(own, b.dst_rank_idx, w.rows);
      for (std::size_t j = 0; j < rows.size(); ++j) {
        rows_of[static_cast<std::size_t>(rows[j].token_idx)].emplace_back(in + b.offset + j * codec.row_bytes(true),
                                                                          rows[j].expert_idx);
      }
    }
    std::uint64_t wrong = 0;
    std::vector<double> sum(static_cast<std::size_t>(hidden));
    for (int t = 0; t < own.num_tokens; ++t) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for (const auto& [row, expert] : rows_of[static_cast<std::size_t>(t)]) {
        const double weight = expert >= 0 ? workload::combine_weight(own.src_rank_idx, t, expert, w.combine_rule) : 1.0;
        for (int i = 0; i < hidden; ++i) {
          sum[static_cast<std::size_t>(i)] += weight * load_element(row, static_cast<std::size_t>(i), dtype);
        }
      }
      const auto& expected = codec.combined_expected(own, t);
      for (int i = 0; i < hidden; ++i) {
        const auto idx = static_cast<std::size_t>(i);
        wrong += sum[idx] != static_cast<double>(expected[idx]) ? 1 : 0;
      }
    }
    return wrong;
  }

  MoeOp op_;
};

}  // namespace

namespace {
template <MoeOp op>
std::unique_ptr<Collective> make_moe() {
  return std::make_unique<MoeCollective>(op);
}
const bool kMoeRegistered = register_collective(&make_moe<MoeOp::dispatch>) &&
                            register_collective(&make_moe<MoeOp::combine>) &&
                            register_collective(&make_moe<MoeOp::roundtrip>);
}  // namespace

}  // namespace collbench::coll

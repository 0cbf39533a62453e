// Buffer layouts and traffic of the MoE harness: the regions and exchange stages of one rank for
// the flat and the hierarchical algorithm (moe_layout), and the bytes between ranks (see
// moe_plan.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/join.hpp"

namespace collbench::coll {
namespace {

using workload::CountsMatrix;

std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

// Ranks of each domain, ascending (the domain communicator's rank order).
std::vector<std::vector<int>> grid_domain_members(const Placement& p) {
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

// One all-to-all-v stage over every rank. Dispatch sends my rows for each peer's experts and
// receives the peer's rows for mine; combine sends back my outputs for each peer's tokens and
// receives the peer's outputs for my tokens (the same blocks with source and target swapped).
void flat_exchange(bool combine, ExchangePlan& plan, const CountsMatrix& c, std::int64_t row_bytes, int r,
                   std::uint64_t send_at, std::uint64_t recv_at, std::uint64_t& send_end, std::uint64_t& recv_end) {
  const int n = c.num_ranks;
  RegionBuilder send(send_at);
  RegionBuilder fin(recv_at);
  auto st = make_stage(ExchangeStage::Level::comm, false, send_at, recv_at, static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    const auto i = static_cast<std::size_t>(p);
    const int from = combine ? p : r;  // the rows' source and target in the counts matrix
    const int to = combine ? r : p;
    const RowBlock sb = send.add(combine, from, to, c.at(from, to), row_bytes);
    const RowBlock rb = fin.add(combine, to, from, c.at(to, from), row_bytes);
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
  g.members = grid_domain_members(p);
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

// A region laid out in grid order ([domain][local index]): where each block and each domain's
// run of blocks starts, and each domain's bytes.
struct GridRegion {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::vector<std::uint64_t> block_off;     // [d * m + l]
  std::vector<std::uint64_t> domain_off;    // [d]
  std::vector<std::uint64_t> domain_bytes;  // [d]
};

// Lays out from `at`, in grid order, the block of the pair pair_of(d, l) = {source, destination}
// for every grid position, and appends the blocks to `out`.
template <class PairOf>
GridRegion lay_grid_region(std::vector<RowBlock>& out, const CountsMatrix& c, std::int64_t rb, const Grid& g,
                           bool combine, std::uint64_t at, PairOf pair_of) {
  const auto dd = static_cast<std::size_t>(g.num_domains);
  RegionBuilder b(at);
  GridRegion region;
  region.start = at;
  region.block_off.resize(dd * static_cast<std::size_t>(g.m));
  region.domain_off.resize(dd);
  region.domain_bytes.resize(dd);
  for (int d = 0; d < g.num_domains; ++d) {
    const auto di = static_cast<std::size_t>(d);
    region.domain_off[di] = b.next;
    for (int l = 0; l < g.m; ++l) {
      const auto [s, t] = pair_of(d, l);
      const RowBlock blk = b.add(combine, s, t, c.at(s, t), rb);
      region.block_off[static_cast<std::size_t>(d * g.m + l)] = blk.offset;
      out.push_back(blk);
    }
    region.domain_bytes[di] = b.next - region.domain_off[di];
  }
  region.end = b.next;
  return region;
}

// The forwarder's staging region, [domain d'][local source l]: the rows between (my d, l) and
// (d', my l), dispatch rows bound for the expert rank or combine rows returned from it.
GridRegion lay_staging_region(ExchangePlan& plan, const CountsMatrix& c, std::int64_t rb, const Grid& g, bool combine,
                              std::uint64_t at) {
  return lay_grid_region(plan.staging_blocks, c, rb, g, combine, at, [&g](int d, int l) {
    return std::pair{g.at(g.my_d, l), g.at(d, g.my_l)};
  });
}

// The units of the rows of one routing pair.
std::size_t pair_units(const CountsMatrix& c, int s, int t, std::int64_t rb) {
  return units(u64(c.at(s, t)) * u64(rb));
}

// The stage across domains, between the ranks with my local index: domain d's run of `from` to
// domain d, into domain d's run of `to`.
ExchangeStage hier_cross_stage(const Grid& g, bool from_recv, const GridRegion& from, const GridRegion& to) {
  auto st =
      make_stage(ExchangeStage::Level::cross, from_recv, from.start, to.start, static_cast<std::size_t>(g.num_domains));
  confine_cross(st, g);
  for (int d = 0; d < g.num_domains; ++d) {
    const auto i = static_cast<std::size_t>(d);
    st.send_counts[i] = units(from.domain_bytes[i]);
    st.send_displs[i] = units(from.block_off[static_cast<std::size_t>(d * g.m)] - from.start);
    st.recv_counts[i] = units(to.domain_bytes[i]);
    st.recv_displs[i] = units(to.domain_off[i] - to.start);
  }
  return st;
}

// Dispatch stage 1 for destination domain d, inside my domain: my rows for (d, l) to my domain's
// rank l, and from my domain's rank l its rows for (d, my l) into my staging region.
ExchangeStage hier_dispatch_domain_stage(const CountsMatrix& c, std::int64_t rb, int r, const Grid& g, int d,
                                         std::uint64_t send_at, const std::vector<std::uint64_t>& send_off,
                                         const GridRegion& stg) {
  auto st = make_stage(ExchangeStage::Level::domain, false, send_at, stg.start, static_cast<std::size_t>(g.m));
  for (int l = 0; l < g.m; ++l) {
    const auto i = static_cast<std::size_t>(l);
    const int t = g.at(d, l);
    st.send_counts[i] = pair_units(c, r, t, rb);
    st.send_displs[i] = units(send_off[static_cast<std::size_t>(t)] - send_at);
    st.recv_counts[i] = pair_units(c, g.at(g.my_d, l), g.at(d, g.my_l), rb);
    st.recv_displs[i] = units(stg.block_off[static_cast<std::size_t>(d * g.m + l)] - stg.start);
  }
  return st;
}

// Combine stage 2 for expert domain d, inside my domain: the staged outputs of (d, my l) to my
// domain's rank l, and from my domain's rank l the outputs of (d, l) for me into my final region.
ExchangeStage hier_combine_domain_stage(const CountsMatrix& c, std::int64_t rb, int r, const Grid& g, int d,
                                        const GridRegion& stg, const GridRegion& fin) {
  auto st = make_stage(ExchangeStage::Level::domain, true, stg.start, fin.start, static_cast<std::size_t>(g.m));
  for (int l = 0; l < g.m; ++l) {
    const auto i = static_cast<std::size_t>(l);
    const auto b = static_cast<std::size_t>(d * g.m + l);
    st.send_counts[i] = pair_units(c, g.at(g.my_d, l), g.at(d, g.my_l), rb);
    st.send_displs[i] = units(stg.block_off[b] - stg.start);
    st.recv_counts[i] = pair_units(c, r, g.at(d, l), rb);  // the forwarder (my d, l) holds them for me
    st.recv_displs[i] = units(fin.block_off[b] - fin.start);
  }
  return st;
}

void hier_dispatch(ExchangePlan& plan, const CountsMatrix& c, std::int64_t rb, int r, const Grid& g,
                   std::uint64_t send_at, std::uint64_t recv_at, std::uint64_t& send_end, std::uint64_t& recv_end) {
  const int n = c.num_ranks;
  // Send rows in destination rank order, as flat.
  RegionBuilder send(send_at);
  std::vector<std::uint64_t> send_off(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    const RowBlock b = send.add(false, r, t, c.at(r, t), rb);
    send_off[static_cast<std::size_t>(t)] = b.offset;
    plan.send_blocks.push_back(b);
  }
  // Final region: [source domain][source local index].
  const GridRegion fin = lay_grid_region(plan.final_blocks, c, rb, g, false, recv_at, [&g, r](int d, int l) {
    return std::pair{g.at(d, l), r};
  });
  const GridRegion stg = lay_staging_region(plan, c, rb, g, false, fin.end);
  // Stage 1: one all-to-all-v inside the domain per destination domain (of the EP group).
  for (int d = g.d_first; d < g.d_first + g.d_count; ++d) {
    plan.stages.push_back(hier_dispatch_domain_stage(c, rb, r, g, d, send_at, send_off, stg));
  }
  // Stage 2: across domains, between the ranks with my local index.
  plan.stages.push_back(hier_cross_stage(g, true, stg, fin));
  send_end = send.next;
  recv_end = stg.end;
}

void hier_combine(ExchangePlan& plan, const CountsMatrix& c, std::int64_t rb, int r, const Grid& g,
                  std::uint64_t send_at, std::uint64_t recv_at, std::uint64_t& send_end, std::uint64_t& recv_end) {
  // Send: my outputs for every source, [source domain][source local index].
  const GridRegion send = lay_grid_region(plan.send_blocks, c, rb, g, true, send_at, [&g, r](int d, int l) {
    return std::pair{g.at(d, l), r};
  });
  // Final: every expert rank's outputs for my tokens, [expert domain][expert local index].
  const GridRegion fin = lay_grid_region(plan.final_blocks, c, rb, g, true, recv_at, [&g, r](int d, int l) {
    return std::pair{r, g.at(d, l)};
  });
  const GridRegion stg = lay_staging_region(plan, c, rb, g, true, fin.end);
  // Stage 1: across domains, to the rank of the source domain with my local index.
  plan.stages.push_back(hier_cross_stage(g, false, send, stg));
  // Stage 2: one all-to-all-v inside the domain per expert domain (of the EP group): scatter to
  // the sources.
  for (int d = g.d_first; d < g.d_first + g.d_count; ++d) {
    plan.stages.push_back(hier_combine_domain_stage(c, rb, r, g, d, stg, fin));
  }
  send_end = send.end;
  recv_end = stg.end;
}

}  // namespace

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
      flat_exchange(false, L.dispatch, counts, dispatch_row_bytes, rank_idx, send_at, recv_at, send_at, recv_at);
    }
  }
  if (op != MoeOp::dispatch) {
    if (grid) {
      hier_combine(L.combine, counts, combine_row_bytes, rank_idx, *grid, send_at, recv_at, send_at, recv_at);
    } else {
      flat_exchange(true, L.combine, counts, combine_row_bytes, rank_idx, send_at, recv_at, send_at, recv_at);
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

}  // namespace collbench::coll

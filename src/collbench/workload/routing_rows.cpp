// What the routing means for buffers: a counts matrix's row and column sums, and the rows of
// one source's send buffer grouped by destination (routing.hpp). The generator itself, which
// routes the tokens, is routing.cpp.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "collbench/workload/routing.hpp"

namespace collbench::workload {

std::vector<std::int64_t> CountsMatrix::send_rows() const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(num_ranks), 0);
  for (int s = 0; s < num_ranks; ++s) {
    for (int d = first_peer(s); d < first_peer(s) + width(); ++d) out[s] += at(s, d);
  }
  return out;
}

std::vector<std::int64_t> CountsMatrix::receive_rows() const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(num_ranks), 0);
  for (int s = 0; s < num_ranks; ++s) {
    for (int d = first_peer(s); d < first_peer(s) + width(); ++d) out[d] += at(s, d);
  }
  return out;
}

std::int64_t CountsMatrix::total_rows() const {
  return std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
}

SendLayout send_layout(const RankRouting& routing, int num_ranks, RowConvention convention) {
  SendLayout layout;
  layout.offsets.assign(static_cast<std::size_t>(num_ranks) + 1, 0);
  const int k = routing.top_k;
  // Pass 1: count per destination; pass 2: place rows in token (then choice) order.
  auto for_each_row = [&](auto&& emit) {
    for (int t = 0; t < routing.num_tokens; ++t) {
      const auto experts = routing.token_experts(t);
      const auto dests = routing.token_dest_ranks(t);
      for (int j = 0; j < k; ++j) {
        if (convention == RowConvention::dedup) {
          bool seen = false;
          for (int i = 0; i < j && !seen; ++i) seen = dests[i] == dests[j];
          if (seen) continue;
          emit(dests[j], RowRef{t, -1});
        } else {
          emit(dests[j], RowRef{t, experts[j]});
        }
      }
    }
  };
  for_each_row([&](std::int32_t dst, const RowRef&) { ++layout.offsets[dst + 1]; });
  for (int d = 0; d < num_ranks; ++d) layout.offsets[d + 1] += layout.offsets[d];
  layout.rows.resize(static_cast<std::size_t>(layout.offsets[num_ranks]));
  std::vector<std::int64_t> next(layout.offsets.begin(), layout.offsets.end() - 1);
  for_each_row([&](std::int32_t dst, const RowRef& row) { layout.rows[static_cast<std::size_t>(next[dst]++)] = row; });
  return layout;
}

std::vector<RowRef> rows_for_destination(const RankRouting& routing, int dst_rank_idx, RowConvention convention) {
  std::vector<RowRef> rows;
  const int k = routing.top_k;
  for (int t = 0; t < routing.num_tokens; ++t) {
    const auto experts = routing.token_experts(t);
    const auto dests = routing.token_dest_ranks(t);
    bool sent = false;
    for (int j = 0; j < k; ++j) {
      if (dests[j] != dst_rank_idx) continue;
      if (convention == RowConvention::copy) {
        rows.push_back(RowRef{t, experts[j]});
      } else if (!sent) {
        rows.push_back(RowRef{t, -1});
        sent = true;
      }
    }
  }
  return rows;
}

}  // namespace collbench::workload

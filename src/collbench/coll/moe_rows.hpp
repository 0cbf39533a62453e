// The payload rows of the MoE families (moe.cpp): every dispatch and combine row generated from
// its (source, token, expert or rank) key and written in the workload's wire format (values and
// block scales, workload/payload.hpp), and checked byte for byte on arrival. Header-only, used by
// moe.cpp alone.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/workload/hash.hpp"
#include "collbench/workload/payload.hpp"
#include "collbench/workload/routing.hpp"

namespace collbench::coll::moe_rows {

using workload::RankRouting;
using workload::RowRef;

// Bytes of the integers 0..255 in a dtype (every value the payloads use is exact there).
struct Codec {
  Dtype dtype = Dtype::float32;
  std::size_t size = 4;
  std::array<std::array<unsigned char, 8>, 256> bytes{};
  explicit Codec(Dtype d) : dtype(d), size(dtype_size(d)) {
    for (int v = 0; v < 256; ++v) store_element(bytes[static_cast<std::size_t>(v)].data(), 0, d, v);
  }
};

// row_signature() of payload.hpp for a whole row: one hash per 16 elements.
inline void signature_values(std::uint64_t key, int hidden, int max_value, int* out) {
  for (int blk = 0; blk * 16 < hidden; ++blk) {
    const std::uint64_t h = workload::mix64(key + static_cast<std::uint64_t>(blk + 1) * workload::kGoldenGamma);
    const int end = std::min(16, hidden - blk * 16);
    for (int j = 0; j < end; ++j) out[blk * 16 + j] = 1 + static_cast<int>((h >> (4 * j)) & 0xF) % max_value;
  }
}

// Writes and checks rows of one case.
class RowCodec {
 public:
  explicit RowCodec(const MoeWorkload& w)
      : w_(w),
        hidden_(w.config.profile.hidden_size),
        dispatch_(w.config.profile.dispatch.dtype),
        combine_(w.config.profile.combine.dtype),
        dispatch_scales_(scales_of(w.config.profile.dispatch, hidden_)),
        combine_scales_(scales_of(w.config.profile.combine, hidden_)),
        values_(static_cast<std::size_t>(hidden_)),
        acc_(static_cast<std::size_t>(hidden_)),
        scratch_(static_cast<std::size_t>(std::max(w.dispatch_row_bytes, w.combine_row_bytes))) {
    for (const bool combine : {false, true}) {
      const Codec& codec = combine ? combine_ : dispatch_;
      const Scales& scales = combine ? combine_scales_ : dispatch_scales_;
      const std::size_t bytes =
          static_cast<std::size_t>(hidden_) * codec.size + static_cast<std::size_t>(scales.count) * scales.size;
      if (bytes != row_bytes(combine)) {
        throw InputError(fmt::format("workload '{}': {} rows of {} B do not match {} values and {} scales",
                                     w.config.profile.name, combine ? "combine" : "dispatch", row_bytes(combine),
                                     hidden_, scales.count));
      }
    }
  }

  // Dispatch row for (src, token, x): x = expert (copy rows) or destination rank (dedup rows).
  void dispatch_row(unsigned char* out, int src, int token, int x) {
    signature_values(workload::row_key(src, token, x), hidden_, w_.dispatch_max_value, values_.data());
    encode(out, dispatch_, dispatch_scales_, values_.data());
  }

  // Combine row the expert rank `dst` returns for (src, token): copy rows carry expert x's
  // output; dedup rows the weighted sum over the token's experts on dst.
  void combine_row(unsigned char* out, const RankRouting& routing, int dst, const RowRef& row) {
    const int src = routing.src_rank_idx;
    const auto& rule = w_.combine_rule;
    if (row.expert_idx >= 0) {
      signature_values(workload::row_key(src, row.token_idx, row.expert_idx), hidden_, rule.max_value, values_.data());
    } else {
      std::fill(values_.begin(), values_.end(), 0);
      const auto experts = routing.token_experts(row.token_idx);
      const auto dests = routing.token_dest_ranks(row.token_idx);
      for (std::size_t j = 0; j < experts.size(); ++j) {
        if (dests[j] != dst) continue;
        const int weight = workload::combine_weight(src, row.token_idx, experts[j], rule);
        signature_values(workload::row_key(src, row.token_idx, experts[j]), hidden_, rule.max_value, acc_.data());
        for (int i = 0; i < hidden_; ++i)
          values_[static_cast<std::size_t>(i)] += weight * acc_[static_cast<std::size_t>(i)];
      }
    }
    encode(out, combine_, combine_scales_, values_.data());
  }

  // Wrong elements of a received row against the expected one (values and scales).
  std::uint64_t check(const unsigned char* got, bool combine, const RankRouting& routing, int dst, const RowRef& row) {
    if (combine) {
      combine_row(scratch_.data(), routing, dst, row);
    } else {
      dispatch_row(scratch_.data(), routing.src_rank_idx, row.token_idx, row.expert_idx >= 0 ? row.expert_idx : dst);
    }
    const Codec& codec = combine ? combine_ : dispatch_;
    const auto& scales = combine ? combine_scales_ : dispatch_scales_;
    const std::size_t bytes = row_bytes(combine);
    if (std::memcmp(got, scratch_.data(), bytes) == 0) return 0;
    std::uint64_t wrong = 0;
    for (int i = 0; i < hidden_; ++i) {
      const std::size_t at = static_cast<std::size_t>(i) * codec.size;
      wrong += std::memcmp(got + at, scratch_.data() + at, codec.size) != 0 ? 1 : 0;
    }
    const std::size_t base = static_cast<std::size_t>(hidden_) * codec.size;
    for (int i = 0; i < scales.count; ++i) {
      const std::size_t at = base + static_cast<std::size_t>(i) * scales.size;
      wrong += std::memcmp(got + at, scratch_.data() + at, scales.size) != 0 ? 1 : 0;
    }
    return wrong;
  }

  // combine_expected() over all of the token's experts, for every element.
  const std::vector<int>& combined_expected(const RankRouting& routing, int token) {
    std::fill(values_.begin(), values_.end(), 0);
    const int src = routing.src_rank_idx;
    for (const auto e : routing.token_experts(token)) {
      const int weight = workload::combine_weight(src, token, e, w_.combine_rule);
      signature_values(workload::row_key(src, token, e), hidden_, w_.combine_rule.max_value, acc_.data());
      for (int i = 0; i < hidden_; ++i)
        values_[static_cast<std::size_t>(i)] += weight * acc_[static_cast<std::size_t>(i)];
    }
    return values_;
  }

  [[nodiscard]] std::size_t row_bytes(bool combine) const {
    return static_cast<std::size_t>(combine ? w_.combine_row_bytes : w_.dispatch_row_bytes);
  }
  [[nodiscard]] int hidden() const { return hidden_; }
  [[nodiscard]] Dtype combine_dtype() const { return combine_.dtype; }

 private:
  struct Scales {
    int count = 0;
    std::size_t size = 0;
    std::array<unsigned char, 8> one{};  // 1.0 in the scale dtype
  };
  static Scales scales_of(const workload::RowFormat& f, int hidden) {
    Scales s;
    if (f.scale_block_channels > 0) {
      s.size = dtype_size(f.scale_dtype);
      s.count = (hidden + f.scale_block_channels - 1) / f.scale_block_channels;  // as row_bytes() counts them
      store_element(s.one.data(), 0, f.scale_dtype, 1.0);
    }
    return s;
  }

  void encode(unsigned char* out, const Codec& codec, const Scales& scales, const int* values) const {
    for (int i = 0; i < hidden_; ++i) {
      std::memcpy(out + static_cast<std::size_t>(i) * codec.size,
                  codec.bytes[static_cast<std::size_t>(values[i])].data(), codec.size);
    }
    unsigned char* tail = out + static_cast<std::size_t>(hidden_) * codec.size;
    for (int i = 0; i < scales.count; ++i)
      std::memcpy(tail + static_cast<std::size_t>(i) * scales.size, scales.one.data(), scales.size);
  }

  const MoeWorkload& w_;
  int hidden_;
  Codec dispatch_, combine_;
  Scales dispatch_scales_, combine_scales_;
  std::vector<int> values_, acc_;
  std::vector<unsigned char> scratch_;
};

}  // namespace collbench::coll::moe_rows

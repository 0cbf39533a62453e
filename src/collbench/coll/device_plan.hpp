// Device fill/verify plans: a collective's input, and its expected result, as a list of
// pattern segments (pattern_hd.hpp) that the NCCL backend's kernels execute on the GPU instead
// of filling and checking on the host. The plans restate, per collective family, exactly what
// coll/<family>.cpp fill() and verify() do; tests/unit/test_nccl_host_plan.cpp runs every plan
// through the host reference executor below and compares it with the family's own fill()
// output (byte for byte) and verify() counts, so a family that changes its layout without its
// plan fails there. Families without a plan (nullopt) keep the host path.
//
// Header-only host code (no CUDA): usable from the runner, the tests and the CPU-only build. It
// lives in coll (it restates coll's layouts) and names the NCCL backend's namespace (its plans are
// that backend's kernel input); the backend itself never includes coll (docs/architecture.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "collbench/backend/nccl/pattern_hd.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/coll/sendrecv.hpp"
#include "collbench/core/collective_facts.hpp"

namespace collbench::backend::nccl {

// The kernel parameters of a case (the same rule as coll::reduce_pattern).
inline hd::PatternParams pattern_params(Dtype dtype, Redop redop, int num_ranks) {
  return pattern::pattern_params(dtype, redop, num_ranks);
}

inline hd::PatternParams pattern_params(const coll::CaseContext& ctx) {
  return pattern_params(ctx.dtype, ctx.redop, ctx.num_ranks);
}

namespace detail {

inline hd::Segment segment(std::uint64_t offset, std::uint64_t count, hd::SegmentKind kind, int src = 0, int dst = 0,
                           std::uint64_t first = 0) {
  hd::Segment s;
  s.offset_elems = offset;
  s.count = count;
  s.first_elem = first;
  s.src = src;
  s.dst = dst;
  s.kind = kind;
  return s;
}

}  // namespace detail

// This rank's input, relative to the start of the input (in place: add the family's
// in_place_input_offset). Elements outside the segments are zero.
inline std::optional<std::vector<hd::Segment>> fill_plan(std::string_view collective, const coll::Shape& s,
                                                         const coll::CaseContext& ctx) {
  using detail::segment;
  using K = hd::SegmentKind;
  const int n = ctx.num_ranks;
  std::vector<hd::Segment> out;
  const auto id = collective_id(collective);
  if (!id) return std::nullopt;
  switch (*id) {
    case CollectiveId::allreduce:
    case CollectiveId::reducescatter:
      out.push_back(segment(0, s.send_elems, K::reduce_input, ctx.rank));
      break;
    case CollectiveId::allgather:
      out.push_back(segment(0, s.send_elems, K::move, ctx.rank, 0));
      break;
    case CollectiveId::alltoall: {
      const std::uint64_t per_peer = s.count / static_cast<std::uint64_t>(n);
      for (int dst = 0; dst < n; ++dst) {
        out.push_back(segment(static_cast<std::uint64_t>(dst) * per_peer, per_peer, K::move, ctx.rank, dst));
      }
      break;
    }
    case CollectiveId::alltoallv:
      for (int dst = 0; dst < n; ++dst) {
        const auto idx = static_cast<std::size_t>(dst);
        out.push_back(segment(s.send_displs.at(idx), s.send_counts.at(idx), K::move, ctx.rank, dst));
      }
      break;
    case CollectiveId::broadcast:
      out.push_back(ctx.rank == ctx.root ? segment(0, s.send_elems, K::move, ctx.root, 0)
                                         : segment(0, s.send_elems, K::zero));
      break;
    case CollectiveId::sendrecv:  // the case's pairing (ring, round-robin, rail), as the family's fill
      out.push_back(segment(0, s.send_elems, K::move, ctx.rank, coll::sendrecv_peers(ctx).send_to));
      break;
    default:
      return std::nullopt;
  }
  return out;
}

// This rank's expected result, relative to where the result is found (in place: add the
// family's in_place_result_offset). The segments cover shape.recv_elems elements exactly once.
inline std::optional<std::vector<hd::Segment>> verify_plan(std::string_view collective, const coll::Shape& s,
                                                           const coll::CaseContext& ctx) {
  using detail::segment;
  using K = hd::SegmentKind;
  const int n = ctx.num_ranks;
  std::vector<hd::Segment> out;
  const auto id = collective_id(collective);
  if (!id) return std::nullopt;
  switch (*id) {
    case CollectiveId::allreduce:
      out.push_back(segment(0, s.recv_elems, K::reduce_expected));
      break;
    case CollectiveId::reducescatter:
      out.push_back(segment(0, s.recv_elems, K::reduce_expected, 0, 0, static_cast<std::uint64_t>(ctx.rank) * s.count));
      break;
    case CollectiveId::allgather:
      for (int src = 0; src < n; ++src) {
        out.push_back(segment(static_cast<std::uint64_t>(src) * s.count, s.count, K::move, src, 0));
      }
      break;
    case CollectiveId::alltoall: {
      const std::uint64_t per_peer = s.count / static_cast<std::uint64_t>(n);
      for (int src = 0; src < n; ++src) {
        out.push_back(segment(static_cast<std::uint64_t>(src) * per_peer, per_peer, K::move, src, ctx.rank));
      }
      break;
    }
    case CollectiveId::alltoallv:
      for (int src = 0; src < n; ++src) {
        const auto idx = static_cast<std::size_t>(src);
        out.push_back(segment(s.recv_displs.at(idx), s.recv_counts.at(idx), K::move, src, ctx.rank));
      }
      break;
    case CollectiveId::broadcast:
      out.push_back(segment(0, s.recv_elems, K::move, ctx.root, 0));
      break;
    case CollectiveId::sendrecv:
      out.push_back(segment(0, s.recv_elems, K::move, coll::sendrecv_peers(ctx).recv_from, ctx.rank));
      break;
    default:
      return std::nullopt;
  }
  return out;
}

// Host reference executor of a plan (what the fill kernel does, with the kernels' stepping
// cursor): writes every segment's values as raw dtype bits into `dst` (elements of p.dtype).
// Elements outside the segments are left alone.
inline void apply_plan_host(void* dst, const hd::PatternParams& p, std::span<const hd::Segment> segments) {
  const std::size_t elem = dtype_size(p.dtype);
  auto* out = static_cast<unsigned char*>(dst);
  for (const auto& seg : segments) {
    pattern::Cursor c = pattern::cursor_at(p, seg, seg.first_elem);
    for (std::uint64_t i = 0; i < seg.count; ++i, pattern::next(c, p)) {
      const std::uint64_t bits = pattern::encode_bits(p.dtype, pattern::value_at(p, seg.kind, c));
      std::memcpy(out + (seg.offset_elems + i) * elem, &bits, elem);  // little endian: the low bytes
    }
  }
}

// Host reference of the check kernel: elements of `src` whose raw bits differ from the plan's.
inline std::uint64_t count_wrong_host(const void* src, const hd::PatternParams& p,
                                      std::span<const hd::Segment> segments) {
  const std::size_t elem = dtype_size(p.dtype);
  const auto* in = static_cast<const unsigned char*>(src);
  std::uint64_t wrong = 0;
  for (const auto& seg : segments) {
    pattern::Cursor c = pattern::cursor_at(p, seg, seg.first_elem);
    for (std::uint64_t i = 0; i < seg.count; ++i, pattern::next(c, p)) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, in + (seg.offset_elems + i) * elem, elem);
      if (bits != pattern::encode_bits(p.dtype, pattern::value_at(p, seg.kind, c))) ++wrong;
    }
  }
  return wrong;
}

// The longest segment (the kernels' grid size).
inline std::uint64_t max_segment_count(std::span<const hd::Segment> segments) {
  std::uint64_t m = 0;
  for (const auto& s : segments) m = s.count > m ? s.count : m;
  return m;
}

}  // namespace collbench::backend::nccl

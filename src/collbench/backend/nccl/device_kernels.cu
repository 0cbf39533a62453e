// Fill and check kernels (GPU: sm_90, sm_100, sm_103). One thread block row per segment
// (blockIdx.y), grid-stride over the segment's elements; the element type is a template
// parameter so that the encode/decode switch is resolved at compile time.
#include <algorithm>

#include "collbench/backend/nccl/device_kernels.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"

namespace collbench::backend::nccl {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocksX = 4096;
constexpr int kMaxSegmentsPerLaunch = 65535;  // gridDim.y limit

template <Dtype D>
__global__ void __launch_bounds__(kThreads) fill_kernel(void* dst, hd::PatternParams p, const hd::Segment* segments) {
  const hd::Segment s = segments[blockIdx.y];
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < s.count; i += stride) {
    hd::store_as<D>(dst, s.offset_elems + i, static_cast<double>(hd::segment_value(p, s, i)));
  }
}

template <Dtype D>
__global__ void __launch_bounds__(kThreads)
    count_wrong_kernel(const void* src, hd::PatternParams p, const hd::Segment* segments, unsigned long long* counter) {
  const hd::Segment s = segments[blockIdx.y];
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < s.count; i += stride) {
    if (hd::load_as<D>(src, s.offset_elems + i) != static_cast<double>(hd::segment_value(p, s, i))) ++wrong;
  }
  // Every thread of the warp reaches this point (the loop is above), so a full-mask shuffle is safe.
  for (int offset = 16; offset > 0; offset >>= 1) wrong += __shfl_down_sync(0xffffffffu, wrong, offset);
  if ((threadIdx.x & 31u) == 0 && wrong != 0) atomicAdd(counter, wrong);
}

dim3 grid_for(std::uint64_t max_count, int segments) {
  const std::uint64_t blocks = (max_count + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(std::clamp<std::uint64_t>(blocks, 1, kMaxBlocksX)), static_cast<unsigned>(segments),
              1);
}

template <Dtype D>
void fill_typed(void* dst, const hd::PatternParams& p, const hd::Segment* segs, int num, std::uint64_t max_count,
                cudaStream_t stream) {
  for (int base = 0; base < num; base += kMaxSegmentsPerLaunch) {
    const int chunk = std::min(kMaxSegmentsPerLaunch, num - base);
    fill_kernel<D><<<grid_for(max_count, chunk), kThreads, 0, stream>>>(dst, p, segs + base);
    CB_CHECK_CUDA(cudaGetLastError());
  }
}

template <Dtype D>
void count_typed(const void* src, const hd::PatternParams& p, const hd::Segment* segs, int num, std::uint64_t max_count,
                 unsigned long long* counter, cudaStream_t stream) {
  for (int base = 0; base < num; base += kMaxSegmentsPerLaunch) {
    const int chunk = std::min(kMaxSegmentsPerLaunch, num - base);
    count_wrong_kernel<D><<<grid_for(max_count, chunk), kThreads, 0, stream>>>(src, p, segs + base, counter);
    CB_CHECK_CUDA(cudaGetLastError());
  }
}

}  // namespace

void launch_fill(void* dst, const hd::PatternParams& params, const hd::Segment* device_segments, int num_segments,
                 std::uint64_t max_count, cudaStream_t stream) {
  if (num_segments <= 0 || max_count == 0) return;
  switch (params.dtype) {
    case Dtype::int32:
      fill_typed<Dtype::int32>(dst, params, device_segments, num_segments, max_count, stream);
      return;
    case Dtype::int64:
      fill_typed<Dtype::int64>(dst, params, device_segments, num_segments, max_count, stream);
      return;
    case Dtype::float32:
      fill_typed<Dtype::float32>(dst, params, device_segments, num_segments, max_count, stream);
      return;
    case Dtype::float64:
      fill_typed<Dtype::float64>(dst, params, device_segments, num_segments, max_count, stream);
      return;
    case Dtype::float16:
      fill_typed<Dtype::float16>(dst, params, device_segments, num_segments, max_count, stream);
      return;
    case Dtype::bfloat16:
      fill_typed<Dtype::bfloat16>(dst, params, device_segments, num_segments, max_count, stream);
      return;
    case Dtype::float8e4m3:
      fill_typed<Dtype::float8e4m3>(dst, params, device_segments, num_segments, max_count, stream);
      return;
    case Dtype::float8e5m2:
      fill_typed<Dtype::float8e5m2>(dst, params, device_segments, num_segments, max_count, stream);
      return;
  }
}

void launch_count_wrong(const void* src, const hd::PatternParams& params, const hd::Segment* device_segments,
                        int num_segments, std::uint64_t max_count, unsigned long long* device_counter,
                        cudaStream_t stream) {
  if (num_segments <= 0 || max_count == 0) return;
  const auto* s = device_segments;
  const int n = num_segments;
  auto* c = device_counter;
  switch (params.dtype) {
    case Dtype::int32:
      count_typed<Dtype::int32>(src, params, s, n, max_count, c, stream);
      return;
    case Dtype::int64:
      count_typed<Dtype::int64>(src, params, s, n, max_count, c, stream);
      return;
    case Dtype::float32:
      count_typed<Dtype::float32>(src, params, s, n, max_count, c, stream);
      return;
    case Dtype::float64:
      count_typed<Dtype::float64>(src, params, s, n, max_count, c, stream);
      return;
    case Dtype::float16:
      count_typed<Dtype::float16>(src, params, s, n, max_count, c, stream);
      return;
    case Dtype::bfloat16:
      count_typed<Dtype::bfloat16>(src, params, s, n, max_count, c, stream);
      return;
    case Dtype::float8e4m3:
      count_typed<Dtype::float8e4m3>(src, params, s, n, max_count, c, stream);
      return;
    case Dtype::float8e5m2:
      count_typed<Dtype::float8e5m2>(src, params, s, n, max_count, c, stream);
      return;
  }
}

}  // namespace collbench::backend::nccl

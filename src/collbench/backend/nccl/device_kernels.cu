// Fill and check kernels (GPU: sm_90, sm_100, sm_103). One thread block row per segment
// (blockIdx.y); each thread runs pattern_kernels_hd.hpp's fill_part / count_part for its index in
// the row: 16-byte accesses, the pattern cursor stepped per element (no 64-bit modulo), values
// encoded straight to the dtype's bits and compared as raw bits. The dtype and the segment kind
// are template parameters, so the inner loop has no switch.
#include <algorithm>

#include "collbench/backend/nccl/device_kernels.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/pattern_kernels_hd.hpp"

namespace collbench::backend::nccl {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocksX = 4096;
constexpr int kMaxSegmentsPerLaunch = 65535;  // gridDim.y limit

using hd::SegmentKind;

__device__ inline std::uint64_t thread_index() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ inline std::uint64_t thread_count() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
}

template <Dtype D>
using Bits = typename pattern::Storage<D>::type;

// The block's table of encodings (1-byte dtypes; pattern_kernels_hd.hpp). Every thread of the
// block calls it before any returns (it synchronises the block).
template <Dtype D>
__device__ const Bits<D>* block_lut() {
  __shared__ Bits<D> lut[hd::kLutEntries];
  if constexpr (hd::kUsesLut<D>) {
    hd::fill_lut<D>(lut, threadIdx.x, blockDim.x);
    __syncthreads();
  }
  return lut;
}

template <Dtype D>
__global__ void __launch_bounds__(kThreads) fill_kernel(void* dst, hd::PatternParams p, const hd::Segment* segments) {
  const Bits<D>* lut = block_lut<D>();
  const hd::Segment s = segments[blockIdx.y];
  const std::uint64_t t = thread_index();
  const std::uint64_t n = thread_count();
  switch (s.kind) {  // uniform over the block
    case SegmentKind::zero:
      hd::fill_part<D, SegmentKind::zero>(dst, p, s, t, n, lut);
      return;
    case SegmentKind::reduce_input:
      hd::fill_part<D, SegmentKind::reduce_input>(dst, p, s, t, n, lut);
      return;
    case SegmentKind::reduce_expected:
      hd::fill_part<D, SegmentKind::reduce_expected>(dst, p, s, t, n, lut);
      return;
    case SegmentKind::move:
      hd::fill_part<D, SegmentKind::move>(dst, p, s, t, n, lut);
      return;
  }
}

template <Dtype D>
__device__ std::uint64_t count_segment(const void* src, const hd::PatternParams& p, const hd::Segment& s,
                                       const Bits<D>* lut) {
  const std::uint64_t t = thread_index();
  const std::uint64_t n = thread_count();
  switch (s.kind) {
    case SegmentKind::zero:
      return hd::count_part<D, SegmentKind::zero>(src, p, s, t, n, lut);
    case SegmentKind::reduce_input:
      return hd::count_part<D, SegmentKind::reduce_input>(src, p, s, t, n, lut);
    case SegmentKind::reduce_expected:
      return hd::count_part<D, SegmentKind::reduce_expected>(src, p, s, t, n, lut);
    case SegmentKind::move:
      return hd::count_part<D, SegmentKind::move>(src, p, s, t, n, lut);
  }
  return 0;
}

template <Dtype D>
__global__ void __launch_bounds__(kThreads)
    count_wrong_kernel(const void* src, hd::PatternParams p, const hd::Segment* segments, unsigned long long* counter) {
  const Bits<D>* lut = block_lut<D>();
  unsigned long long wrong = count_segment<D>(src, p, segments[blockIdx.y], lut);
  // Every thread of the warp reaches this point, so a full-mask shuffle is safe.
  for (int offset = 16; offset > 0; offset >>= 1) wrong += __shfl_down_sync(0xffffffffu, wrong, offset);
  if ((threadIdx.x & 31u) == 0 && wrong != 0) atomicAdd(counter, wrong);
}

// One thread per 16-byte vector of the longest segment, at most kMaxBlocksX blocks per row (each
// thread then strides over several vectors); at least one block (the scalar head and tail).
dim3 grid_for(std::uint64_t max_count, std::size_t elem_size, int segments) {
  const std::uint64_t per_block = static_cast<std::uint64_t>(kThreads) * (16 / elem_size);
  const std::uint64_t blocks = (max_count + per_block - 1) / per_block;
  return dim3(static_cast<unsigned>(std::clamp<std::uint64_t>(blocks, 1, kMaxBlocksX)), static_cast<unsigned>(segments),
              1);
}

template <Dtype D>
void fill_typed(void* dst, const hd::PatternParams& p, const hd::Segment* segs, int num, std::uint64_t max_count,
                cudaStream_t stream) {
  for (int base = 0; base < num; base += kMaxSegmentsPerLaunch) {
    const int chunk = std::min(kMaxSegmentsPerLaunch, num - base);
    fill_kernel<D><<<grid_for(max_count, dtype_size(D), chunk), kThreads, 0, stream>>>(dst, p, segs + base);
    CB_CHECK_CUDA(cudaGetLastError());
  }
}

template <Dtype D>
void count_typed(const void* src, const hd::PatternParams& p, const hd::Segment* segs, int num, std::uint64_t max_count,
                 unsigned long long* counter, cudaStream_t stream) {
  for (int base = 0; base < num; base += kMaxSegmentsPerLaunch) {
    const int chunk = std::min(kMaxSegmentsPerLaunch, num - base);
    count_wrong_kernel<D>
        <<<grid_for(max_count, dtype_size(D), chunk), kThreads, 0, stream>>>(src, p, segs + base, counter);
    CB_CHECK_CUDA(cudaGetLastError());
  }
}

// Calls f.template run<D>() for the runtime dtype (CUDA builds as C++17: no template lambdas).
template <class F>
void with_dtype(Dtype dtype, const F& f) {
  switch (dtype) {
    case Dtype::int32:
      return f.template run<Dtype::int32>();
    case Dtype::int64:
      return f.template run<Dtype::int64>();
    case Dtype::float32:
      return f.template run<Dtype::float32>();
    case Dtype::float64:
      return f.template run<Dtype::float64>();
    case Dtype::float16:
      return f.template run<Dtype::float16>();
    case Dtype::bfloat16:
      return f.template run<Dtype::bfloat16>();
    case Dtype::float8e4m3:
      return f.template run<Dtype::float8e4m3>();
    case Dtype::float8e5m2:
      return f.template run<Dtype::float8e5m2>();
  }
}

struct FillLaunch {
  void* dst;
  const hd::PatternParams& params;
  const hd::Segment* segments;
  int num;
  std::uint64_t max_count;
  cudaStream_t stream;
  template <Dtype D>
  void run() const {
    fill_typed<D>(dst, params, segments, num, max_count, stream);
  }
};

struct CountLaunch {
  const void* src;
  const hd::PatternParams& params;
  const hd::Segment* segments;
  int num;
  std::uint64_t max_count;
  unsigned long long* counter;
  cudaStream_t stream;
  template <Dtype D>
  void run() const {
    count_typed<D>(src, params, segments, num, max_count, counter, stream);
  }
};

}  // namespace

void launch_fill(void* dst, const hd::PatternParams& params, const hd::Segment* device_segments, int num_segments,
                 std::uint64_t max_count, cudaStream_t stream) {
  if (num_segments <= 0 || max_count == 0) return;
  with_dtype(params.dtype, FillLaunch{dst, params, device_segments, num_segments, max_count, stream});
}

void launch_count_wrong(const void* src, const hd::PatternParams& params, const hd::Segment* device_segments,
                        int num_segments, std::uint64_t max_count, unsigned long long* device_counter,
                        cudaStream_t stream) {
  if (num_segments <= 0 || max_count == 0) return;
  with_dtype(params.dtype, CountLaunch{src, params, device_segments, num_segments, max_count, device_counter, stream});
}

}  // namespace collbench::backend::nccl

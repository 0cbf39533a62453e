// GPU micro-benchmarks (Google Benchmark, manual CUDA-event time; needs one NVIDIA GPU, sm_90+):
// the NCCL backend's fill and check kernels and a local element-wise reduction, each beside a
// device-to-device copy of the same size, the memory-bandwidth reference. A fill or check that
// runs far below copy bandwidth would make device-side verification a bottleneck of large
// sweeps; the reduction shows the local arithmetic cost a reduction collective pays per byte.
// bytes_per_second counts memory traffic (bytes read + bytes written). Run by scripts/gpu-smoke.
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "collbench/backend/nccl/device_kernels.hpp"
#include "collbench/backend/nccl/pattern_hd.hpp"
#include "collbench/coll/pattern.hpp"

namespace {

using collbench::Dtype;
using collbench::Redop;
namespace hd = collbench::backend::nccl::hd;

#define BENCH_CUDA(call)                                                                           \
  do {                                                                                             \
    const cudaError_t rc_ = (call);                                                                \
    if (rc_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(rc_)); \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

constexpr int kRanks = 72;  // an NVL72 rack: 72 peers / 72-way reductions

// Device memory and events shared by one benchmark run.
struct Scratch {
  explicit Scratch(std::size_t bytes) : bytes(bytes) {
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    BENCH_CUDA(cudaMalloc(&a, bytes));
    BENCH_CUDA(cudaMalloc(&b, bytes));
    BENCH_CUDA(cudaMalloc(&counter, sizeof(unsigned long long)));
    BENCH_CUDA(cudaMemsetAsync(a, 0, bytes, stream));
    BENCH_CUDA(cudaMemsetAsync(b, 0, bytes, stream));
    BENCH_CUDA(cudaEventCreate(&start));
    BENCH_CUDA(cudaEventCreate(&stop));
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(counter);
    cudaFree(segments);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  const hd::Segment* upload(const std::vector<hd::Segment>& segs) {
    cudaFree(segments);
    BENCH_CUDA(cudaMalloc(&segments, segs.size() * sizeof(hd::Segment)));
    BENCH_CUDA(cudaMemcpy(segments, segs.data(), segs.size() * sizeof(hd::Segment), cudaMemcpyHostToDevice));
    return static_cast<const hd::Segment*>(segments);
  }
  // Times `launch` (enqueued on `stream`) with CUDA events; one sample per benchmark iteration.
  template <class F>
  void run(benchmark::State& state, std::size_t traffic_bytes, F&& launch) {
    launch();  // warm-up (first-launch module loading)
    BENCH_CUDA(cudaStreamSynchronize(stream));
    for (auto _ : state) {
      BENCH_CUDA(cudaEventRecord(start, stream));
      launch();
      BENCH_CUDA(cudaEventRecord(stop, stream));
      BENCH_CUDA(cudaEventSynchronize(stop));
      float ms = 0.0f;
      BENCH_CUDA(cudaEventElapsedTime(&ms, start, stop));
      state.SetIterationTime(static_cast<double>(ms) / 1e3);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(traffic_bytes));
  }

  std::size_t bytes;
  cudaStream_t stream = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  void* segments = nullptr;
  unsigned long long* counter = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

hd::PatternParams params_for(Dtype d, Redop r) {
  const auto p = collbench::coll::reduce_pattern(r, d, kRanks);
  hd::PatternParams out;
  out.dtype = d;
  out.redop = r;
  out.num_ranks = kRanks;
  out.contributors = p.contributors;
  out.max_value = p.max_value;
  out.identity = static_cast<std::int64_t>(p.identity);
  return out;
}

std::size_t elem_size(Dtype d) {
  return collbench::dtype_size(d);
}

// One reduce segment over the whole buffer (all-reduce input of rank 5, or its expected result).
std::vector<hd::Segment> reduce_segments(std::uint64_t elems, hd::SegmentKind kind) {
  hd::Segment s;
  s.count = elems;
  s.kind = kind;
  s.src = 5;
  return {s};
}

// 72 per-peer blocks (all-to-all send buffer of rank 5, or its receive buffer).
std::vector<hd::Segment> move_segments(std::uint64_t elems) {
  std::vector<hd::Segment> segs;
  const std::uint64_t per_peer = elems / kRanks;
  for (int peer = 0; peer < kRanks; ++peer) {
    hd::Segment s;
    s.offset_elems = static_cast<std::uint64_t>(peer) * per_peer;
    s.count = per_peer;
    s.kind = hd::SegmentKind::move;
    s.src = 5;
    s.dst = peer;
    segs.push_back(s);
  }
  return segs;
}

void BM_DeviceCopy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Scratch s(bytes);
  s.run(state, 2 * bytes, [&] { BENCH_CUDA(cudaMemcpyAsync(s.b, s.a, bytes, cudaMemcpyDeviceToDevice, s.stream)); });
}

template <Dtype D, bool kMove>
void BM_Fill(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Scratch s(bytes);
  const std::uint64_t elems = bytes / elem_size(D);
  const auto segs = kMove ? move_segments(elems) : reduce_segments(elems, hd::SegmentKind::reduce_input);
  const hd::Segment* dev = s.upload(segs);
  const auto p = params_for(D, Redop::sum);
  s.run(state, bytes, [&] {
    collbench::backend::nccl::launch_fill(s.a, p, dev, static_cast<int>(segs.size()), segs.front().count, s.stream);
  });
}

template <Dtype D, bool kMove>
void BM_CountWrong(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Scratch s(bytes);
  const std::uint64_t elems = bytes / elem_size(D);
  const auto segs = kMove ? move_segments(elems) : reduce_segments(elems, hd::SegmentKind::reduce_expected);
  const hd::Segment* dev = s.upload(segs);
  const auto p = params_for(D, Redop::sum);
  collbench::backend::nccl::launch_fill(s.a, p, dev, static_cast<int>(segs.size()), segs.front().count, s.stream);
  s.run(state, bytes, [&] {
    BENCH_CUDA(cudaMemsetAsync(s.counter, 0, sizeof(unsigned long long), s.stream));
    collbench::backend::nccl::launch_count_wrong(s.a, p, dev, static_cast<int>(segs.size()), segs.front().count,
                                                 s.counter, s.stream);
  });
  unsigned long long wrong = 1;
  BENCH_CUDA(cudaMemcpy(&wrong, s.counter, sizeof wrong, cudaMemcpyDeviceToHost));
  if (wrong != 0) state.SkipWithError("the check kernel counted wrong elements on its own expected values");
}

// a[i] = a[i] + b[i]: the local arithmetic of a reduction collective's step.
template <class T>
__global__ void reduce_add_kernel(T* a, const T* b, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    a[i] = static_cast<T>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
  }
}

template <class T>
void BM_ReduceAdd(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Scratch s(bytes);
  const std::size_t n = bytes / sizeof(T);
  int sms = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned blocks = static_cast<unsigned>(sms) * 8;
  s.run(state, 3 * bytes, [&] {
    reduce_add_kernel<T><<<blocks, 256, 0, s.stream>>>(static_cast<T*>(s.a), static_cast<const T*>(s.b), n);
    BENCH_CUDA(cudaGetLastError());
  });
}

void sizes(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{64} << 20, std::int64_t{1} << 30}) b->Arg(bytes);
}

BENCHMARK(BM_DeviceCopy)->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::float32, false>)->Name("BM_FillReduceInput/float32")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::bfloat16, false>)->Name("BM_FillReduceInput/bfloat16")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::float8e4m3, false>)->Name("BM_FillReduceInput/float8e4m3")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::float32, true>)->Name("BM_FillMove/float32")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::float8e4m3, true>)->Name("BM_FillMove/float8e4m3")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::float32, false>)->Name("BM_CheckReduceExpected/float32")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::bfloat16, false>)->Name("BM_CheckReduceExpected/bfloat16")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::float32, true>)->Name("BM_CheckMove/float32")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::float8e4m3, true>)->Name("BM_CheckMove/float8e4m3")->Apply(sizes);
BENCHMARK(BM_ReduceAdd<float>)->Name("BM_ReduceAdd/float32")->Apply(sizes);
BENCHMARK(BM_ReduceAdd<__nv_bfloat16>)->Name("BM_ReduceAdd/bfloat16")->Apply(sizes);
BENCHMARK(BM_ReduceAdd<__half>)->Name("BM_ReduceAdd/float16")->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();

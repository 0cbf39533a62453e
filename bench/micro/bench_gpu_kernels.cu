// GPU micro-benchmarks (Google Benchmark, manual CUDA-event time; needs one NVIDIA GPU, sm_90+):
// the NCCL backend's fill and check kernels and a local element-wise reduction, each beside a
// device-to-device copy of the same size, the memory-bandwidth reference. A fill or check that
// runs far below copy bandwidth would make device-side verification a bottleneck of large
// sweeps; the reduction shows the local arithmetic cost a reduction collective pays per byte.
// bytes_per_second counts memory traffic (bytes read + bytes written), and each fill and check
// benchmark reports copy_ratio: its traffic per second over a device-to-device copy's of the same
// buffer size (a fill writes B bytes, a check reads B, a copy reads and writes B: ratio =
// t_copy / (2 t_kernel)). Run by scripts/gpu-smoke.
//
// `bench_gpu_kernels --ratios[=BYTES]` (default 1 GiB) prints instead one line per kernel, dtype
// and reduction (72 ranks: the NVL72 case) with its time, traffic and copy_ratio, and a last line
// with the smallest ratio; exit 0 (the target, >= 0.5 for every row, is judged by the reader,
// docs/gpu-validation.md "Device verification and check kernels").
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collbench/backend/nccl/device_kernels.hpp"
#include "collbench/backend/nccl/pattern_hd.hpp"
#include "collbench/core/pattern_rules.hpp"

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
    for (auto _ : state) state.SetIterationTime(time_s(launch));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(traffic_bytes));
  }

  // One CUDA-event time of `launch`, in seconds.
  template <class F>
  double time_s(F&& launch) {
    BENCH_CUDA(cudaEventRecord(start, stream));
    launch();
    BENCH_CUDA(cudaEventRecord(stop, stream));
    BENCH_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    BENCH_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms) / 1e3;
  }
  // The median of `reps` times of `launch`, after one warm-up launch.
  template <class F>
  double median_s(int reps, F&& launch) {
    launch();
    BENCH_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) t.push_back(time_s(launch));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  double copy_s(int reps) {
    return median_s(reps, [&] { BENCH_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream)); });
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
  return collbench::pattern::pattern_params(d, r, kRanks);
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

// copy_ratio of a kernel that moves `bytes` of traffic in t_kernel seconds: its traffic per
// second over the copy's (2 x bytes in t_copy).
double copy_ratio(double t_copy, double t_kernel) {
  return t_kernel > 0 ? t_copy / (2.0 * t_kernel) : 0.0;
}

// A fill (input) or check (expected result) of one case on the device: the segments, uploaded.
struct KernelCase {
  hd::PatternParams params;
  std::vector<hd::Segment> segs;
  const hd::Segment* dev = nullptr;
};

KernelCase kernel_case(Scratch& s, Dtype d, Redop r, bool move, hd::SegmentKind reduce_kind) {
  KernelCase k;
  k.params = params_for(d, r);
  const std::uint64_t elems = s.bytes / elem_size(d);
  k.segs = move ? move_segments(elems) : reduce_segments(elems, reduce_kind);
  k.dev = s.upload(k.segs);
  return k;
}

void launch_fill(Scratch& s, const KernelCase& k) {
  collbench::backend::nccl::launch_fill(s.a, k.params, k.dev, static_cast<int>(k.segs.size()), k.segs.front().count,
                                        s.stream);
}

void launch_check(Scratch& s, const KernelCase& k) {
  BENCH_CUDA(cudaMemsetAsync(s.counter, 0, sizeof(unsigned long long), s.stream));
  collbench::backend::nccl::launch_count_wrong(s.a, k.params, k.dev, static_cast<int>(k.segs.size()),
                                               k.segs.front().count, s.counter, s.stream);
}

unsigned long long counted_wrong(Scratch& s) {
  unsigned long long wrong = 1;
  BENCH_CUDA(cudaStreamSynchronize(s.stream));
  BENCH_CUDA(cudaMemcpy(&wrong, s.counter, sizeof wrong, cudaMemcpyDeviceToHost));
  return wrong;
}

template <Dtype D, Redop R, bool kMove>
void BM_Fill(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Scratch s(bytes);
  const double t_copy = s.copy_s(5);
  const KernelCase k = kernel_case(s, D, R, kMove, hd::SegmentKind::reduce_input);
  s.run(state, bytes, [&] { launch_fill(s, k); });
  state.counters["copy_ratio"] = copy_ratio(t_copy, s.median_s(5, [&] { launch_fill(s, k); }));
}

template <Dtype D, Redop R, bool kMove>
void BM_CountWrong(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Scratch s(bytes);
  const double t_copy = s.copy_s(5);
  const KernelCase k = kernel_case(s, D, R, kMove, hd::SegmentKind::reduce_expected);
  launch_fill(s, k);
  s.run(state, bytes, [&] { launch_check(s, k); });
  state.counters["copy_ratio"] = copy_ratio(t_copy, s.median_s(5, [&] { launch_check(s, k); }));
  if (counted_wrong(s) != 0) state.SkipWithError("the check kernel counted wrong elements on its own expected values");
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
BENCHMARK(BM_Fill<Dtype::float32, Redop::sum, false>)->Name("BM_FillReduceInput/float32")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::bfloat16, Redop::sum, false>)->Name("BM_FillReduceInput/bfloat16")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::float8e4m3, Redop::sum, false>)->Name("BM_FillReduceInput/float8e4m3")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::float32, Redop::sum, true>)->Name("BM_FillMove/float32")->Apply(sizes);
BENCHMARK(BM_Fill<Dtype::float8e4m3, Redop::sum, true>)->Name("BM_FillMove/float8e4m3")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::float32, Redop::sum, false>)->Name("BM_CheckReduceExpected/float32")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::bfloat16, Redop::sum, false>)->Name("BM_CheckReduceExpected/bfloat16")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::float8e4m3, Redop::prod, false>)
    ->Name("BM_CheckReduceExpected/float8e4m3/prod")
    ->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::float32, Redop::sum, true>)->Name("BM_CheckMove/float32")->Apply(sizes);
BENCHMARK(BM_CountWrong<Dtype::float8e4m3, Redop::sum, true>)->Name("BM_CheckMove/float8e4m3")->Apply(sizes);
BENCHMARK(BM_ReduceAdd<float>)->Name("BM_ReduceAdd/float32")->Apply(sizes);
BENCHMARK(BM_ReduceAdd<__nv_bfloat16>)->Name("BM_ReduceAdd/bfloat16")->Apply(sizes);
BENCHMARK(BM_ReduceAdd<__half>)->Name("BM_ReduceAdd/float16")->Apply(sizes);

// --ratios[=BYTES]: every kernel x dtype x reduction at one size, one line each (see the top).
int print_ratios(std::size_t bytes) {
  Scratch s(bytes);
  const double t_copy = s.copy_s(9);
  std::printf("# bytes %zu, %d ranks; copy %.1f us (%.1f GB/s traffic); copy_ratio = t_copy / (2 t_kernel)\n", bytes,
              kRanks, t_copy * 1e6, 2.0 * static_cast<double>(bytes) / t_copy / 1e9);
  std::printf("%-22s %-11s %-5s %10s %10s %11s\n", "kernel", "dtype", "redop", "time_us", "GB/s", "copy_ratio");
  double worst = 1e30;
  std::string worst_row;
  auto row = [&](const char* kernel, Dtype d, const char* redop, double t) {
    const double ratio = copy_ratio(t_copy, t);
    std::printf("%-22s %-11s %-5s %10.1f %10.1f %11.3f\n", kernel, std::string(collbench::to_string(d)).c_str(), redop,
                t * 1e6, static_cast<double>(bytes) / t / 1e9, ratio);
    if (ratio < worst) {
      worst = ratio;
      worst_row = std::string(kernel) + " " + std::string(collbench::to_string(d)) + " " + redop;
    }
  };
  for (const auto& info : collbench::all_dtypes()) {
    for (Redop r : {Redop::sum, Redop::prod, Redop::min, Redop::max}) {
      const char* rn = r == Redop::sum ? "sum" : r == Redop::prod ? "prod" : r == Redop::min ? "min" : "max";
      const KernelCase in = kernel_case(s, info.dtype, r, false, hd::SegmentKind::reduce_input);
      row("fill_reduce_input", info.dtype, rn, s.median_s(9, [&] { launch_fill(s, in); }));
      const KernelCase ex = kernel_case(s, info.dtype, r, false, hd::SegmentKind::reduce_expected);
      launch_fill(s, ex);
      row("check_reduce_expected", info.dtype, rn, s.median_s(9, [&] { launch_check(s, ex); }));
      if (counted_wrong(s) != 0) std::printf("ERROR: the check counted wrong elements on its own expected values\n");
    }
    const KernelCase mv = kernel_case(s, info.dtype, Redop::sum, true, hd::SegmentKind::move);
    row("fill_move", info.dtype, "-", s.median_s(9, [&] { launch_fill(s, mv); }));
    row("check_move", info.dtype, "-", s.median_s(9, [&] { launch_check(s, mv); }));
    if (counted_wrong(s) != 0) std::printf("ERROR: the check counted wrong elements on its own expected values\n");
  }
  std::printf("min copy_ratio %.3f (%s); target >= 0.5\n", worst, worst_row.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ratios", 8) != 0) continue;
    const char* eq = std::strchr(argv[i], '=');
    return print_ratios(eq != nullptr ? static_cast<std::size_t>(std::strtoull(eq + 1, nullptr, 10)) : (1ull << 30));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

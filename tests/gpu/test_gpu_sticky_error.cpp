// CUDA's "last error" and the backend's polling (issue 34 item 10): Context::synchronize polls
// cudaEventQuery, which answers cudaErrorNotReady while the stream still runs, and every launch
// of the backend is followed by CB_CHECK_CUDA(cudaGetLastError()). If polling left
// cudaErrorNotReady behind as the last error, the next launch after a poll would throw a false
// failure (exit 3). Here a kernel spins for 500 ms; its event and its stream are polled while it
// runs (cudaErrorNotReady), then the backend launches a fill and the last error must be clean.
// Needs one GPU per rank (label `gpu`).
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "collbench/backend/nccl/gpu_load_kernels.hpp"

namespace {

namespace nccl = collbench::backend::nccl;

constexpr std::uint64_t kSpinNs = 500'000'000;  // far longer than the polls below
constexpr std::size_t kCount = 4096;            // bf16 values filled after the polls

// This rank's GPU: its local rank among the ranks of its host, as the backend selects it.
void use_local_gpu() {
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int local_rank = 0;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_GT(count, 0);
  ASSERT_EQ(cudaSetDevice(local_rank % count), cudaSuccess);
}

struct Resources {
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  void* buffer = nullptr;
  Resources() {
    (void)cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    (void)cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    (void)cudaMalloc(&buffer, kCount * sizeof(std::uint16_t));
  }
  ~Resources() {
    (void)cudaStreamSynchronize(stream);
    (void)cudaFree(buffer);
    (void)cudaEventDestroy(event);
    (void)cudaStreamDestroy(stream);
  }
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;
};

TEST(CudaLastError, NotReadyFromPollingARunningKernelDoesNotFailTheNextLaunch) {
  ASSERT_NO_FATAL_FAILURE(use_local_gpu());
  Resources r;
  ASSERT_TRUE(r.stream != nullptr && r.event != nullptr && r.buffer != nullptr);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);

  nccl::launch_spin(kSpinNs, r.stream);
  ASSERT_EQ(cudaEventRecord(r.event, r.stream), cudaSuccess);
  // Poll as Context::synchronize does: the kernel still runs, so every answer is "not ready".
  int not_ready = 0;
  for (int i = 0; i < 1000; ++i) {
    const cudaError_t q = i % 2 == 0 ? cudaEventQuery(r.event) : cudaStreamQuery(r.stream);
    ASSERT_TRUE(q == cudaErrorNotReady || q == cudaSuccess) << cudaGetErrorName(q);
    not_ready += q == cudaErrorNotReady;
  }
  ASSERT_EQ(not_ready, 1000) << "the 500 ms spin ended during 1000 polls: nothing was polled while it ran";

  // The backend's next launch checks cudaGetLastError (CB_CHECK_CUDA): it must not throw.
  EXPECT_NO_THROW(nccl::launch_fill_u16(r.buffer, kCount, 0x3F80, r.stream));
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  ASSERT_EQ(cudaStreamSynchronize(r.stream), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(r.event), cudaSuccess);
  std::vector<std::uint16_t> host(kCount, 0);
  ASSERT_EQ(cudaMemcpy(host.data(), r.buffer, kCount * sizeof(std::uint16_t), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host, std::vector<std::uint16_t>(kCount, 0x3F80));  // the fill after the polls ran
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace

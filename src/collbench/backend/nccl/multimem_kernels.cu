// collbench's in-switch collectives on the NCCL 2.28 device API (GPU: sm_90, sm_100, sm_103 with
// NVLink SHARP; compiled for those, never run in CI). Each kernel:
//   1. opens an LSA barrier in multimem mode (block b of every rank meets in barrier b) with
//      acquire order: every rank's input is written and its output free before any switch access;
//   2. moves 16-byte vectors through the switch: multimem.ld_reduce (the switch reads the address
//      on every GPU of the team and returns the sum) and/or multimem.st (the switch writes the
//      value to every GPU), each thread keeping kUnroll loads in flight before its stores;
//   3. handles the unaligned head and tail element by element over LSA (NVLink load/store)
//      pointers, accumulating in float32 like the vector path (multimem has no 16-bit scalar
//      form);
//   4. closes the barrier with release order, so every rank's stores into this rank's output are
//      complete when the kernel ends.
// Who does what (slices, alignment split, grid) is multimem_plan.hpp, shared with the CPU tests.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>

// NCCL's device headers trip -Wunused-parameter in the host pass (gin__funcs.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <nccl_device.h>
#pragma GCC diagnostic pop

#include "collbench/backend/nccl/multimem_kernels.hpp"
#include "collbench/backend/nccl/multimem_plan.hpp"
#include "collbench/backend/nccl/nccl_api.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {
namespace {

// ---- PTX --------------------------------------------------------------------------------------
// multimem.* exist from sm_90 on; the guard keeps other targets (and the host pass) compiling.

__device__ __forceinline__ void multimem_st_v4(void* mc, uint4 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // .v4.f32 moves the 16 bytes unchanged whatever they encode (a store does no arithmetic).
  asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(mc), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
#else
  (void)mc;
  (void)v;
  __trap();
#endif
}

// Element types of the reductions: the switch reduction of 16 bytes, and the per-element
// conversions of the scalar path.
struct F32 {
  using T = float;
  __device__ static uint4 ld_reduce_v4(const void* mc) {
    uint4 v = make_uint4(0, 0, 0, 0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(mc)
                 : "memory");
#else
    (void)mc;
    __trap();
#endif
    return v;
  }
  __device__ static float to_f32(T x) {
    return x;
  }
  __device__ static T from_f32(float x) {
    return x;
  }
};

struct BF16 {
  using T = __nv_bfloat16;
  __device__ static uint4 ld_reduce_v4(const void* mc) {
    uint4 v = make_uint4(0, 0, 0, 0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // .acc::f32: the switch accumulates in float32 and rounds once (without it, in bfloat16).
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.bf16x2 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(mc)
                 : "memory");
#else
    (void)mc;
    __trap();
#endif
    return v;
  }
  __device__ static float to_f32(T x) {
    return __bfloat162float(x);
  }
  __device__ static T from_f32(float x) {
    return __float2bfloat16_rn(x);
  }
};

struct F16 {
  using T = __half;
  __device__ static uint4 ld_reduce_v4(const void* mc) {
    uint4 v = make_uint4(0, 0, 0, 0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.f16x2 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(mc)
                 : "memory");
#else
    (void)mc;
    __trap();
#endif
    return v;
  }
  __device__ static float to_f32(T x) {
    return __half2float(x);
  }
  __device__ static T from_f32(float x) {
    return __float2half_rn(x);
  }
};

// ---- helpers ------------------------------------------------------------------------------------

__device__ __forceinline__ char* byte_ptr(void* p, uint64_t offset) {
  return static_cast<char*>(p) + offset;
}

template <class T>
__device__ __forceinline__ T* lsa_elem(ncclWindow_t w, uint64_t base_offset, uint64_t elem, int peer) {
  return static_cast<T*>(ncclGetLsaPointer(w, base_offset + elem * sizeof(T), peer));
}

// Sum over the team of element `e` of window `w` (at `offset`), in float32, in rank order.
template <class E>
__device__ __forceinline__ float lsa_sum(ncclWindow_t w, uint64_t offset, uint64_t e, int team) {
  float acc = 0.0f;
  for (int p = 0; p < team; ++p) acc += E::to_f32(*lsa_elem<typename E::T>(w, offset, e, p));
  return acc;
}

// ---- kernels ------------------------------------------------------------------------------------

template <class E>
__global__ void __launch_bounds__(mm::kThreads)
    allreduce_kernel(ncclDevComm comm, ncclWindow_t in, uint64_t in_off, ncclWindow_t out, uint64_t out_off,
                     mm::Layout layout) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), comm, ncclTeamTagLsa{}, blockIdx.x, /*multimem=*/true};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);

  const int m = comm.lsaSize;
  const mm::Work work = mm::allreduce_work(layout, static_cast<uint32_t>(m), static_cast<uint32_t>(comm.lsaRank));
  void* in_mc = ncclGetLsaMultimemPointer(in, in_off, comm);
  void* out_mc = ncclGetLsaMultimemPointer(out, out_off, comm);
  const uint64_t elem = layout.elem_bytes;

  const mm::Cursor c = mm::cursor(work.vecs, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
  for (uint64_t base = c.first; base < c.end; base += mm::kUnroll * c.stride) {
    uint4 v[mm::kUnroll];
#pragma unroll
    for (uint32_t k = 0; k < mm::kUnroll; ++k) {
      const uint64_t i = base + k * c.stride;
      v[k] =
          i < c.end ? E::ld_reduce_v4(byte_ptr(in_mc, mm::vector_element(layout, i) * elem)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (uint32_t k = 0; k < mm::kUnroll; ++k) {
      const uint64_t i = base + k * c.stride;
      if (i < c.end) multimem_st_v4(byte_ptr(out_mc, mm::vector_element(layout, i) * elem), v[k]);
    }
  }

  const mm::Cursor s = mm::cursor(work.scalars, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
  for (uint64_t i = s.first; i < s.end; i += s.stride) {
    const uint64_t e = mm::scalar_element(layout, i);
    const typename E::T sum = E::from_f32(lsa_sum<E>(in, in_off, e, m));
    for (int p = 0; p < m; ++p) *lsa_elem<typename E::T>(out, out_off, e, p) = sum;
  }

  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

template <class E>
__global__ void __launch_bounds__(mm::kThreads)
    reduce_scatter_kernel(ncclDevComm comm, ncclWindow_t in, uint64_t chunk_off, void* out, mm::Layout layout) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), comm, ncclTeamTagLsa{}, blockIdx.x, /*multimem=*/true};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);

  const mm::Work work = mm::whole_work(layout);
  void* in_mc = ncclGetLsaMultimemPointer(in, chunk_off, comm);
  const uint64_t elem = layout.elem_bytes;

  const mm::Cursor c = mm::cursor(work.vecs, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
  for (uint64_t base = c.first; base < c.end; base += mm::kUnroll * c.stride) {
    uint4 v[mm::kUnroll];
#pragma unroll
    for (uint32_t k = 0; k < mm::kUnroll; ++k) {
      const uint64_t i = base + k * c.stride;
      v[k] =
          i < c.end ? E::ld_reduce_v4(byte_ptr(in_mc, mm::vector_element(layout, i) * elem)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (uint32_t k = 0; k < mm::kUnroll; ++k) {
      const uint64_t i = base + k * c.stride;
      if (i < c.end) *reinterpret_cast<uint4*>(byte_ptr(out, mm::vector_element(layout, i) * elem)) = v[k];
    }
  }

  const mm::Cursor s = mm::cursor(work.scalars, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
  for (uint64_t i = s.first; i < s.end; i += s.stride) {
    const uint64_t e = mm::scalar_element(layout, i);
    static_cast<typename E::T*>(out)[e] = E::from_f32(lsa_sum<E>(in, chunk_off, e, comm.lsaSize));
  }

  // Other ranks read this rank's input until they pass this barrier.
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

template <class R>  // raw element type of the element size: a copy
__global__ void __launch_bounds__(mm::kThreads)
    allgather_kernel(ncclDevComm comm, const void* in, ncclWindow_t out, uint64_t chunk_off, mm::Layout layout) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), comm, ncclTeamTagLsa{}, blockIdx.x, /*multimem=*/true};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);

  const mm::Work work = mm::whole_work(layout);
  void* out_mc = ncclGetLsaMultimemPointer(out, chunk_off, comm);
  const uint64_t elem = layout.elem_bytes;
  const char* src = static_cast<const char*>(in);

  const mm::Cursor c = mm::cursor(work.vecs, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
  for (uint64_t base = c.first; base < c.end; base += mm::kUnroll * c.stride) {
    uint4 v[mm::kUnroll];
#pragma unroll
    for (uint32_t k = 0; k < mm::kUnroll; ++k) {
      const uint64_t i = base + k * c.stride;
      v[k] = i < c.end ? *reinterpret_cast<const uint4*>(src + mm::vector_element(layout, i) * elem)
                       : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (uint32_t k = 0; k < mm::kUnroll; ++k) {
      const uint64_t i = base + k * c.stride;
      if (i < c.end) multimem_st_v4(byte_ptr(out_mc, mm::vector_element(layout, i) * elem), v[k]);
    }
  }

  const mm::Cursor s = mm::cursor(work.scalars, blockIdx.x, threadIdx.x, gridDim.x, blockDim.x);
  for (uint64_t i = s.first; i < s.end; i += s.stride) {
    const uint64_t e = mm::scalar_element(layout, i);
    const R value = static_cast<const R*>(in)[e];
    for (int p = 0; p < comm.lsaSize; ++p) *lsa_elem<R>(out, chunk_off, e, p) = value;
  }

  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

[[noreturn]] void unsupported(const char* what, Dtype dtype) {
  throw InputError(std::string("cb-multimem ") + what + " does not support dtype " + std::string(to_string(dtype)));
}

// The device API's host functions, from the libnccl that nccl_api.hpp loaded (their types come
// from nccl_device.h, which only this file includes). The device communicator is created only
// when ncclGetVersion() says the device API exists (nvls_host.hpp, kNcclDeviceApiVersion).
struct DeviceApi {
  using CreateFn = ncclResult_t (*)(ncclComm_t, ncclDevCommRequirements_t const*, ncclDevComm_t*);
  using DestroyFn = ncclResult_t (*)(ncclComm_t, ncclDevComm_t const*);
  using TeamFn = ncclTeam_t (*)(ncclComm_t);
  CreateFn create = reinterpret_cast<CreateFn>(nccl_symbol("ncclDevCommCreate"));
  DestroyFn destroy = reinterpret_cast<DestroyFn>(nccl_symbol("ncclDevCommDestroy"));
  TeamFn team_lsa = reinterpret_cast<TeamFn>(nccl_symbol("ncclTeamLsa"));
};

const DeviceApi& device_api() {
  static const DeviceApi d;
  return d;
}

}  // namespace

struct MultimemDevComm::Impl {
  ncclComm_t comm = nullptr;
  ncclDevComm dev{};
  uint32_t max_blocks = mm::kMaxBlocks;
};

MultimemDevComm::MultimemDevComm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ncclResult_t MultimemDevComm::create(ncclComm_t comm, std::unique_ptr<MultimemDevComm>& out, uint32_t max_blocks) {
  if (device_api().create == nullptr || device_api().destroy == nullptr) return ncclInvalidUsage;
  auto impl = std::make_unique<Impl>();
  impl->comm = comm;
  impl->max_blocks = max_blocks < 1 ? 1u : max_blocks;
  ncclDevCommRequirements reqs{};  // NCCL 2.28.9 has no initializer macro: all fields zero
  reqs.lsaMultimem = true;
  reqs.lsaBarrierCount = static_cast<int>(impl->max_blocks);  // one barrier per block of the largest grid
  ncclResult_t rc = device_api().create(comm, &reqs, &impl->dev);
  if (rc == ncclInProgress) rc = wait_in_progress(comm);  // a non-blocking communicator
  if (rc == ncclSuccess) out.reset(new MultimemDevComm(std::move(impl)));
  return rc;
}

MultimemDevComm::~MultimemDevComm() {
  if (impl_->comm == nullptr) return;
  if (const ncclResult_t rc = device_api().destroy(impl_->comm, &impl_->dev); rc != ncclSuccess) {
    std::fprintf(stderr, "collbench: warning: ncclDevCommDestroy failed: %s\n", api().ncclGetErrorString(rc));
  }
}

void MultimemDevComm::forget() noexcept {
  impl_->comm = nullptr;
}

int MultimemDevComm::lsa_rank() const {
  return impl_->dev.lsaRank;
}

int MultimemDevComm::lsa_size() const {
  return impl_->dev.lsaSize;
}

uint32_t MultimemDevComm::max_blocks() const {
  return impl_->max_blocks;
}

void MultimemDevComm::allreduce(ncclWindow_t in, std::uint64_t in_offset, ncclWindow_t out, std::uint64_t out_offset,
                                std::uint64_t count, Dtype dtype, cudaStream_t stream) const {
  if (count == 0) return;
  const auto elem = static_cast<uint32_t>(dtype_size(dtype));
  const mm::Layout layout = mm::split(count, elem, in_offset, out_offset);
  const dim3 grid(mm::allreduce_grid(count, elem, static_cast<uint32_t>(lsa_size()), max_blocks()));
  switch (dtype) {
    case Dtype::float32:
      allreduce_kernel<F32><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, in_offset, out, out_offset, layout);
      break;
    case Dtype::bfloat16:
      allreduce_kernel<BF16><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, in_offset, out, out_offset, layout);
      break;
    case Dtype::float16:
      allreduce_kernel<F16><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, in_offset, out, out_offset, layout);
      break;
    default:
      unsupported("all-reduce", dtype);
  }
  CB_CHECK_CUDA(cudaGetLastError());
}

void MultimemDevComm::reduce_scatter(ncclWindow_t in, std::uint64_t in_offset, void* out, std::uint64_t recvcount,
                                     Dtype dtype, cudaStream_t stream) const {
  if (recvcount == 0) return;
  const auto elem = static_cast<uint32_t>(dtype_size(dtype));
  const uint64_t chunk = mm::chunk_offset(in_offset, recvcount, elem, static_cast<uint32_t>(lsa_rank()));
  const mm::Layout layout = mm::split(recvcount, elem, chunk, reinterpret_cast<uintptr_t>(out));
  const dim3 grid(mm::chunk_grid(recvcount, elem, max_blocks()));
  switch (dtype) {
    case Dtype::float32:
      reduce_scatter_kernel<F32><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, chunk, out, layout);
      break;
    case Dtype::bfloat16:
      reduce_scatter_kernel<BF16><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, chunk, out, layout);
      break;
    case Dtype::float16:
      reduce_scatter_kernel<F16><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, chunk, out, layout);
      break;
    default:
      unsupported("reduce-scatter", dtype);
  }
  CB_CHECK_CUDA(cudaGetLastError());
}

void MultimemDevComm::allgather(const void* in, ncclWindow_t out, std::uint64_t out_offset, std::uint64_t sendcount,
                                Dtype dtype, cudaStream_t stream) const {
  if (sendcount == 0) return;
  const auto elem = static_cast<uint32_t>(dtype_size(dtype));
  const uint64_t chunk = mm::chunk_offset(out_offset, sendcount, elem, static_cast<uint32_t>(lsa_rank()));
  const mm::Layout layout = mm::split(sendcount, elem, reinterpret_cast<uintptr_t>(in), chunk);
  const dim3 grid(mm::chunk_grid(sendcount, elem, max_blocks()));
  switch (elem) {
    case 1:
      allgather_kernel<uint8_t><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, out, chunk, layout);
      break;
    case 2:
      allgather_kernel<uint16_t><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, out, chunk, layout);
      break;
    case 4:
      allgather_kernel<uint32_t><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, out, chunk, layout);
      break;
    case 8:
      allgather_kernel<uint64_t><<<grid, mm::kThreads, 0, stream>>>(impl_->dev, in, out, chunk, layout);
      break;
    default:
      unsupported("all-gather", dtype);
  }
  CB_CHECK_CUDA(cudaGetLastError());
}

const char* multimem_not_built() {
  return "";
}

int lsa_team_size(ncclComm_t comm) {
  if (device_api().team_lsa == nullptr) return -1;
  return device_api().team_lsa(comm).nRanks;
}

}  // namespace collbench::backend::nccl

// The NCCL backend (GPU; built when COLLBENCH_WITH_CUDA): one rank per GPU, the device chosen by
// local rank, NCCL communicators created from an MPI-broadcast unique id and split with
// ncclCommSplit, collectives on one CUDA stream per process, CUDA-event timing. Design,
// buffers, timing, algorithm control and provenance: docs/nccl-backend.md.
//
// No CUDA, NCCL or MPI header here: the registry and the runner include this file in every
// build that has the backend, and the binary starts on machines without a GPU driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "collbench/backend/backend.hpp"
#include "collbench/backend/device_patterns.hpp"
#include "collbench/backend/nccl/pattern_hd.hpp"
#include "collbench/backend/options.hpp"

namespace collbench::backend {

// Throws InputError (exit 2) naming the missing device and the CUDA error text when the
// machine has no usable GPU, and for options NCCL cannot serve (--buffers host, ...).
// Collective over MPI_COMM_WORLD (MPI must be initialised): every rank gets the same outcome.
std::unique_ptr<Backend> make_nccl_backend(const BackendOptions& options);

namespace nccl {

// Device-side input generation and verification (backend/device_patterns.hpp): the NCCL
// backend's fill and check kernels. All work is ordered on the backend's stream.
using DevicePatterns = backend::DevicePatterns;

// backend.device_patterns(): the NCCL backend's, nullptr for every other backend.
DevicePatterns* device_patterns(Backend& backend);

// Why the backend's in-switch algorithm (--algo nvls, nvlstree or cb-multimem) cannot run
// `collective` in `dtype` with `redop` on `comm`, or nullopt (also for every other algorithm, and
// when `backend` is not the NCCL backend). The decision is nvls_host.hpp's in_switch_waiver()
// over this communicator's probe: multicast support, GPU generation, NCCL version, ranks per
// NCCL node, and for cb-multimem NCCL's LSA team and the device communicator, which the first
// call on a communicator creates. --algo pat is judged the same way by pat_waiver() (NCCL runs
// PAT only with one GPU per node unless NCCL_PAT_ENABLE says otherwise). Collective over every
// rank of the world (MPI must be initialised): all ranks get the same verdict, so a case is
// waived everywhere or nowhere.
std::optional<std::string> capability_waiver(Backend& backend, Comm& comm, std::string_view collective, Dtype dtype,
                                             Redop redop);

// Asks every NCCL communicator of this process to abort: the next Comm::synchronize (or the one
// in progress) calls ncclCommAbort on all of them and throws RuntimeFailure (exit 3). Only sets
// a flag, so a watchdog thread or signal handler may call it.
void request_abort() noexcept;

}  // namespace nccl
}  // namespace collbench::backend

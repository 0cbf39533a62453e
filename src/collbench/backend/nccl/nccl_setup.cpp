// Setting up the NCCL backend: agreement on failures, the device by local rank, the world
// communicator and the per-rank provenance (nccl_setup.hpp).
#include "collbench/backend/nccl/nccl_setup.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/nccl/gpu_info.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_compat.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/launcher.hpp"

namespace collbench::backend::nccl {
namespace {

// cudaErrorInsufficientDriver: the driver found (its CUDA version and, from the kernel module,
// its release) against the runtime this binary carries (nccl_compat.hpp).
std::string insufficient_driver_problem() {
  int runtime = 0;
  int driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  std::ostringstream text;
  text << std::ifstream("/proc/driver/nvidia/version").rdbuf();
  return insufficient_driver_text(driver, runtime != 0 ? runtime : CUDART_VERSION, parse_nvrm_version(text.str()));
}

std::string host_name() {
  std::array<char, 256> name{};
  gethostname(name.data(), name.size() - 1);
  return name.data();
}

// "k=v\n" lines <-> map (per-rank facts travel over MPI as text).
std::string serialize(const std::map<std::string, std::string>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += k + "=" + v + "\n";
  return out;
}

std::map<std::string, std::string> deserialize(std::string_view text) {
  std::map<std::string, std::string> m;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    if (const auto eq = line.find('='); eq != std::string_view::npos) {
      m.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
    }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return m;
}

std::vector<std::string> allgather_strings(const std::string& mine, MPI_Comm comm, int size) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  CB_CHECK_MPI(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  std::vector<int> displs(static_cast<std::size_t>(size));
  int total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    displs[i] = total;
    total += lens[i];
  }
  std::vector<char> all(static_cast<std::size_t>(std::max(total, 1)));
  CB_CHECK_MPI(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    out.emplace_back(all.data() + displs[i], static_cast<std::size_t>(lens[i]));
  }
  return out;
}

// What each rank of this host (`local`) sees of its GPUs: CUDA_VISIBLE_DEVICES, how many, and the
// UUID of its device 0 (core/launcher.hpp RankGpuView). `count`: this rank's cudaGetDeviceCount,
// -1 when it failed. Collective over `local`.
std::vector<RankGpuView> gpu_views_on_host(MPI_Comm local, int count) {
  struct Wire {
    std::array<char, 256> visible{};
    std::array<char, 64> id{};
    int count = -1;
  };
  Wire mine;
  mine.count = count;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"))
    std::snprintf(mine.visible.data(), mine.visible.size(), "%s", v);
  cudaDeviceProp prop{};
  if (count == 1 && cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    unsigned char uuid[16];
    std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
    std::snprintf(mine.id.data(), mine.id.size(), "%s", format_gpu_uuid(uuid).c_str());
  }
  (void)cudaGetLastError();
  int ranks = 1;
  MPI_Comm_size(local, &ranks);
  std::vector<Wire> all(static_cast<std::size_t>(ranks));
  CB_CHECK_MPI(MPI_Allgather(&mine, static_cast<int>(sizeof(Wire)), MPI_BYTE, all.data(),
                             static_cast<int>(sizeof(Wire)), MPI_BYTE, local));
  std::vector<RankGpuView> views;
  for (const Wire& w : all) {
    views.push_back({std::string(w.visible.data(), strnlen(w.visible.data(), w.visible.size())), w.count,
                     std::string(w.id.data(), strnlen(w.id.data(), w.id.size()))});
  }
  return views;
}

}  // namespace

void throw_first_problem(const Context& ctx, const std::string& problem) {
  const int mine = problem.empty() ? ctx.world_size : ctx.world_rank;
  int first = 0;
  CB_CHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx.mpi.get()));
  if (first == ctx.world_size) return;
  std::array<char, 1024> text{};
  if (ctx.world_rank == first) std::snprintf(text.data(), text.size(), "%s", problem.c_str());
  CB_CHECK_MPI(MPI_Bcast(text.data(), static_cast<int>(text.size()), MPI_CHAR, first, ctx.mpi.get()));
  throw InputError(text.data());
}

// One rank per GPU, by local rank. Every rank learns whether all ranks found their GPU, so a
// machine without one fails the same way everywhere (InputError, exit 2), with the message of
// the first rank that failed (rank 0 prints it).
void select_device(Context& ctx) {
  MPI_Comm local = MPI_COMM_NULL;
  CB_CHECK_MPI(MPI_Comm_split_type(ctx.mpi.get(), MPI_COMM_TYPE_SHARED, ctx.world_rank, MPI_INFO_NULL, &local));
  MpiCommHandle local_owner(local);
  MPI_Comm_rank(local, &ctx.local_rank);
  MPI_Comm_size(local, &ctx.ranks_on_host);

  std::string problem;
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaErrorInsufficientDriver) {
    problem = insufficient_driver_problem();
    (void)cudaGetLastError();
    count = -1;
  } else if (rc != cudaSuccess) {
    problem = fmt::format("cudaGetDeviceCount failed: {}", cuda_error_text(rc));
    (void)cudaGetLastError();
    count = -1;
  }
  // Did the launcher give each process its own GPU (each rank sees one, different GPUs)?
  const bool launcher_bound = launcher_bound_one_gpu_per_rank(gpu_views_on_host(local, count));
  const auto dev = problem.empty()
                       ? device_for_local_rank(ctx.local_rank, ctx.ranks_on_host, count, problem, launcher_bound)
                       : std::nullopt;
  if (dev) {
    ctx.device = *dev;
    cudaDeviceProp prop{};
    cudaError_t rc2 = cudaSetDevice(*dev);
    if (rc2 == cudaSuccess) rc2 = cudaFree(nullptr);  // creates the context now: a busy or broken GPU fails here
    if (rc2 == cudaSuccess) rc2 = cudaGetDeviceProperties(&prop, *dev);
    if (rc2 != cudaSuccess) {
      problem = fmt::format("GPU {} cannot be used: {}", *dev, cuda_error_text(rc2));
      (void)cudaGetLastError();
    } else {
      ctx.cc_major = prop.major;
    }
  }

  if (!problem.empty()) {
    problem = fmt::format(
        "backend 'nccl': no usable GPU on rank {} (host {}, local rank {}): {}; the nccl backend needs one visible "
        "NVIDIA GPU per rank (use --backend mpi on machines without GPUs)",
        ctx.world_rank, host_name(), ctx.local_rank, problem);
  }
  throw_first_problem(ctx, problem);
}

std::shared_ptr<CommOwner> create_world(const std::shared_ptr<Context>& ctx_ptr) {
  Context& ctx = *ctx_ptr;
  struct IdMessage {
    int rc;
    ncclUniqueId id;
  };
  IdMessage msg{};
  if (ctx.world_rank == 0) msg.rc = static_cast<int>(api().ncclGetUniqueId(&msg.id));
  CB_CHECK_MPI(MPI_Bcast(&msg, static_cast<int>(sizeof msg), MPI_BYTE, 0, ctx.mpi.get()));
  if (msg.rc != ncclSuccess) {
    throw_nccl_error(static_cast<ncclResult_t>(msg.rc), nullptr, "ncclGetUniqueId (on rank 0)", __FILE__, __LINE__);
  }
  if (ctx.world_rank == 0 && !ctx.algo.nccl_algo.empty()) {
    if (const char* user = std::getenv("NCCL_ALGO"); user != nullptr && ctx.algo.nccl_algo != user) {
      std::fprintf(stderr,
                   "collbench: note: --algo %s creates its communicators with NCCL_ALGO=%s (the environment's "
                   "NCCL_ALGO=%s applies to --algo auto)\n",
                   ctx.algo.algo.c_str(), ctx.algo.nccl_algo.c_str(), user);
    }
  }
  ncclComm_t comm = nullptr;
  const std::string label = "collbench-world";
  ncclConfig_t config = make_config(label.c_str(), ctx.nccl_runtime_version, ctx.share_splits);
  {
    ScopedEnv env(comm_creation_env(ctx.algo));
    CB_CHECK_NCCL_COMM(comm, api().ncclCommInitRankConfig(&comm, ctx.world_size, msg.id, ctx.world_rank, &config));
  }
  std::vector<int> members(static_cast<std::size_t>(ctx.world_size));
  for (int r = 0; r < ctx.world_size; ++r) members[static_cast<std::size_t>(r)] = r;
  return adopt(ctx_ptr, comm, label, std::move(members));
}

std::map<std::string, std::string> gather_provenance(Context& ctx) {
  std::map<std::string, std::string> prov;
  int runtime = 0;
  int driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  (void)cudaGetLastError();
  prov["nccl_version"] = format_nccl_version(ctx.nccl_runtime_version);
  prov["nccl_version_built"] = format_nccl_version(NCCL_VERSION_CODE);
  prov["cuda_runtime"] = format_cuda_version(runtime);
  prov["cuda_driver"] = format_cuda_version(driver);
  prov["buffers"] = std::string(to_string(ctx.buffers));
  prov["algo"] = ctx.algo.algo;
  const char* env_algo = std::getenv("NCCL_ALGO");
  const char* env_proto = std::getenv("NCCL_PROTO");
  prov["nccl_algo"] = !ctx.algo.nccl_algo.empty() ? ctx.algo.nccl_algo : (env_algo != nullptr ? env_algo : "");
  prov["nccl_proto"] = !ctx.algo.nccl_proto.empty() ? ctx.algo.nccl_proto : (env_proto != nullptr ? env_proto : "");
  prov["nccl_alltoall"] =
      ctx.nccl_runtime_version >= kNcclAlltoAllVersion ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv";
  prov["progress"] = ctx.progress == Progress::spin ? "spin" : "yield";

  // Per-rank GPU facts, on every rank: "rank.<r>.<key>".
  auto info = query_gpu_info(ctx.device);
  info["local_rank"] = std::to_string(ctx.local_rank);
  info["host"] = host_name();
  const auto all = allgather_strings(serialize(info), ctx.mpi.get(), ctx.world_size);
  for (std::size_t r = 0; r < all.size(); ++r) {
    for (const auto& [k, v] : deserialize(all[r])) prov[fmt::format("rank.{}.{}", r, k)] = v;
  }

  // In-switch capability facts per world rank (nvls_host.hpp): multicast, GPU generation, and
  // NCCL's node (host, or NVLink clique under MNNVL).
  std::vector<RankPlacementFacts> placement(all.size());
  ctx.world_in_switch.assign(all.size(), InSwitchRank{});
  const auto get = [&prov](std::size_t r, const char* key) {
    const auto it = prov.find(fmt::format("rank.{}.{}", r, key));
    return it == prov.end() ? std::string() : it->second;
  };
  for (std::size_t r = 0; r < all.size(); ++r) {
    auto& f = ctx.world_in_switch[r];
    const std::string mc = get(r, "multicast_supported");
    f.multicast = mc == "1" ? 1 : mc == "0" ? 0 : -1;
    f.cc_major = std::atoi(get(r, "compute_capability").c_str());
    placement[r] = {get(r, "host"), get(r, "fabric_state"), get(r, "fabric_cluster_uuid"), get(r, "fabric_clique_id"),
                    get(r, "fabric_handle_supported")};
  }
  const auto nodes = nccl_nodes(placement, env_or_empty("NCCL_MNNVL_ENABLE"));
  for (std::size_t r = 0; r < nodes.size(); ++r) ctx.world_in_switch[r].node = nodes[r];
  return prov;
}

}  // namespace collbench::backend::nccl

// The one file that adapts collbench to SimGrid's SMPI (COLLBENCH_SIMGRID, the simulation build);
// see simulation.hpp for what each function does in each build.
#include "collbench/backend/mpi/simulation.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "collbench/core/error.hpp"
#include "collbench/core/sha256.hpp"

#if COLLBENCH_SIMGRID
#include <simgrid/version.h>
#include <smpi/smpi.h>
#endif

namespace collbench::backend::sim {
namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

[[maybe_unused]] std::string file_sha256(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return sha256_hex(bytes.str());
}

[[maybe_unused]] bool shared_buffers_requested() {
  return env_or_empty("COLLBENCH_SIM_SHARED_BUFFERS") == "1";
}

// 64-byte aligned, zeroed, at least one cache line so the pointer is never null.
std::size_t padded(std::size_t bytes) {
  return ((bytes + 63) / 64) * 64 + 64;
}

void* aligned_zeroed(std::size_t bytes) {
  void* data = std::aligned_alloc(64, padded(bytes));
  if (data == nullptr) throw RuntimeFailure(fmt::format("cannot allocate {} bytes of host memory", bytes));
  std::memset(data, 0, padded(bytes));
  return data;
}

}  // namespace

SharedClass shared_class(std::size_t bytes) {
  const std::size_t b = padded(bytes);
  const std::size_t power = std::bit_ceil(b);
  const std::size_t step = std::max<std::size_t>(64, power / 16);
  const std::size_t steps = (b + step - 1) / step;
  return {steps * step, static_cast<int>(32 * std::bit_width(power - 1) + steps)};
}

#if COLLBENCH_SIMGRID

bool active() {
  return true;
}

std::optional<Info> info() {
  Info i;
  i.engine = "simgrid-smpi";
  int major = 0;
  int minor = 0;
  int patch = 0;
  sg_version_get(&major, &minor, &patch);
  i.version = fmt::format("{}.{}.{}", major, minor, patch);
  i.platform = env_or_empty("COLLBENCH_SIM_PLATFORM");
  i.platform_sha256 = file_sha256(i.platform);
  i.config = env_or_empty("COLLBENCH_SIM_CONFIG");
  i.shared_buffers = shared_buffers_requested();
  i.watchdog = "off: SMPI gives no MPI_THREAD_MULTIPLE, and a host-time timeout means nothing against simulated time";
  return i;
}

double now_seconds() {
  return MPI_Wtime();
}

void sleep_seconds(double seconds) {
  if (seconds > 0) usleep(static_cast<useconds_t>(seconds * 1e6));  // smpi_helpers.h: smpi_usleep, simulated
}

std::string host_name() {
  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int len = 0;
  MPI_Get_processor_name(name.data(), &len);
  return std::string(name.data(), static_cast<std::size_t>(len));
}

void* allocate_host(std::size_t bytes) {
  // SMPI shares allocations by call site: the size class in the site's "line" keeps buffers of
  // different classes apart (one block per class, aliased by every rank).
  if (shared_buffers_requested()) {
    const SharedClass c = shared_class(bytes);
    return smpi_shared_malloc(c.bytes, "collbench-host-buffer", c.key);
  }
  return aligned_zeroed(bytes);
}

void free_host(void* data) {
  if (shared_buffers_requested()) {
    smpi_shared_free(data);
  } else {
    (std::free)(data);  // parenthesised: smpi_helpers.h defines free(x) as a macro
  }
}

#else

bool active() {
  return false;
}

std::optional<Info> info() {
  return std::nullopt;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void sleep_seconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::string host_name() {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  return std::string(host.data());
}

void* allocate_host(std::size_t bytes) {
  return aligned_zeroed(bytes);
}

void free_host(void* data) {
  std::free(data);
}

#endif

}  // namespace collbench::backend::sim

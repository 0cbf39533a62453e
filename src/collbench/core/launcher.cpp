// Launcher detection from environment variables (see launcher.hpp; docs/launching.md lists
// the variables and the launchers' documentation they come from).
#include "collbench/core/launcher.hpp"

#include <charconv>
#include <set>
#include <string_view>
#include <system_error>

namespace collbench {

namespace {

std::optional<int> as_int(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string_view s(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

bool is_set(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v != nullptr && *v != '\0';
}

}  // namespace

LaunchEnv read_launch_env(const EnvLookup& getenv_fn) {
  LaunchEnv out;
  out.slurm_procid = as_int(getenv_fn("SLURM_PROCID"));
  out.slurm_step_num_tasks = as_int(getenv_fn("SLURM_STEP_NUM_TASKS"));
  if (!out.slurm_step_num_tasks) out.slurm_step_num_tasks = as_int(getenv_fn("SLURM_NTASKS"));
  out.slurm_step = is_set(getenv_fn, "SLURM_STEP_ID") || is_set(getenv_fn, "SLURM_STEPID");
  // Set by mpiexec/mpirun of Open MPI (OMPI_COMM_WORLD_*, PRRTE's PMIX_*), MPICH Hydra (PMI_RANK,
  // MPI_LOCALRANKID), and Cray PALS; srun with --mpi=pmix also sets PMIX_RANK, which is why srun
  // is decided first, from SLURM_PROCID.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID", "HYDRA_CONTROL_FD",
                           "PALS_RANKID", "MV2_COMM_WORLD_RANK"}) {
    if (is_set(getenv_fn, name)) out.mpiexec_env = true;
  }
  for (const auto& name : local_rank_vars()) {
    if (const auto v = as_int(getenv_fn(name.c_str()))) {
      out.local_rank = v;
      out.local_rank_var = name;
      break;
    }
  }
  if (const char* n = getenv_fn("SLURMD_NODENAME"); n != nullptr && *n != '\0') out.node_name = n;
  if (const char* j = getenv_fn("SLURM_JOB_ID"); j != nullptr && *j != '\0') out.job_id = j;
  return out;
}

bool srun_started(const LaunchEnv& env, int world_rank, int world_size) {
  return env.slurm_step && env.slurm_procid && *env.slurm_procid == world_rank && env.slurm_step_num_tasks &&
         *env.slurm_step_num_tasks == world_size;
}

std::string launcher_name(bool all_srun, const LaunchEnv& env, int world_size) {
  if (all_srun) return "srun";
  if (world_size > 1 || env.mpiexec_env) return "mpiexec";
  return "singleton";
}

bool launcher_bound_one_gpu_per_rank(const std::vector<RankGpuView>& ranks_on_host) {
  if (ranks_on_host.size() < 2) return false;
  bool ids_known = true;
  for (const auto& r : ranks_on_host) {
    if (r.device_count != 1) return false;
    if (r.first_gpu_id.empty()) ids_known = false;
  }
  if (ids_known) {
    std::set<std::string> distinct;
    for (const auto& r : ranks_on_host) distinct.insert(r.first_gpu_id);
    return distinct.size() == ranks_on_host.size();
  }
  for (const auto& r : ranks_on_host) {
    if (r.visible_devices.empty()) return false;  // one visible GPU without a binding: shared
  }
  return true;
}

}  // namespace collbench

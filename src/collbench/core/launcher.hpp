// What the process launcher (srun, mpiexec of MPICH/Open MPI/HPC-X, a Kubernetes MPIJob's
// mpirun) tells a process through its environment: rank, local rank, node name, job id, and
// which launcher it was. Pure C++ (reads a getenv-like function, no MPI), so it is unit-tested
// with made-up environments; the run layer combines it with MPI's own view (docs/launching.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace collbench {

// Reads one environment variable; nullptr when unset (std::getenv's contract).
using EnvLookup = std::function<const char*(const char*)>;

struct LaunchEnv {
  // srun sets SLURM_PROCID per task; an mpiexec inside an sbatch script inherits the batch
  // step's SLURM_PROCID (the same value on every rank), so SLURM_PROCID alone does not say srun.
  std::optional<int> slurm_procid;
  std::optional<int> slurm_step_num_tasks;  // SLURM_STEP_NUM_TASKS, else SLURM_NTASKS
  bool slurm_step = false;                  // SLURM_STEP_ID / SLURM_STEPID set (a job step)
  bool mpiexec_env = false;                 // a variable only an mpiexec/mpirun sets
  std::optional<int> local_rank;            // what the launcher says (first found, see kLocalRankVars)
  std::string local_rank_var;               // which variable said it
  std::optional<std::string> node_name;     // SLURMD_NODENAME (the Slurm node, not the container)
  std::optional<std::string> job_id;        // SLURM_JOB_ID
};

// Local-rank variables, in the order they are consulted.
inline const std::vector<std::string>& local_rank_vars() {
  static const std::vector<std::string> kVars{
      "SLURM_LOCALID",               // srun (any --mpi plugin)
      "OMPI_COMM_WORLD_LOCAL_RANK",  // Open MPI / HPC-X mpirun
      "MPI_LOCALRANKID",             // MPICH Hydra mpiexec
      "PMI_LOCAL_RANK",              // Cray PMI, some PMI-2 servers
      "PALS_LOCAL_RANKID",           // HPE Cray PALS
      "MV2_COMM_WORLD_LOCAL_RANK",   // MVAPICH2
  };
  return kVars;
}

LaunchEnv read_launch_env(const EnvLookup& getenv_fn);

// True when srun started this process as MPI rank `world_rank` of `world_size`: the task id srun
// gave it is its MPI rank and the step has exactly world_size tasks. Every rank must agree
// before the launcher is called srun (the run layer reduces this over MPI_COMM_WORLD).
bool srun_started(const LaunchEnv& env, int world_rank, int world_size);

// The run header's `launcher` (docs/interfaces.md section 3): "srun" when every rank was started by
// srun (`all_srun`), "mpiexec" when an mpiexec/mpirun (or any PMI launcher) started more than
// one rank or set its variables, "singleton" otherwise.
std::string launcher_name(bool all_srun, const LaunchEnv& env, int world_size);

// What one rank on a host sees of its GPUs (gathered over the ranks of the host).
struct RankGpuView {
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES; "" when unset
  int device_count = -1;        // GPUs this process sees (cudaGetDeviceCount); -1 when unknown
  std::string first_gpu_id;     // UUID (or PCI bus id) of its device 0; "" when unknown
};

// The GPU of a rank. One rank per GPU: normally GPU `local_rank` of the GPUs this process sees;
// when the launcher bound one GPU to each task (srun --gpus-per-task=1 or --gpu-bind, a device
// plugin giving each pod one GPU, CUDA_VISIBLE_DEVICES set per rank) each process sees exactly
// one GPU, as its device 0, and uses it. True for that binding: at least two ranks on the host,
// each seeing exactly one device, and those are different GPUs: by their ids where every rank
// knows its own (the same id twice: two ranks would share one GPU), else by CUDA_VISIBLE_DEVICES
// being set on every rank (pairwise different, or all "0" where Slurm's device cgroup renumbers
// each task's own GPU to 0).
bool launcher_bound_one_gpu_per_rank(const std::vector<RankGpuView>& ranks_on_host);

}  // namespace collbench

// Launcher detection from made-up environments: srun (PMIx and PMI-2), mpiexec of MPICH Hydra
// and Open MPI, mpiexec inside an sbatch script, singleton; one-GPU-per-task binding.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/core/launcher.hpp"

namespace collbench {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  [[nodiscard]] EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

// What srun sets for task `procid` of `ntasks` (srun(1), OUTPUT ENVIRONMENT VARIABLES).
FakeEnv srun_task(int procid, int ntasks, int localid, const std::string& mpi_type) {
  FakeEnv e;
  e.vars = {{"SLURM_JOB_ID", "4242"},
            {"SLURM_STEP_ID", "0"},
            {"SLURM_PROCID", std::to_string(procid)},
            {"SLURM_LOCALID", std::to_string(localid)},
            {"SLURM_STEP_NUM_TASKS", std::to_string(ntasks)},
            {"SLURM_NTASKS", std::to_string(ntasks)},
            {"SLURMD_NODENAME", "nvl72-r01-n03"},
            {"SLURM_MPI_TYPE", mpi_type}};
  if (mpi_type == "pmix") e.vars["PMIX_RANK"] = std::to_string(procid);
  if (mpi_type == "pmi2") e.vars["PMI_RANK"] = std::to_string(procid);
  return e;
}

TEST(Launcher, SrunWithPmixAndPmi2) {
  for (const std::string type : {"pmix", "pmi2"}) {
    const FakeEnv e = srun_task(5, 8, 1, type);
    const LaunchEnv env = read_launch_env(e.lookup());
    EXPECT_TRUE(srun_started(env, 5, 8)) << type;
    EXPECT_EQ(launcher_name(true, env, 8), "srun");
    ASSERT_TRUE(env.local_rank);
    EXPECT_EQ(*env.local_rank, 1);
    EXPECT_EQ(env.local_rank_var, "SLURM_LOCALID");
    EXPECT_EQ(env.node_name.value_or(""), "nvl72-r01-n03");
    EXPECT_EQ(env.job_id.value_or(""), "4242");
    // The task id must be the MPI rank, and the step must have as many tasks as MPI_COMM_WORLD.
    EXPECT_FALSE(srun_started(env, 4, 8));
    EXPECT_FALSE(srun_started(env, 5, 16));
  }
}

TEST(Launcher, MpiexecInsideSbatchIsNotSrun) {
  // The batch script's environment (SLURM_PROCID=0, no step id of the ranks' own) is inherited
  // by every rank that an mpiexec in the script starts; Hydra adds its own variables.
  FakeEnv e;
  e.vars = {{"SLURM_JOB_ID", "4242"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"},
            {"SLURM_STEP_ID", "0"},   {"PMI_RANK", "3"},     {"MPI_LOCALRANKID", "3"}};
  const LaunchEnv env = read_launch_env(e.lookup());
  EXPECT_TRUE(srun_started(env, 0, 8));   // rank 0 alone looks like srun ...
  EXPECT_FALSE(srun_started(env, 3, 8));  // ... rank 3 does not, so the ranks agree on mpiexec
  EXPECT_EQ(launcher_name(false, env, 8), "mpiexec");
  EXPECT_EQ(env.local_rank.value_or(-1), 3);
  EXPECT_EQ(env.local_rank_var, "MPI_LOCALRANKID");
}

TEST(Launcher, OpenMpiMpirunAndSingleton) {
  FakeEnv ompi;
  ompi.vars = {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"PMIX_RANK", "2"}};
  const LaunchEnv env = read_launch_env(ompi.lookup());
  EXPECT_FALSE(srun_started(env, 2, 4));
  EXPECT_TRUE(env.mpiexec_env);
  EXPECT_EQ(launcher_name(false, env, 4), "mpiexec");
  EXPECT_EQ(env.local_rank_var, "OMPI_COMM_WORLD_LOCAL_RANK");
  // `mpiexec -n 1` is still mpiexec; a plain ./collbench is a singleton.
  EXPECT_EQ(launcher_name(false, env, 1), "mpiexec");
  const FakeEnv none;
  const LaunchEnv bare = read_launch_env(none.lookup());
  EXPECT_FALSE(bare.local_rank);
  EXPECT_EQ(launcher_name(false, bare, 1), "singleton");
}

TEST(Launcher, MalformedNumbersAreIgnored) {
  FakeEnv e;
  e.vars = {{"SLURM_PROCID", "x1"},
            {"SLURM_STEP_ID", "0"},
            {"SLURM_NTASKS", "2"},
            {"SLURM_LOCALID", "-1"},
            {"MPI_LOCALRANKID", "1"}};
  const LaunchEnv env = read_launch_env(e.lookup());
  EXPECT_FALSE(env.slurm_procid);
  EXPECT_FALSE(srun_started(env, 0, 2));
  EXPECT_EQ(env.local_rank_var, "MPI_LOCALRANKID");  // the malformed SLURM_LOCALID is skipped
}

// Ranks of one host: (CUDA_VISIBLE_DEVICES, devices seen, UUID of device 0).
std::vector<RankGpuView> views(const std::vector<RankGpuView>& v) {
  return v;
}

TEST(Launcher, OneGpuPerTaskBinding) {
  // CUDA_VISIBLE_DEVICES set per rank, one GPU each, different GPUs.
  EXPECT_TRUE(launcher_bound_one_gpu_per_rank(views({{"0", 1, "GPU-a"}, {"1", 1, "GPU-b"}, {"2", 1, "GPU-c"}})));
  EXPECT_TRUE(launcher_bound_one_gpu_per_rank(views({{"GPU-aa", 1, ""}, {"GPU-bb", 1, ""}})));
  // Slurm's device cgroup (srun --gpus-per-task=1): every task sees its own GPU as device 0, so
  // CUDA_VISIBLE_DEVICES is "0" on every rank; the UUIDs tell the GPUs apart.
  EXPECT_TRUE(launcher_bound_one_gpu_per_rank(views({{"0", 1, "GPU-a"}, {"0", 1, "GPU-b"}, {"0", 1, "GPU-c"}})));
  // ... and where the UUIDs are unknown, one visible device per rank with the variable set.
  EXPECT_TRUE(launcher_bound_one_gpu_per_rank(views({{"0", 1, ""}, {"0", 1, "GPU-b"}})));
  // Two ranks on one GPU: the same UUID, or one visible GPU and no binding at all.
  EXPECT_FALSE(launcher_bound_one_gpu_per_rank(views({{"0", 1, "GPU-a"}, {"0", 1, "GPU-a"}})));
  EXPECT_FALSE(launcher_bound_one_gpu_per_rank(views({{"", 1, ""}, {"", 1, ""}})));
  EXPECT_FALSE(launcher_bound_one_gpu_per_rank(views({{"0", 1, ""}, {"", 1, ""}})));  // unset on one rank
  // Every rank sees all four GPUs: choose by local rank instead.
  EXPECT_FALSE(launcher_bound_one_gpu_per_rank(views({{"0,1,2,3", 4, "GPU-a"}, {"0,1,2,3", 4, "GPU-a"}})));
  EXPECT_FALSE(launcher_bound_one_gpu_per_rank(views({{"0", 1, "GPU-a"}, {"1", -1, ""}})));  // count unknown
  EXPECT_FALSE(launcher_bound_one_gpu_per_rank(views({{"0", 1, "GPU-a"}})));                 // one rank on the host
  std::string why;
  // srun --gpus-per-task=1: local rank 3 sees one GPU and uses it ...
  EXPECT_EQ(backend::nccl::device_for_local_rank(3, 4, 1, why, true), 0);
  // ... without that binding, 4 ranks on one visible GPU is an error that says so.
  EXPECT_FALSE(backend::nccl::device_for_local_rank(3, 4, 1, why, false));
  EXPECT_NE(why.find("only 1 GPU(s) are visible"), std::string::npos) << why;
}

}  // namespace
}  // namespace collbench

"""The run header's `launcher` from the environment srun gives each task, simulated under
mpiexec: every rank's SLURM_PROCID = its rank -> srun; the batch script's SLURM_PROCID=0
inherited by every rank (mpiexec inside sbatch) -> mpiexec (docs/launching.md)."""
import json
import os
import subprocess

from conftest import BIN, FAST, MPIEXEC


def header(tmp_path, per_rank_procid):
    out = tmp_path / "r.jsonl"
    procid = "${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}" if per_rank_procid else "0"
    wrapper = (f'SLURM_PROCID={procid} SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 SLURM_JOB_ID=77 '
               f'SLURM_MPI_TYPE=pmix exec "$@"')
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))
    env.pop("COLLBENCH_FAULT", None)
    res = subprocess.run([MPIEXEC, "-n", "2", "sh", "-c", wrapper, "sh", BIN, "run", "allreduce", "-b", "8", "-e", "8",
                          "--out", str(out), "--format", "none", *FAST], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text().splitlines()[0])


def test_srun_tasks_are_recorded_as_srun(tmp_path):
    h = header(tmp_path, per_rank_procid=True)
    assert h["launcher"] == "srun"
    assert h["env"]["SLURM_JOB_ID"] == "77" and h["env"]["SLURM_MPI_TYPE"] == "pmix"


def test_mpiexec_inside_sbatch_is_not_srun(tmp_path):
    h = header(tmp_path, per_rank_procid=False)
    assert h["launcher"] == "mpiexec"

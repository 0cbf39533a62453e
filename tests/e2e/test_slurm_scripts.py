"""The shell logic of ci/slurm/common.sh, run with bash against stand-ins for scontrol, srun,
nvidia-smi and nvidia-imex-ctl (issue 20 item 14): racks grouped and sorted naturally, nodes that
do not fill a rack refused or dropped by name, names without a dash refused, never `srun -n 0`,
srun's --mpi plugin from the build's MPI library, the IMEX and NVLink fabric check; shellcheck."""
import os
import shutil
import subprocess
import textwrap

import pytest

from conftest import BIN, SOURCE_DIR

COMMON = SOURCE_DIR / "ci" / "slurm" / "common.sh"


def tool(bindir, name, body):
    path = bindir / name
    path.write_text("#!/usr/bin/env bash\n" + textwrap.dedent(body))
    path.chmod(0o755)


@pytest.fixture
def shell(tmp_path):
    """Runs a bash snippet with common.sh sourced and the stand-in tools first on PATH."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool(bindir, "scontrol", 'tr , "\\n" <<< "$3"\n')  # scontrol show hostnames LIST
    tool(bindir, "srun", """\
        if [[ $1 == --mpi=list ]]; then printf 'MPI plugin types are...\\n\\tnone\\n\\t%s\\n' ${FAKE_PLUGINS:-pmi2 pmix}; exit 0; fi
        echo "srun $*" >> "$FAKE_LOG"
        """)

    def run(snippet, nodes="", **env):
        full = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", COLLBENCH=BIN,
                    COLLBENCH_RESULTS=str(tmp_path / "results"), SLURM_JOB_ID="7",
                    SLURM_JOB_NODELIST=nodes, FAKE_LOG=str(tmp_path / "srun.log"))
        full.pop("COLLBENCH_MPI_FLAG", None)
        full.update(env)
        return subprocess.run(["bash", "-c", f'source "{COMMON}"\n{snippet}'], capture_output=True, text=True,
                              env=full, timeout=30)

    run.tmp = tmp_path
    run.bindir = bindir
    return run


def test_racks_sort_naturally_and_ranks_are_rack_major(shell):
    p = shell('cat "$(make_hostfile 2 2)"', nodes="r10-n2,r2-n10,r10-n1,r2-n9")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["r2-n9", "r2-n9", "r2-n10", "r2-n10", "r10-n1", "r10-n1", "r10-n2", "r10-n2"]
    assert p.stderr == ""


def test_a_rack_that_is_not_full_is_refused_by_name(shell):
    p = shell('make_hostfile 4 2', nodes="r1-a,r1-b,r2-a")
    assert p.returncode == 2
    assert "nodes that do not fill a rack of 2:\n  rack r2: 1 of 2 node(s), all unused (r2-a)\n" in p.stderr
    assert "COLLBENCH_PARTIAL_RACKS=drop" in p.stderr
    assert not (shell.tmp / "results" / "hostfile.7").exists()


def test_nodes_beyond_a_full_rack_are_refused_by_name(shell):
    p = shell('make_hostfile 1 2', nodes="r1-a,r1-b,r1-c")
    assert p.returncode == 2
    assert "rack r1: 3 nodes, 2 used, left over: r1-c" in p.stderr


def test_drop_leaves_them_out_and_names_them(shell):
    p = shell('cat "$(make_hostfile 1 2)"', nodes="r1-a,r1-b,r1-c,r2-a", COLLBENCH_PARTIAL_RACKS="drop")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["r1-a", "r1-b"]
    assert "left over: r1-c" in p.stderr and "rack r2: 1 of 2 node(s), all unused (r2-a)" in p.stderr
    assert shell('make_hostfile 1 2', nodes="r1-a", COLLBENCH_PARTIAL_RACKS="keep").stderr.endswith(
        "COLLBENCH_PARTIAL_RACKS='keep'; accepted: fail, drop\n")


def test_no_full_rack_is_an_error_not_srun_n_0(shell):
    p = shell('make_hostfile 4 18', nodes="r1-a,r1-b", COLLBENCH_PARTIAL_RACKS="drop")
    assert p.returncode == 2
    assert p.stderr.endswith("collbench slurm: error: no rack has 18 nodes: nothing to run on\n")
    hostfile = shell.tmp / "hosts"
    hostfile.write_text("r1-a\n")
    p = shell(f'cb_srun 0 "{hostfile}" run -c allreduce')
    assert p.returncode == 2 and "0 task(s) asked, the host file" in p.stderr
    assert not (shell.tmp / "srun.log").exists()


def test_names_without_a_dash_are_refused_unless_rack_of_is_set(shell):
    p = shell('make_hostfile 4 2', nodes="node01,node02")
    assert p.returncode == 2
    assert "node 'node01' has no '-' in its name, so its rack is unknown" in p.stderr
    tool(shell.bindir, "rack-of", 'echo "rack${1:4:1}"\n')  # node01 -> rack0, node11 -> rack1
    p = shell('cat "$(make_hostfile 1 2)"; racks_of_hostfile "$COLLBENCH_RESULTS/hostfile.7"',
              nodes="node11,node02,node01,node12", COLLBENCH_RACK_OF="rack-of")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["node01", "node02", "node11", "node12", "rack0,rack1"]


@pytest.mark.parametrize("library,flag", [
    ("Open MPI v4.1.5, package: Debian OpenMPI", "--mpi=pmix"),
    ("MPICH Version: 4.0.2 (built with the mpich wrapper /usr/bin/mpicxx.mpich)", "--mpi=pmi2"),
    ("MVAPICH2 Version 2.3.7", "--mpi=pmi2"),
    ("Intel(R) MPI Library 2021.10", "--mpi=pmi2"),
])
def test_mpi_flag_follows_the_mpi_library(shell, library, flag):
    p = shell(f'mpi_flag_for "{library}"')
    assert (p.returncode, p.stdout) == (0, flag + "\n")


def test_mpi_flag_of_this_build_and_a_missing_plugin(shell):
    mpi_line = [l for l in subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.splitlines()
                if l.split()[:1] == ["mpi"]][0]
    expected = "--mpi=pmix" if "Open MPI" in mpi_line else "--mpi=pmi2"
    hostfile = shell.tmp / "hosts"
    hostfile.write_text("r1-a\nr1-a\n")
    p = shell(f'cb_srun 2 "{hostfile}" run -c allreduce')
    assert p.returncode == 0, p.stderr
    assert (shell.tmp / "srun.log").read_text() == \
        f"srun --distribution=arbitrary -n 2 {expected} --cpu-bind=none {BIN} run -c allreduce\n"
    p = shell("mpi_flag", FAKE_PLUGINS="none cray_shasta")
    assert p.returncode == 2
    assert f"srun has no '{expected[6:]}' MPI plugin" in p.stderr
    assert shell("mpi_flag", COLLBENCH_MPI_FLAG="--mpi=pmix").stdout == "--mpi=pmix\n"
    assert shell('mpi_flag_for "LAM 7"').returncode == 2


NVIDIA_SMI_Q = """\
==============NVSMI LOG==============

Attached GPUs                             : 2
GPU 00000008:01:00.0
    Product Name                          : NVIDIA GB200
    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 32766
    Processes                             : None

GPU 00000009:01:00.0
    Product Name                          : NVIDIA GB200
    Fabric
        State                             : {state}
        Status                            : {status}
        CliqueId                          : 0
"""


def test_fabric_problems_names_the_gpu(shell):
    good = NVIDIA_SMI_Q.format(state="Completed", status="Success")
    p = subprocess.run(["bash", "-c", f'source "{COMMON}"; fabric_problems'], input=good, capture_output=True,
                       text=True)
    assert (p.returncode, p.stdout) == (0, "")
    bad = NVIDIA_SMI_Q.format(state="In Progress", status="N/A")
    p = subprocess.run(["bash", "-c", f'source "{COMMON}"; fabric_problems'], input=bad, capture_output=True,
                       text=True)
    assert p.stdout == "GPU 00000009:01:00.0: fabric state In Progress, status N/A\n"
    no_section = good.replace("    Fabric\n        State                             : Completed\n", "    Other\n", 1)
    p = subprocess.run(["bash", "-c", f'source "{COMMON}"; fabric_problems'], input=no_section, capture_output=True,
                       text=True)
    assert "1 GPU(s) without a Fabric section" in p.stdout


def test_node_fabric_check_needs_imex_ready_and_the_fabric(shell):
    smi = shell.tmp / "smi.txt"
    smi.write_text(NVIDIA_SMI_Q.format(state="Completed", status="Success"))
    tool(shell.bindir, "nvidia-smi", f'cat "{smi}"\n')
    tool(shell.bindir, "systemctl", 'exit "${FAKE_IMEX_INACTIVE:-0}"\n')
    tool(shell.bindir, "nvidia-imex-ctl", 'echo "${FAKE_IMEX:-READY}"\n')
    tool(shell.bindir, "hostname", "echo tray-3\n")
    assert shell("node_fabric_check").returncode == 0
    p = shell("node_fabric_check", FAKE_IMEX="UNAVAILABLE", FAKE_IMEX_INACTIVE="3")
    assert p.returncode == 1
    assert p.stderr == ("collbench slurm: tray-3: the nvidia-imex service is not active\n"
                        "collbench slurm: tray-3: nvidia-imex-ctl -q does not report READY\n")
    # the templates run it once per node through srun and stop with exit 2
    hostfile = shell.tmp / "hosts"
    hostfile.write_text("r1-b\nr1-a\nr1-a\n")
    tool(shell.bindir, "srun", 'echo "srun $*" >> "$FAKE_LOG"; exit 1\n')
    p = shell(f'require_nvlink_fabric "{hostfile}"')
    assert p.returncode == 2 and "IMEX or NVLink fabric not ready" in p.stderr
    assert (shell.tmp / "srun.log").read_text() == \
        f"srun --nodelist=r1-a,r1-b --ntasks-per-node=1 -N 2 bash {COMMON} node-fabric-check\n"
    assert shell(f'require_nvlink_fabric "{hostfile}"', COLLBENCH_FABRIC_CHECK="0").returncode == 0


def test_slurm_scripts_are_shellcheck_clean():
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed")
    scripts = sorted(str(p) for p in (SOURCE_DIR / "ci" / "slurm").iterdir())
    p = subprocess.run(["shellcheck", "-x", *scripts], capture_output=True, text=True, cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stdout


def test_kubernetes_mpijob_runs_as_written():
    """Workers run sshd, mount the results volume and a memory-backed /dev/shm; the launcher writes
    under that volume; docs/launching.md shows the file as it is."""
    yaml = pytest.importorskip("yaml")
    path = SOURCE_DIR / "ci" / "examples" / "kubernetes-mpijob.yaml"
    job = yaml.safe_load(path.read_text())
    assert job["apiVersion"] == "kubeflow.org/v2beta1" and job["kind"] == "MPIJob"
    specs = job["spec"]["mpiReplicaSpecs"]
    worker = specs["Worker"]["template"]["spec"]
    container = worker["containers"][0]
    assert container["command"][:2] == ["/usr/sbin/sshd", "-De"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in worker["volumes"]}
    assert volumes[mounts["/dev/shm"]]["emptyDir"]["medium"] == "Memory"
    assert "persistentVolumeClaim" in volumes[mounts["/results"]]
    launcher = specs["Launcher"]["template"]["spec"]["containers"][0]["command"]
    np = int(launcher[launcher.index("-np") + 1])
    assert np == specs["Worker"]["replicas"] * job["spec"]["slotsPerWorker"] == 72
    assert launcher[launcher.index("--out-dir") + 1].startswith("/results/")
    docs = (SOURCE_DIR / "docs" / "launching.md").read_text()
    assert "```yaml\n" + path.read_text() + "```" in docs

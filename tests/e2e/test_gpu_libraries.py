"""A GPU build starts without NVIDIA's libraries (docs/nccl-backend.md, "Linking"): collbench does
not link libnccl, libcublas, libcudart or libcuda; it opens NCCL (and cuBLAS) with dlopen when
`--backend nccl` (or the gemm overlap load) first needs them. Where NCCL cannot be loaded, the MPI
paths still run, and `--backend nccl` fails on every rank with one message naming the library (or
the missing symbol), exit 2. CPU only: COLLBENCH_NCCL_LIBRARY points the loader at a file that is
not there, or at libc (a library without NCCL's symbols), as on a machine without NCCL."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, FAST, run

pytestmark = pytest.mark.skipif("nccl" not in subprocess.run([BIN, "--version"], capture_output=True,
                                                             text=True).stdout.split("backends:")[-1].split(")")[0],
                                reason="built without the nccl backend")

NO_NCCL = {"COLLBENCH_NCCL_LIBRARY": "/nonexistent/libnccl.so.2", "COLLBENCH_CUBLAS_LIBRARY": "/nonexistent/libcublas.so"}


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf (binutils)")
def test_binary_needs_no_nvidia_library_at_load_time():
    dynamic = subprocess.run(["readelf", "-d", BIN], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed, dynamic
    for lib in needed:
        assert not lib.startswith(("libnccl", "libcublas", "libcudart", "libcuda.", "libnvidia")), needed


def test_mpi_backend_runs_where_nccl_cannot_be_loaded():
    p = run(["run", "allreduce", "-b", "1K", "-e", "1K"] + FAST, np=2, env=NO_NCCL)
    assert p.returncode == 0, p.stderr
    assert "1024" in p.stdout and "allreduce" in p.stdout, p.stdout


def test_nccl_backend_names_the_library_it_cannot_load():
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--backend", "nccl"], np=2, env=NO_NCCL)
    assert p.returncode == 2, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("collbench: error:")]
    assert len(errors) == 1, p.stderr  # one message for the job (rank 0), not one per rank
    assert "backend 'nccl': cannot load the NCCL library" in errors[0], errors[0]
    assert "/nonexistent/libnccl.so.2" in errors[0] and "--backend mpi" in errors[0], errors[0]


def test_nccl_backend_names_the_missing_symbol():
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--backend", "nccl"], env={"COLLBENCH_NCCL_LIBRARY": "libc.so.6"})
    assert p.returncode == 2, p.stderr
    assert "libc.so.6 has no symbol ncclGetVersion" in p.stderr, p.stderr


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb")
def test_deb_suggests_nvidia_libraries_and_does_not_depend_on_them(tmp_path):
    build_dir = Path(BIN).resolve().parents[1]
    res = subprocess.run(["cpack", "-G", "DEB", "--config", str(build_dir / "CPackConfig.cmake"), "-B", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    deb = next(tmp_path.glob("collbench_*.deb"))
    fields = {f: subprocess.run(["dpkg-deb", "-f", str(deb), f], capture_output=True, text=True).stdout
              for f in ("Depends", "Suggests")}
    assert "nccl" not in fields["Depends"] and "cublas" not in fields["Depends"], fields
    assert "libnccl2" in fields["Suggests"] and "libcublas-" in fields["Suggests"], fields

"""scripts/check_layers.py finds an upward include and names it; the repository itself passes."""
import subprocess
import sys

from conftest import SOURCE_DIR

CHECK = SOURCE_DIR / "scripts" / "check_layers.py"


def check(src):
    return subprocess.run([sys.executable, str(CHECK), str(src)], capture_output=True, text=True, timeout=60)


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_an_upward_include_is_named(tmp_path):
    write(tmp_path, "collbench/core/units.hpp", "#pragma once\n")
    write(tmp_path, "collbench/model/bounds.hpp", '#include "collbench/core/units.hpp"\n')
    write(tmp_path, "collbench/backend/nccl/nvls_host.hpp", '#include "collbench/model/bounds.hpp"\n')
    p = check(tmp_path)
    assert p.returncode == 1
    assert ("src/collbench/backend/nccl/nvls_host.hpp: includes collbench/model/bounds.hpp "
            "(backend_nccl -> model: not below backend_nccl)") in p.stderr
    assert "1 upward include(s)" in p.stderr


def test_the_registry_may_include_the_backends_but_not_the_reverse(tmp_path):
    write(tmp_path, "collbench/backend/registry.cpp", '#include "collbench/backend/mpi/mpi_backend.hpp"\n')
    write(tmp_path, "collbench/backend/mpi/mpi_backend.hpp", '#include "collbench/backend/registry.hpp"\n')
    p = check(tmp_path)
    assert p.returncode == 1
    assert "mpi_backend.hpp: includes collbench/backend/registry.hpp (backend_mpi -> backend_registry" in p.stderr
    assert "registry.cpp" not in p.stderr


def test_an_unknown_layer_is_refused(tmp_path):
    write(tmp_path, "collbench/gadgets/x.cpp", '#include "collbench/core/units.hpp"\n')
    p = check(tmp_path)
    assert p.returncode == 1
    assert "layer 'gadgets' is not in scripts/check_layers.py's table" in p.stderr


def test_the_repository_goes_down():
    p = check(SOURCE_DIR / "src")
    assert p.returncode == 0, p.stderr

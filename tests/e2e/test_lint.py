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


def test_an_mpi_call_in_the_cli_is_named_with_its_line(tmp_path):
    write(tmp_path, "cli/cmd_x.cpp", "// MPI_Barrier(comm) in a comment is fine\n#include <mpi.h>\nint f() {\n"
          "  return MPI_Barrier(c);\n}\n")
    write(tmp_path, "collbench/run/session.cpp", "#include <mpi.h>\nint g() { return MPI_Barrier(c); }\n")
    p = check(tmp_path)
    assert p.returncode == 1
    assert "src/cli/cmd_x.cpp:2: '#include <mpi.h>': the CLI calls MPI through run/ (session.hpp)" in p.stderr
    assert "src/cli/cmd_x.cpp:4: 'MPI_Barrier(': the CLI calls MPI through run/" in p.stderr
    assert "session.cpp" not in p.stderr and ":1:" not in p.stderr


def test_the_repository_goes_down():
    p = check(SOURCE_DIR / "src")
    assert p.returncode == 0, p.stderr


# ---- scripts/check_sizes.py: files over 600 lines, functions over 60, an allowlist that only shrinks

SIZES = SOURCE_DIR / "scripts" / "check_sizes.py"
LINT_PYTHON = SOURCE_DIR / "build" / "lint-venv" / "bin" / "python"


def sizes(root, allowlist):
    python = str(LINT_PYTHON) if LINT_PYTHON.exists() else sys.executable
    return subprocess.run([python, str(SIZES), str(root), str(allowlist)], capture_output=True, text=True, timeout=120)


def git_tree(tmp_path, files):
    for rel, text in files.items():
        write(tmp_path, rel, text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    return tmp_path


def function(name, lines):
    return f"int {name}() {{\n" + "  int x = 0;\n" * (lines - 3) + "  return x;\n}\n"


def test_sizes_name_every_file_and_function_over_the_limit_and_the_allowlist_ratchets(tmp_path):
    pytest = __import__("pytest")
    if subprocess.run([str(LINT_PYTHON) if LINT_PYTHON.exists() else sys.executable, "-c", "import lizard"],
                      capture_output=True).returncode != 0:
        pytest.skip("lizard is installed by scripts/lint sizes into build/lint-venv")
    tree = git_tree(tmp_path / "t", {
        "src/long.cpp": "// x\n" * 601,
        "src/fn.cpp": function("short_one", 60) + function("long_one", 61),
    })
    allow = tmp_path / "allow.txt"
    allow.write_text("")
    p = sizes(tree, allow)
    assert p.returncode == 1
    assert "src/long.cpp: 601 lines, over the limit of 600" in p.stdout
    assert "src/fn.cpp:long_one: 61 lines, over the limit of 60" in p.stdout
    assert "short_one" not in p.stdout
    allow.write_text("src/long.cpp 601\nsrc/fn.cpp:long_one 61\n")
    assert sizes(tree, allow).returncode == 0
    allow.write_text("src/long.cpp 600\nsrc/fn.cpp:long_one 62\nsrc/gone.cpp 700\n")
    p = sizes(tree, allow)
    assert "src/long.cpp: grew from 600 to 601 lines" in p.stdout
    assert "src/fn.cpp:long_one: shrank from 62 to 61 lines: lower its allowlist entry to 61" in p.stdout
    assert "src/gone.cpp: allowlisted at 700 lines but no longer over the limit" in p.stdout


def test_the_repository_keeps_its_size_limits():
    p = sizes(SOURCE_DIR, SOURCE_DIR / "scripts" / "size-allowlist.txt")
    assert p.returncode in (0, 2), p.stdout  # 2: lizard not installed here (scripts/lint installs it)


# ---- scripts/check_doc_paths.py: every path docs/architecture.md and docs/design.md name exists

DOC_PATHS = SOURCE_DIR / "scripts" / "check_doc_paths.py"


def test_a_missing_path_in_a_design_doc_is_named_with_its_line(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("ok: `coll/registry.cpp`, `backend/mpi/` and [x](architecture.md)\n"
                   "gone: `backend/nccl/nccl_gone.cpp`\nunit: `800Gb/s`\n")
    p = subprocess.run([sys.executable, str(DOC_PATHS), str(doc)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert p.stdout == f"{doc}:2: 'backend/nccl/nccl_gone.cpp' names no file or folder of the repository\n"


def test_the_design_docs_name_only_existing_paths():
    p = subprocess.run([sys.executable, str(DOC_PATHS)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout

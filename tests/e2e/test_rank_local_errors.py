"""An input error that one rank finds alone (its own environment, a library missing on its node)
must not leave the other ranks waiting forever in the collective they went on to: that rank names
itself and ends the job with exit 2 (docs/errors.md, "An input error on one rank only"). An input error
that every rank finds still gives one message and an orderly exit 2, at once."""
import os
import subprocess
import time

import pytest

from conftest import BIN, MPIEXEC, _EMPTY_CONFIG

ARGS = ["run", "allreduce", "-b", "8", "-e", "8", "--format", "none"]
MESSAGE = "COLLBENCH_FAULT: unknown fault kind 'bogus'; accepted: corrupt, delay, slow, slow-pair, hang"


def launch(tmp_path, bad_ranks, np=2):
    """np ranks, COLLBENCH_FAULT=bogus set only on the ranks of `bad_ranks` (MPICH's PMI_RANK or
    Open MPI's OMPI_COMM_WORLD_RANK picks them)."""
    wrapper = tmp_path / "bad-env-on-some-ranks.sh"
    wrapper.write_text('#!/bin/sh\nr=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-x}}\n'
                       'case " $BAD_RANKS " in *" $r "*) export COLLBENCH_FAULT=bogus ;; esac\nexec "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ, XDG_CONFIG_HOME=_EMPTY_CONFIG, BAD_RANKS=" ".join(str(r) for r in bad_ranks))
    env.pop("COLLBENCH_FAULT", None)
    t0 = time.monotonic()
    res = subprocess.run([MPIEXEC, "-n", str(np), str(wrapper), BIN] + ARGS, capture_output=True, text=True,
                         timeout=120, env=env)
    return res, time.monotonic() - t0


@pytest.mark.parametrize("bad", [0, 1])
def test_an_input_error_on_one_rank_ends_the_job_with_exit_2_naming_that_rank(tmp_path, bad):
    res, elapsed = launch(tmp_path, [bad])
    assert res.returncode == 2, res.stderr
    assert f"collbench: error (rank {bad}): {MESSAGE}" in res.stderr, res.stderr
    assert elapsed < 60, elapsed  # the ranks wait 10 s for each other, then the job is aborted


def test_an_input_error_on_every_rank_is_one_message_and_an_orderly_exit_2(tmp_path):
    res, elapsed = launch(tmp_path, [0, 1, 2, 3], np=4)
    assert res.returncode == 2, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("collbench: error")]
    assert errors == [f"collbench: error: {MESSAGE}"], res.stderr
    assert "MPI_Abort" not in res.stderr
    assert elapsed < 10, elapsed  # no wait: every rank arrived

"""The default recipe learns as it did when `short_run.json` was pinned: the same losses, rewards and results."""

import json
import math

import pytest

from tests.training.short_run import GOLDEN, short_run

RELATIVE = 1e-5
"""Floats may differ in their last digits where torch's CPU kernels differ; anything more is a change."""
ABSOLUTE = 1e-6
"""The same for values near zero: a policy loss (a mean of signed terms) of -0.0022 came out 5e-8 apart on
two CPUs (AVX2 and AVX-512 kernels); a changed recipe moves the losses by far more."""


def same(pinned: str, got: str) -> bool:
    if pinned == got:
        return True
    try:
        return math.isclose(float(pinned), float(got), rel_tol=RELATIVE, abs_tol=ABSOLUTE)
    except ValueError:
        return False


@pytest.mark.slow
def test_a_short_default_run_learns_as_pinned(tmp_path):
    pinned = json.loads(GOLDEN.read_text())
    got = short_run(tmp_path / "run")
    for table in ("metrics", "eval"):
        assert len(got[table]) == len(pinned[table]), table
        for index, (want, have) in enumerate(zip(pinned[table], got[table])):
            assert want.keys() <= have.keys(), (table, index)  # columns added since are not pinned
            differing = {key: (want[key], have[key]) for key in want if not same(want[key], have[key])}
            assert not differing, f"{table} row {index}: {differing}"

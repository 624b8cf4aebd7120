"""One local Ray for the Ray tests (skipped where Ray is not installed: it is the ``ray`` extra)."""

import pytest

TEST_CPUS = 2
"""Logical CPUs of the test cluster: two rollout actors fit."""


@pytest.fixture(scope="session")
def ray_session():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=TEST_CPUS, include_dashboard=False, namespace="rouba-tests", configure_logging=False)
    yield ray
    ray.shutdown()

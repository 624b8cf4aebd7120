"""A refused run changes nothing in its folder: the Ray address is checked and joined before the folder is
touched, and what Ray says reaches the user as Ray's words."""

from pathlib import Path

import pytest

from rouba_env.evaluation.distributed import join_cluster, ray_address_problem
from rouba_training.cli import main as train_main
from rouba_training.config import TrainConfig
from tests.training.test_train import TINY_FLAGS


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("address", ["127.0.0.1:1", "foo", "host:0", "host:70000", "a b:6379"])
def test_a_bad_ray_address_keeps_every_file_of_an_earlier_run_and_creates_no_folder(tmp_path, capsys, address):
    run = tmp_path / "run"
    assert train_main(["--run-dir", str(run), "--rules", "mini", "--total-steps", "100", *TINY_FLAGS]) == 0
    before = folder_bytes(run)
    assert {"checkpoint.pt", "metrics.csv"} <= set(before)
    capsys.readouterr()
    assert train_main(["--run-dir", str(run), "--overwrite", "--rules", "mini", "--ray", address, *TINY_FLAGS]) == 2
    error = capsys.readouterr().err
    assert address.split(":")[0] in error and error.count("\n") == 1, error
    assert folder_bytes(run) == before, "nothing deleted, nothing written"
    fresh = tmp_path / "fresh"
    assert train_main(["--run-dir", str(fresh), "--rules", "mini", "--ray", address, *TINY_FLAGS]) == 2
    assert not fresh.exists(), "no empty run folder"


@pytest.mark.parametrize("address, allowed", [("auto", True), ("127.0.0.1:6379", True), ("[::1]:6379", True),
                                              ("foo", False), ("host:", False), (":6379", False),
                                              ("host:65536", False), ("host:port", False)])
def test_a_ray_address_is_spelled_auto_or_host_and_port(address, allowed):
    assert (ray_address_problem(address) is None) == allowed
    if allowed:
        assert TrainConfig.of(ray=address).scale_out.ray == address
    else:
        with pytest.raises(ValueError, match="ray must be local, auto or HOST:PORT"):
            TrainConfig.of(ray=address)


def test_a_cluster_that_is_not_ray_is_reported_in_rays_words_not_as_a_file():
    class NotRay:
        @staticmethod
        def init(**options):
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379 after 30 s")

    with pytest.raises(RuntimeError, match="cannot join a Ray cluster at h:1: Ray said: Failed to connect"):
        join_cluster(NotRay, "h:1")

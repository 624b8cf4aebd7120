"""The ray extra's pins are what is installed and tested together (RLlib pins gymnasium exactly)."""

from importlib.metadata import requires, version

import pytest

pytest.importorskip("ray.rllib")
from packaging.requirements import Requirement  # noqa: E402  (ray brings packaging)


def test_the_ray_extra_pins_the_versions_in_use():
    pins = [Requirement(text.split(";")[0]) for text in requires("rouba_env") if 'extra == "ray"' in text]
    assert {pin.name for pin in pins} >= {"ray", "gymnasium"}
    for pin in pins:
        assert pin.specifier.contains(version(pin.name)), f"{pin.name} {version(pin.name)} is not {pin}"
    rllib_gymnasium = [Requirement(text.split(";")[0]) for text in requires("ray")
                       if text.startswith("gymnasium") and '"rllib"' in text]
    assert all(req.specifier.contains(version("gymnasium")) for req in rllib_gymnasium)


def test_an_unreachable_ray_address_fails_at_once_naming_it(capsys):
    from rouba_env.cli.evaluate import main

    assert main(["--players", "random", "greedy", "--games", "2", "--ray-address", "127.0.0.1:9",
                 "--no-progress", "--json", "/tmp/unused.json"]) == 2
    assert "cannot reach a Ray cluster at 127.0.0.1:9" in capsys.readouterr().err  # our check, before Ray waits

"""Player specs: every malformed spec is refused with a message naming what is wrong and what is allowed."""

import pytest

from rouba_env import preset
from rouba_env.players.registry import make_policy, parse_spec

STANDARD = preset("standard")


def test_a_spec_splits_into_name_argument_and_options():
    assert parse_spec("expert:samples=8, z=0.5") == ("expert", None, {"samples": "8", "z": "0.5"})
    assert parse_spec("checkpoint:2p,deterministic=false") == ("checkpoint", "2p", {"deterministic": "false"})
    assert make_policy("checkpoint:2p,deterministic=false", STANDARD).deterministic is False


@pytest.mark.parametrize("spec, message", [
    ("expert:samples=8,samples=16", "sets samples twice ('8' and '16')"),
    ("checkpoint:2p,=3", "'=3' names no option"),
    ("checkpoint:2p,foo=1", "player 'checkpoint' has no option(s) ['foo']; known: ['deterministic']"),
    ("checkpoint:2p,deterministic=maybe", "deterministic must be true or false, got 'maybe'"),
    ("expert:samples", "player 'expert' takes no positional argument, got 'samples'"),
    ("heuristic:fast", "player 'heuristic' takes no positional argument, got 'fast'"),
    ("search:a,b", "more than one positional argument"),
    ("checkpoint", "a checkpoint spec needs a path or name"),
])
def test_a_malformed_spec_is_refused_by_name(spec, message):
    with pytest.raises(ValueError) as raised:
        make_policy(spec, STANDARD)
    assert message in str(raised.value)


def test_search_says_when_its_default_network_does_not_fit_the_rules():
    from rouba_env.players.checkpoint import CheckpointTableMismatch

    with pytest.raises(CheckpointTableMismatch, match=r"search's network \(policy=2p, the default\) cannot play "
                                                      r"here: .*search:policy=PATH"):
        make_policy("search:samples=4", preset("mini"))

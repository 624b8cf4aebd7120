"""One `Policy` interface for every player, scripted or learned, and player specs.

A policy sees only what its seat sees: the observation vector and the action
mask (plus a `numpy.random.Generator`), never the engine state. Players are
named by spec strings such as ``random``, ``greedy``, ``expert:samples=64`` or
``checkpoint:PATH``; `make_policy` turns a spec into a policy for a rules
config. Modules that define players add them with `register_policy`.
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

import numpy as np

from rouba_env.actions import ActionEncoding
from rouba_env.config import RulesConfig
from rouba_env.observation import ObservationEncoder


@runtime_checkable
class Policy(Protocol):
    """A player: picks legal actions from observations and masks."""

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """One action for one observation ``obs[D]`` with mask ``mask[A]``."""

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Actions ``int64[B]`` for observations ``obs[B, D]`` and masks ``mask[B, A]``."""


class BasePolicy:
    """Convenience base: implement `act_batch` (or `act`) and get the other one.

    Holds the rules, the observation encoder (for the layout) and the action
    encoding that the policy was made for.
    """

    name = "policy"

    def __init__(self, rules: RulesConfig, max_players: int | None = None):
        self.rules = rules
        self.encoder = ObservationEncoder(rules, max_players)
        self.actions = ActionEncoding(rules, max_players)

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(obs[None, :], mask[None, :], rng)[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.array([self.act(o, m, rng) for o, m in zip(obs, mask)], dtype=np.int64)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def check_mask(mask: np.ndarray) -> np.ndarray:
    """The mask as a 2-D bool array; ValueError if some row has no legal action."""
    mask = np.asarray(mask)
    if mask.ndim == 1:
        mask = mask[None, :]
    legal = mask.astype(bool)
    empty = ~legal.any(axis=1)
    if empty.any():
        raise ValueError(f"action mask row(s) {np.flatnonzero(empty).tolist()} have no legal action")
    return legal


class RandomPolicy(BasePolicy):
    """Uniform over the legal actions."""

    name = "random"

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal = check_mask(mask)
        # Gumbel-free trick: a uniform key per legal action, take the largest.
        keys = rng.random(legal.shape)
        keys[~legal] = -1.0
        return keys.argmax(axis=1).astype(np.int64)


PolicyFactory = Callable[..., Policy]
"""``factory(rules, max_players, **options) -> Policy``; options come from the spec as strings."""

_REGISTRY: dict[str, PolicyFactory] = {}


def register_policy(name: str, factory: PolicyFactory) -> None:
    """Make ``name`` (and ``name:key=value,...``) a valid player spec."""
    _REGISTRY[name] = factory


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """``name[:arg][:key=value,...]`` -> (name, positional argument or None, options)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a player spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    argument, options = None, {}
    for part in [p for p in rest.split(",") if p] if rest else []:
        key, eq, value = part.partition("=")
        if eq:
            options[key.strip()] = value.strip()
        elif argument is None:
            argument = part.strip()
        else:
            raise ValueError(f"player spec {spec!r}: more than one positional argument")
    return name, argument, options


def known_players() -> list[str]:
    _load_builtin_players()
    return sorted(_REGISTRY)


def _load_builtin_players() -> None:
    # Scripted agents register themselves on import.
    import rouba_env.agents  # noqa: F401


def make_policy(spec: "str | Policy", rules: RulesConfig, max_players: int | None = None) -> Policy:
    """A policy from a spec (``random``, ``expert:samples=64``, ``checkpoint:2p``) or a ready policy."""
    if not isinstance(spec, str):
        if isinstance(spec, Policy):
            return spec
        raise ValueError(f"a player must be a spec string or a Policy, got {type(spec).__name__}")
    _load_builtin_players()
    name, argument, options = parse_spec(spec)
    if name not in _REGISTRY:
        raise ValueError(f"unknown player {name!r} in spec {spec!r}; known players: {sorted(_REGISTRY)}")
    kwargs = dict(options)
    if argument is not None:
        kwargs["argument"] = argument
    try:
        return _REGISTRY[name](rules, max_players, **kwargs)
    except TypeError as error:
        raise ValueError(f"bad options in player spec {spec!r}: {error}") from None


def _checkpoint_player(rules: RulesConfig, max_players: int | None, **options) -> Policy:
    """``checkpoint:PATH_OR_NAME`` players; torch is imported only now, when one is loaded."""
    from rouba_env.checkpoint import checkpoint_player

    return checkpoint_player(rules, max_players, **options)


register_policy("random", lambda rules, max_players: RandomPolicy(rules, max_players))
register_policy("checkpoint", _checkpoint_player)

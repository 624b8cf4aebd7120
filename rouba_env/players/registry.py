"""Player specs: names such as ``random``, ``greedy``, ``expert:samples=64`` or ``checkpoint:2p``.

`BUILTIN_PLAYERS` is an explicit table of factories, written out here (no
registration by import side effects). `make_policy` turns a spec into a
`Policy` for a rules config; callers may pass extra factories of their own.
"""

from __future__ import annotations

from typing import Callable, Mapping

from rouba_env.players.base import Policy, RandomPolicy
from rouba_env.players.expert import ExpertPolicy
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy
from rouba_env.players.search import SearchPolicy
from rouba_env.rules.config import RulesConfig, make_rules

PolicyFactory = Callable[..., Policy]
"""``factory(rules, max_players, **options) -> Policy``; options come from the spec as strings."""


def _options_error(name: str, options: dict) -> ValueError:
    if "argument" in options:
        return _argument_error(name, options["argument"])
    return ValueError(f"player {name!r} takes no option(s) {sorted(options)}")


def _argument_error(name: str, argument: str) -> ValueError:
    return ValueError(f"player {name!r} takes no positional argument, got {argument!r} (options are written "
                      f"key=value)")


def _make_scripted(cls):
    """Registry factory for a player without options; unknown options are a ValueError naming them."""

    def factory(rules: RulesConfig, max_players: int | None = None, **options) -> Policy:
        if options:
            raise _options_error(cls.name, options)
        return cls(rules, max_players)

    return factory


def _parsed_options(name: str, options: dict, option_types: Mapping[str, type]) -> dict:
    """Spec options (strings) as typed arguments; a ValueError names an unknown option or a bad value."""
    unknown = set(options) - set(option_types)
    if "argument" in unknown:
        raise _argument_error(name, options["argument"])
    if unknown:
        known = sorted(key for key in option_types if key != "argument")
        raise ValueError(f"player {name!r} has no option(s) {sorted(unknown)}; known: {known}")
    parsed = {}
    for key, value in options.items():
        try:
            parsed[key] = option_types[key](value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} option {key}={value!r} is not a valid {option_types[key].__name__}") from None
    return parsed


def _make_searcher(cls, option_types: Mapping[str, type]) -> PolicyFactory:
    """Registry factory for a searching player whose spec options (strings) are converted to typed arguments."""

    def factory(rules: RulesConfig, max_players: int | None = None, **options) -> Policy:
        return cls(rules, max_players, **_parsed_options(cls.name, options, option_types))

    return factory


CHECKPOINT_OPTIONS: Mapping[str, type] = {"argument": str, "deterministic": str}
"""The checkpoint spec's path or name and its one option."""


def _make_checkpoint(rules: RulesConfig, max_players: int | None = None, **options) -> Policy:
    """``checkpoint:PATH_OR_NAME[,deterministic=false]``; the weights are read only now."""
    from rouba_env.players.network import checkpoint_player

    return checkpoint_player(rules, max_players, **_parsed_options("checkpoint", options, CHECKPOINT_OPTIONS))


def _make_belief_search(rules: RulesConfig, max_players: int | None = None, **options) -> Policy:
    """``belief_search[:worlds=N][,policy=2p][,opponent=MODEL][,value=outcome|margin][,temperature=T][,cut=D]``;
    imported only when asked for (it sits on the posterior, which seats its playouts at a table)."""
    from rouba_env.players.belief_search import BeliefSearchPolicy

    return BeliefSearchPolicy(rules, max_players, **_parsed_options("belief_search", options, {
        "policy": str, "opponent": str, "worlds": int, "value": str, "temperature": float, "cut": int}))


def _make_openspiel(rules: RulesConfig, max_players: int | None = None, **options) -> Policy:
    """``openspiel:mcts`` or ``openspiel:ismcts[,simulations=N][,uct_c=C]``; needs the openspiel extra,
    imported only when such a player is asked for."""
    try:
        from rouba_env.players.openspiel_bots import OpenSpielPolicy
    except ImportError as error:
        raise ValueError(str(error)) from None
    types = {"argument": str, "simulations": int, "uct_c": float}
    return OpenSpielPolicy(rules, max_players, **_parsed_options("openspiel", options, types))


BUILTIN_PLAYERS: Mapping[str, PolicyFactory] = {
    "random": _make_scripted(RandomPolicy),
    "greedy": _make_scripted(GreedyPolicy),
    "heuristic": _make_scripted(HeuristicPolicy),
    "expert": _make_searcher(ExpertPolicy, {
        "samples": int, "margin_weight": float, "rollout": str, "max_scale": int, "z": float,
        "endgame_nodes": int, "max_moves": int, "policy": str}),
    "search": _make_searcher(SearchPolicy, {
        "policy": str, "samples": int, "depth": int, "max_moves": int, "z": float, "endgame_nodes": int,
        "opponent": str, "passed_steal": float, "value": str, "beliefs": str}),
    "belief_search": _make_belief_search,
    "checkpoint": _make_checkpoint,
    "openspiel": _make_openspiel,
}
"""Every built-in player name and its factory."""


def known_players(extra: Mapping[str, PolicyFactory] | None = None) -> list[str]:
    """Sorted player names a spec may start with (for help texts and error messages)."""
    return sorted({**BUILTIN_PLAYERS, **(extra or {})})


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """``name[:arg][:key=value,...]`` -> (name, positional argument or None, options)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a player spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    argument: str | None = None
    options: dict[str, str] = {}
    for part in [p for p in rest.split(",") if p] if rest else []:
        key, eq, value = part.partition("=")
        key = key.strip()
        if eq and not key:
            raise ValueError(f"player spec {spec!r}: {part!r} names no option (options are written key=value)")
        if eq and key in options:
            raise ValueError(f"player spec {spec!r} sets {key} twice ({options[key]!r} and {value.strip()!r})")
        if eq:
            options[key] = value.strip()
        elif argument is None:
            argument = part.strip()
        else:
            raise ValueError(f"player spec {spec!r}: more than one positional argument")
    return name, argument, options


def make_policy(spec: "str | Policy", rules: "RulesConfig | str", max_players: int | None = None,
                extra: Mapping[str, PolicyFactory] | None = None) -> Policy:
    """A policy from a spec (``random``, ``expert:samples=64``, ``checkpoint:2p``) or a ready policy.

    ``rules``: a `RulesConfig` or a preset name. ``extra`` adds (or overrides) player names for this
    call only.
    """
    if isinstance(rules, str):
        rules = make_rules(rules)
    elif not isinstance(rules, RulesConfig):
        raise ValueError(f"rules must be a RulesConfig or a preset name, got {type(rules).__name__}")
    if not isinstance(spec, str):
        if isinstance(spec, Policy):
            return spec
        raise ValueError(f"a player must be a spec string or a Policy, got {type(spec).__name__}")
    factories = {**BUILTIN_PLAYERS, **(extra or {})}
    name, argument, options = parse_spec(spec)
    if name not in factories:
        raise ValueError(f"unknown player {name!r} in spec {spec!r}; known players: {sorted(factories)}")
    kwargs = dict(options)
    if argument is not None:
        kwargs["argument"] = argument
    try:
        return factories[name](rules, max_players, **kwargs)
    except TypeError as error:
        raise ValueError(f"bad options in player spec {spec!r}: {error}") from None

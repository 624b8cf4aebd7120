"""Training configuration: one dataclass, read from the command line and from TOML.

Every field has a docstring; `field_docs` reads them from this source so that
``--help`` shows the same text. A TOML file (``--config run.toml``) sets any
field by name; unknown keys are an error. Command-line flags win over the file.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path


@dataclass
class TrainConfig:
    """PPO self-play on the batched engine (defaults: the README's 2-player run)."""

    run_dir: str = "runs/default"
    """Folder for checkpoints, metrics.csv, TensorBoard events and the learning curve."""
    seed: int = 1
    """Seeds numpy, torch and the deals: the same seed repeats a run on the same machine."""
    rules: str = "standard"
    """Rules preset (standard, take_all, jokers, ...) for every training game."""
    num_players: tuple[int, ...] = (2,)
    """Table sizes to train on; several (e.g. 2 3 4) share one network through max_players."""
    max_players: int = 0
    """Observation/action padding; 0 means the largest of num_players."""
    total_steps: int = 18_000_000
    """Learner decisions to train for (the learner's own turns only)."""
    num_envs: int = 1024
    """Games stepped in lockstep per table size."""
    rollout_steps: int = 48
    """Engine steps collected per update, before the open games are played to their end."""
    learning_rate: float = 1e-3
    """Adam step size, annealed linearly to zero over the run."""
    gamma: float = 1.0
    """Discount; games are short and only their result counts."""
    gae_lambda: float = 0.95
    """GAE's bias/variance trade-off."""
    update_epochs: int = 4
    """Passes over each batch."""
    minibatch_size: int = 2048
    """Learner decisions per gradient step."""
    clip_coef: float = 0.2
    """PPO's probability-ratio clip."""
    ent_coef: float = 0.01
    """Entropy bonus (over legal actions only)."""
    vf_coef: float = 0.5
    """Weight of the value loss."""
    max_grad_norm: float = 0.5
    """Gradient norm clip."""
    hidden_sizes: tuple[int, ...] = (256, 256)
    """Widths of the MLP's hidden layers."""
    reward: str = "margin"
    """Training reward: margin (score difference over the deck size: a denser signal that learns
    faster) or outcome (+1/0/-1). Evaluation always reports win rates."""
    self_play_weight: float = 0.25
    """Share of games whose other seats are played by the current policy."""
    past_self_weight: float = 0.15
    """Share of games against a snapshot of an earlier self from the pool."""
    scripted_weight: float = 0.6
    """Share of games against a scripted player from scripted_opponents."""
    scripted_opponents: tuple[str, ...] = ("heuristic", "greedy")
    """Player specs of the scripted part of the opponent pool."""
    snapshot_interval: int = 20
    """Updates between snapshots of the learner added to the pool."""
    pool_size: int = 8
    """Most past snapshots kept (oldest dropped first)."""
    eval_interval: int = 100
    """Updates between evaluations against eval_opponents (0: only at the end)."""
    eval_games: int = 200
    """Duplicate-deal games per opponent at each periodic evaluation."""
    final_eval_games: int = 2000
    """Duplicate-deal games per opponent at the end (0: skip)."""
    eval_opponents: tuple[str, ...] = ("random", "greedy", "heuristic")
    """Players the learner is evaluated against."""
    checkpoint_interval: int = 20
    """Updates between checkpoints (a kill loses at most this much)."""
    device: str = "cpu"
    """Torch device: cpu or cuda."""
    torch_threads: int = 0
    """Torch CPU threads; 0 leaves torch's default."""
    progress: bool = True
    """Show a progress bar."""
    # --- Ray (training/distributed.py; needs the ray extra) ---
    ray: bool = False
    """Collect rollouts on Ray actors (a local Ray is started unless ray_address names a cluster)."""
    ray_address: str = ""
    """Address of a running Ray cluster to join (e.g. auto or HOST:6379); empty: start a local Ray.
    Setting it implies ray."""
    rollout_workers: int = 2
    """Ray rollout actors; each plays its share of num_envs with a CPU copy of the policy and the pool."""

    def __post_init__(self) -> None:
        for name in ("num_players", "hidden_sizes", "scripted_opponents", "eval_opponents"):
            setattr(self, name, tuple(getattr(self, name)))
        positive = ("total_steps", "num_envs", "rollout_steps", "update_epochs", "minibatch_size",
                    "snapshot_interval", "pool_size", "checkpoint_interval")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if not self.num_players or any(not 2 <= n <= 8 for n in self.num_players):
            raise ValueError(f"num_players must list table sizes in 2..8, got {self.num_players}")
        if self.max_players and self.max_players < max(self.num_players):
            raise ValueError(f"max_players={self.max_players} is smaller than the largest table {max(self.num_players)}")
        weights = (self.self_play_weight, self.past_self_weight, self.scripted_weight)
        if min(weights) < 0 or sum(weights) <= 0:
            raise ValueError(f"opponent weights must be >= 0 and not all zero, got {weights}")
        if self.scripted_weight > 0 and not self.scripted_opponents:
            raise ValueError("scripted_weight > 0 needs at least one scripted_opponents spec")
        if self.reward not in ("outcome", "margin"):
            raise ValueError(f"reward must be outcome or margin, got {self.reward!r}")
        if not 0 <= self.gae_lambda <= 1 or not 0 < self.gamma <= 1:
            raise ValueError("gamma must be in (0, 1] and gae_lambda in [0, 1]")
        if self.rollout_workers <= 0:
            raise ValueError(f"rollout_workers must be positive, got {self.rollout_workers}")
        if self.ray_address:
            self.ray = True
        if self.ray and self.rollout_workers > self.num_envs:
            raise ValueError(f"rollout_workers={self.rollout_workers} is more than num_envs={self.num_envs}: "
                             f"every actor needs at least one game slot")
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ValueError(f"device must be cpu or cuda[:N], got {self.device!r}")

    @property
    def padded_players(self) -> int:
        return self.max_players or max(self.num_players)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def field_docs() -> dict[str, str]:
    """Each field's docstring, read from this module's source."""
    tree = ast.parse(inspect.getsource(TrainConfig))
    docs, last = {}, None
    for node in tree.body[0].body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            last = node.target.id
        elif last and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            docs[last] = inspect.cleandoc(node.value.value)
            last = None
    return docs


def _field_kind(field: dataclasses.Field):
    hint = typing.get_type_hints(TrainConfig)[field.name]
    if typing.get_origin(hint) is tuple:
        return "tuple", typing.get_args(hint)[0]
    return "scalar", hint


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true/false, got {text!r}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Train a rouba-monte policy by PPO self-play on the batched engine.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--config", type=Path, help="TOML file setting any of the fields below")
    parser.add_argument("--resume", action="store_true", help="carry on from the last checkpoint in run_dir")
    docs = field_docs()
    for field in dataclasses.fields(TrainConfig):
        kind, base = _field_kind(field)
        flag = "--" + field.name.replace("_", "-")
        converter = _parse_bool if base is bool else base
        if kind == "tuple":
            parser.add_argument(flag, dest=field.name, type=converter, nargs="+", default=None,
                                help=f"{docs[field.name]} (default: {' '.join(map(str, field.default))})")
        elif base is bool:  # a bare --flag means true; --flag false/true also works
            parser.add_argument(flag, dest=field.name, type=converter, nargs="?", const=True, default=None,
                                help=f"{docs[field.name]} (default: {field.default})")
        else:
            parser.add_argument(flag, dest=field.name, type=converter, default=None,
                                help=f"{docs[field.name]} (default: {field.default})")
    return parser


def load_toml(path: Path) -> dict:
    """Fields from a TOML file; unknown keys or wrong types are errors naming the key."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ValueError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"config file {path} is not valid TOML: {error}") from None
    known = {f.name: f for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in {path}; known keys: {sorted(known)}")
    for key, value in data.items():
        kind, base = _field_kind(known[key])
        values = value if kind == "tuple" else [value]
        if kind == "tuple" and not isinstance(value, list):
            raise ValueError(f"{key} in {path} must be a list, got {value!r}")
        for item in values:
            ok = isinstance(item, base) and not (base is not bool and isinstance(item, bool))
            if base is float and isinstance(item, int) and not isinstance(item, bool):
                ok = True
            if not ok:
                raise ValueError(f"{key} in {path} must be {base.__name__}, got {item!r}")
    return data


def config_from_args(argv: list[str] | None = None) -> tuple[TrainConfig, bool]:
    """(config, resume) from command-line arguments (and the TOML file they name)."""
    args = build_parser().parse_args(argv)
    values = load_toml(args.config) if args.config else {}
    for field in dataclasses.fields(TrainConfig):
        given = getattr(args, field.name)
        if given is not None:
            values[field.name] = given
    return TrainConfig(**values), args.resume

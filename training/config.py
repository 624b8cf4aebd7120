"""Training configuration: one dataclass and its limits, checked when it is made, whatever the values' source.

Every field carries its help text (`setting`), which ``rouba-train --help`` shows; the command line and
settings files are read by `rouba_training.cli`.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

from rouba_env.checks import is_int, shown
from rouba_env.players.checkpoint import MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH, CheckpointTableMismatch, network_fits
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import make_rules
from rouba_env.rules.scoring import REWARD_MODES, TRAINING_REWARD
from rouba_training.best_response import (
    EXPLOITER_ENTROPY, EXPLOITER_EVAL_GAMES, FRESH_LEARNING_RATE, WARM_LEARNING_RATE, exploiter_start,
)


LIMITS = {
    "seed": (0, 2**63 - 1),
    "max_players": (0, 8),
    "total_steps": (1, 10**12),
    "best_response_steps": (1, 10**12),
    "num_envs": (1, 16_384),
    "rollout_steps": (1, 4096),
    "update_epochs": (1, 100),
    "minibatch_size": (1, 1 << 20),
    "snapshot_interval": (1, 10**9),
    "pool_size": (1, 256),
    "eval_interval": (0, 10**9),
    "eval_games": (0, 1_000_000),
    "final_eval_games": (0, 1_000_000),
    "checkpoint_interval": (1, 10**9),
    "checkpoint_minutes": (0, 10**6),
    "torch_threads": (0, 1024),
    "rollout_workers": (1, 1024),
    "learning_rate": (0, 10),
    "clip_coef": (0, 10),
    "ent_coef": (0, 10),
    "vf_coef": (0, 100),
    "max_grad_norm": (0, 10**6),
    "hand_coef": (0, 100),
    "learning_rate_floor": (0, 10),
    "schedule_power": (0, 10),
    "magnet_coef": (0, 100),
    "magnet_interval": (1, 10**9),
    "mirror_coef": (0, 1000),
    "support_coef": (0, 100),
    "support_until": (1e-6, 1),
    "weight_average": (0, 0.999999),
    "neurd_threshold": (0.1, 50),
    "neurd_clip": (1e-3, 10**6),
    "best_response_temperature": (1, 1024),
}
"""Allowed range (inclusive) of each numeric setting, checked when a `TrainConfig` is made, whatever its source.

The network's sizes share the checkpoint loader's limits (`MAX_HIDDEN_WIDTH`, `MAX_HIDDEN_LAYERS`), so a run
never trains a network that could not be loaded. The bounds keep a run within one machine's memory and time:
``num_envs x rollout_steps`` decisions are held at once, and one update runs ``update_epochs`` passes."""
PLAYER_SPEC_FIELDS = ("scripted_opponents", "eval_opponents", "best_response")
"""Fields that hold player specs (their help lists the known players)."""
COMMAND_LINE_ONLY = ("ray", "ray_address")
"""Settings never taken from a file (a resumed run's or a TOML config): joining a cluster means trusting it,
so the user says so on the command line each time."""
NOT_RESUMED = ("device",)
"""Settings a resumed run never takes from its file: they belong to the machine it runs on now
(a run started on a GPU resumes on the CPU unless ``--device`` says otherwise)."""
BEST_RESPONSE_RUN_DIR = "runs/best_response"
DECK_DEFAULTS = {"mini": {"num_envs": 128, "total_steps": 1_000_000}}
"""Per deck, the settings a run left at the trainer's defaults takes instead: on ``mini`` (a game of a few
moves) 1,024 games an update would be a few dozen updates in the whole run. An exploiter
(best_response) keeps its own budget."""
EXPLOITER_UNREGULARIZED = {"magnet": "none", "magnet_coef": 0.0, "mirror_coef": 0.0, "weight_average": 0.0}
"""An exploiter is plain PPO against its frozen target: the default recipe's regularizers, left at their
defaults, are turned off."""
"""Where a best-response probe goes unless run_dir is given."""
SCHEDULES = ("constant", "linear", "power")
"""How a coefficient moves over a run (`rouba_training.regularizers.scheduled`)."""
MAGNETS = ("none", "uniform", "ema", "snapshot")
"""What the magnet KL pulls the policy towards (``none``: no magnet term)."""
POLICY_LOSSES = ("ppo", "neurd")
"""The policy terms the trainer knows (`rouba_training.losses`)."""
EVERY_SEAT_MODES = ("auto", "on", "off")
"""Values of `TrainConfig.every_seat`."""
HELP = "help"
"""Field metadata key of a setting's help text."""


def setting(default, help_text: str):
    """A `TrainConfig` field: its default and the help text that ``--help`` shows."""
    return dataclasses.field(default=default, metadata={HELP: help_text})


@dataclass
class TrainConfig:
    """PPO self-play on the batched engine (defaults: the README's 2-player run).

    The default recipe heads for an equilibrium: pure self-play with every seat's decisions trained on, no
    entropy bonus, a magnet KL towards the moving average of the network's own weights (the magnet moves,
    so its pull ends at an equilibrium rather than at a smoothed one) and the mirror step (a KL to the
    policy that collected the batch). On ``mini`` a run defaults to smaller updates and a shorter budget
    (`DECK_DEFAULTS`). The pool recipe of 0.4 (scripted and past opponents) is the shipped config
    ``pool_2p``.

    Each field's help (``setting(default, help)``) is the text that ``rouba-train --help`` shows."""

    run_dir: str = setting(
        "runs/default",
        'Folder for checkpoints, metrics.csv, TensorBoard events and the learning curve.')
    seed: int = setting(1, 'Seeds numpy, torch and the deals: the same seed repeats a run on the same machine.')
    rules: str = setting("standard", 'Rules preset (standard, take_all, jokers, ...) for every training game.')
    num_players: tuple[int, ...] = setting(
        (2,),
        'Table sizes to train on; several (e.g. 2 3 4) share one network through max_players.')
    max_players: int = setting(0, 'Observation/action padding; 0 means the largest of num_players.')
    total_steps: int = setting(
        3_000_000, "Learner decisions to train for (the learner's own turns only). Training ends with the "
        "update that reaches it, so a run trains up to one batch more (a batch is about num_envs x "
        "(rollout_steps + the turns that finish the open games) per table size).")
    num_envs: int = setting(1024, 'Games stepped in lockstep per table size.')
    rollout_steps: int = setting(
        28,
        "Rounds collected per update, before the open games are played to their end: in a round the "
        "learner's network decides once in every game and the seated opponents reply.")
    learning_rate: float = setting(
        1e-3, 'Adam step size at the start; learning_rate_schedule says how it moves (by default linearly to '
        'learning_rate_floor, 0, over the run).')
    learning_rate_schedule: str = setting(
        "linear", "How the learning rate moves: constant, linear (to learning_rate_floor at total_steps; a run "
        "carried on to more steps continues from where it is) or power (learning_rate * (1 + update)^-"
        "schedule_power, never below the floor).")
    learning_rate_floor: float = setting(0.0, 'The lowest learning rate a schedule reaches.')
    schedule_power: float = setting(0.5, 'Exponent of the power schedules (learning rate and KL weights).')
    magnet: str = setting(
        "ema",
        "Regularized self-play (magnetic mirror descent): the policy the magnet KL pulls towards: none, uniform "
        "(the uniform policy over the legal moves: an entropy bonus in KL form), ema (the moving average of the "
        "weights, weight_average) or snapshot (the network as it was, refreshed every magnet_interval updates).")
    magnet_coef: float = setting(0.05, 'Weight of KL(policy || magnet), exact over the legal moves.')
    magnet_schedule: str = setting("constant", 'How magnet_coef moves: constant, linear (to 0) or power.')
    magnet_interval: int = setting(50, 'Updates between refreshes of a snapshot magnet.')
    mirror_coef: float = setting(
        0.1, "Weight of KL(policy || the policy that collected the batch), exact over the legal moves (the "
        "mirror-descent step; 1 / step size).")
    mirror_schedule: str = setting("constant", 'How mirror_coef moves: constant, linear (to 0) or power.')
    support_coef: float = setting(
        0.0, "Weight of KL(uniform || policy), exact over the legal moves: a barrier that keeps every legal "
        "move's probability away from 0 (its pull on a move grows as the move is dropped, where the entropy's "
        "fades). It biases the policy towards playing every move, so anneal it (support_schedule).")
    support_schedule: str = setting("constant", 'How support_coef moves: constant, linear (to 0) or power.')
    support_until: float = setting(
        1.0, "Share of the run the support term lasts (0..1]: its schedule runs over that share (linear "
        "reaches 0 there) and the term is off after it. A share of total_steps: a run carried on to more "
        "steps moves the point (and may turn the term on again).")
    policy_loss: str = setting(
        "ppo", "The policy term: ppo (the clipped surrogate) or neurd (neural replicator dynamics, clipped as PPO "
        "is: each legal move's centred logit is pushed by its estimated advantage, which does not fade with the "
        "move's probability as the policy gradient's does).")
    neurd_threshold: float = setting(
        6.0, "policy_loss neurd: a centred logit is not pushed further once it is this far from 0 (with two "
        "moves, 6 lets the policy reach about 1 - 6e-6 by this term).")
    neurd_clip: float = setting(100.0, "policy_loss neurd: the largest push one row gives one logit.")
    weight_average: float = setting(
        0.99, 'Decay of an exponential moving average of the weights, updated after every update (0: none).')
    play_average: bool = setting(
        False, 'Evaluate and export the moving average of the weights (weight_average) as the policy.')
    gamma: float = setting(1.0, 'Discount; games are short and only their result counts.')
    gae_lambda: float = setting(0.95, "GAE's bias/variance trade-off.")
    update_epochs: int = setting(4, 'Passes over each batch.')
    minibatch_size: int = setting(
        2048, 'Learner decisions per gradient step; a batch smaller than this is one gradient step per epoch.')
    clip_coef: float = setting(0.2, "PPO's probability-ratio clip.")
    ent_coef: float = setting(0.0, 'Entropy bonus (over legal actions only).')
    vf_coef: float = setting(0.5, 'Weight of the value loss.')
    max_grad_norm: float = setting(0.5, 'Gradient norm clip.')
    architecture: str = setting(
        "rank",
        'Network: rank (one token per rank slot, the same weights for every rank, with a context of the '
        'rank-free entries; see rouba_env.players.network.RankNetwork) or mlp (one MLP over the whole '
        'observation). rank learns more per step (scripts/results/TRAINING_TRIES.md).')
    hidden_sizes: tuple[int, ...] = setting(
        (128, 64),
        'For architecture rank, (context width, token width); for mlp, the widths of its hidden layers.')
    hand_coef: float = setting(
        0.0,
        "Weight of an auxiliary loss: the network also predicts every other hand and the deck per rank "
        "(squared error against the real cards during training); 0: no such head. The head is saved beside the "
        "policy, for a search that deals its imagined worlds by it; it never plays.")
    critic: str = setting(
        "shared",
        "Value estimate for PPO: shared (the actor's own value head, from the observation) or privileged "
        "(a critic that also sees every hand and the deck during training; the saved policy is the actor "
        "alone). See scripts/results/TRAINING_TRIES.md.")
    reward: str = setting(
        TRAINING_REWARD,
        "Training reward: margin (own score minus the others' mean, over the cards in play: a denser signal "
        "that learns faster), lead (own score minus the best other's: the same with 2 players; at 3+ it "
        'rewards beating the leader) or outcome (+1/0/-1). Evaluation always reports win rates.')
    self_play_weight: float = setting(1.0, 'Share of games whose other seats are played by the current policy.')
    every_seat: str = setting(
        "auto",
        "Train on every seat's decisions in games against the current policy, each with its own seat's reward "
        "(twice the data per game at 2 players): on, off, or auto (on when every game is such a game, "
        "self_play_weight the only weight above 0).")
    past_self_weight: float = setting(0.0, 'Share of games against a snapshot of an earlier self from the pool.')
    scripted_weight: float = setting(0.0, 'Share of games against a scripted player from scripted_opponents.')
    scripted_opponents: tuple[str, ...] = setting(
        ("heuristic", "greedy"),
        'Player specs of the scripted part of the opponent pool.')
    best_response: str = setting(
        "",
        'Approximate best response: a player spec (e.g. checkpoint:2p) that an exploiter trains against, alone '
        '(no self-play, no snapshots), playing as it plays for users; the exploiter starts as a copy of it where '
        'it is a network (best_response_start). Evaluated against it at the start and the end on the same '
        'duplicate deals: the exploiter\'s seat-averaged margin is a lower bound on the target\'s exploitability. '
        'Runs best_response_steps unless total_steps is given; learning_rate, ent_coef and final_eval_games left '
        'at the trainer\'s defaults take the exploiter\'s (2e-4 from a copy or 1e-3 fresh, 0, 10000).')
    best_response_steps: int = setting(
        3_000_000,
        "The probe's fixed budget of learner steps (used when total_steps is left at its default).")
    best_response_start: str = setting(
        "auto",
        "Where the exploiter of best_response starts: auto (a copy of the target when it is a network, its actor "
        "and any privileged critic; for a scripted target the strongest shipped network that plays the table, "
        "else a fresh network), fresh, or a checkpoint spec. A network start fixes architecture, hidden_sizes, "
        "max_players and critic to the checkpoint's.")
    best_response_temperature: float = setting(
        4.0,
        "A network start's logits are divided by this: its greedy play stays the copy's (exactly, for a power "
        "of 2), while its sampling spreads to the moves a near-deterministic copy would never try.")
    snapshot_interval: int = setting(20, 'Updates between snapshots of the learner added to the pool.')
    pool_size: int = setting(8, 'Most past snapshots kept (oldest dropped first).')
    eval_interval: int = setting(
        10, 'Updates between evaluations against eval_opponents (0: only at the end); the default run evaluates '
        'about ten times, for a learning curve, in about 2% of its time.')
    eval_games: int = setting(200, 'Duplicate-deal games per opponent at each periodic evaluation.')
    final_eval_games: int = setting(2000, 'Duplicate-deal games per opponent at the end (0: skip).')
    eval_opponents: tuple[str, ...] = setting(
        ("random", "greedy", "heuristic"),
        'Players the learner is evaluated against.')
    checkpoint_interval: int = setting(20, 'Updates between checkpoints.')
    checkpoint_minutes: float = setting(
        3.0,
        'Minutes between checkpoints as well (0: by updates only); a kill loses at most this much work.')
    device: str = setting("cpu", 'Torch device: cpu or cuda.')
    torch_threads: int = setting(
        0, "Torch CPU threads; 0: before each update, one plus the cores the machine left idle while the batch "
        "was collected (torch's own default, one per core, runs several times slower when another process keeps "
        "a core busy; docs/benchmarks.md). A count that moves changes the last digits of a run: set one to "
        "repeat a run exactly.")
    progress: bool = setting(True, 'Show a progress bar.')
    # --- Ray (training/distributed.py; needs the ray extra) ---
    ray: bool = setting(
        False,
        'Collect rollouts on Ray actors (a local Ray is started unless ray_address names a cluster).')
    ray_address: str = setting(
        "",
        'Address of a running Ray cluster to join (e.g. auto or HOST:6379); empty: start a local Ray. Setting '
        'it implies ray.')
    rollout_workers: int = setting(
        2,
        'Ray rollout actors; each plays its share of num_envs with a CPU copy of the policy and the pool.')

    def __post_init__(self) -> None:
        check_field_types(self)
        for name, (low, high) in LIMITS.items():
            check_limit(name, getattr(self, name), low, high)
        if not network_fits(self.hidden_sizes):
            raise ValueError(f"hidden_sizes must be 1..{MAX_HIDDEN_LAYERS} widths, each in 1..{MAX_HIDDEN_WIDTH} "
                             f"(what a checkpoint may hold), got {shown(list(self.hidden_sizes))}")
        if len(set(self.num_players)) != len(self.num_players):
            raise ValueError(f"num_players must list each table size once, got {list(self.num_players)}")
        if not self.run_dir.strip():
            raise ValueError("run_dir must name a folder, got ''")
        if self.eval_interval and not self.eval_games:
            raise ValueError(f"eval_interval={self.eval_interval} evaluates every so many updates, so eval_games "
                             f"must be at least 1 (or eval_interval 0)")
        try:
            make_rules(self.rules)
        except ValueError as error:
            raise ValueError(f"rules: {error}") from None
        for field_name in PLAYER_SPEC_FIELDS:
            specs = getattr(self, field_name)
            for spec in (specs if isinstance(specs, tuple) else ([specs] if specs else [])):
                check_spec(field_name, spec)
        if not self.num_players or any(not 2 <= n <= 8 for n in self.num_players):
            raise ValueError(f"num_players must list table sizes in 2..8, got {self.num_players}")
        if self.best_response:
            self._set_up_best_response()
        else:
            if self.best_response_start != "auto":
                raise ValueError(f"best_response_start={self.best_response_start!r} says where an exploiter "
                                 f"starts: it needs best_response (the player it exploits)")
            self._take_deck_defaults()
        if self.max_players and self.max_players < max(self.num_players):
            raise ValueError(f"max_players={self.max_players} is smaller than the largest table {max(self.num_players)}")
        weights = (self.self_play_weight, self.past_self_weight, self.scripted_weight)
        if min(weights) < 0 or sum(weights) <= 0:
            raise ValueError(f"opponent weights must be >= 0 and not all zero, got {weights}")
        if self.scripted_weight > 0 and not self.scripted_opponents:
            raise ValueError("scripted_weight > 0 needs at least one scripted_opponents spec")
        if self.architecture not in ("mlp", "rank"):
            raise ValueError(f"architecture must be mlp or rank, got {self.architecture!r}")
        for name in ("learning_rate_schedule", "magnet_schedule", "mirror_schedule", "support_schedule"):
            if getattr(self, name) not in SCHEDULES:
                raise ValueError(f"{name} must be one of {', '.join(SCHEDULES)}, got {getattr(self, name)!r}")
        if self.policy_loss not in POLICY_LOSSES:
            raise ValueError(f"policy_loss must be one of {', '.join(POLICY_LOSSES)}, got {self.policy_loss!r}")
        if self.magnet not in MAGNETS:
            raise ValueError(f"magnet must be one of {', '.join(MAGNETS)}, got {self.magnet!r}")
        if (self.magnet == "none") != (self.magnet_coef == 0):
            raise ValueError(f"magnet={self.magnet!r} with magnet_coef={self.magnet_coef}: a magnet needs a weight "
                             f"above 0, and a weight needs a magnet (uniform, ema or snapshot)")
        if (self.magnet == "ema" or self.play_average) and self.weight_average == 0:
            raise ValueError("magnet ema and play_average use the moving average of the weights: set "
                             "weight_average (its decay, e.g. 0.99)")
        if self.learning_rate_floor > self.learning_rate:
            raise ValueError(f"learning_rate_floor={self.learning_rate_floor} is above learning_rate="
                             f"{self.learning_rate}")
        if self.every_seat not in EVERY_SEAT_MODES:
            raise ValueError(f"every_seat must be one of {', '.join(EVERY_SEAT_MODES)}, got {self.every_seat!r}")
        if self.critic not in ("shared", "privileged"):
            raise ValueError(f"critic must be shared or privileged, got {self.critic!r}")
        if self.architecture == "rank" and len(self.hidden_sizes) != 2:
            raise ValueError(f"architecture rank takes two hidden_sizes (context width, token width), "
                             f"got {list(self.hidden_sizes)}")
        if self.reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, got {self.reward!r}")
        if not 0 <= self.gae_lambda <= 1 or not 0 < self.gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1] and gae_lambda in [0, 1], got gamma={self.gamma} and "
                             f"gae_lambda={self.gae_lambda}")
        if self.ray_address:
            self.ray = True
        if self.ray and self.rollout_workers > self.num_envs:
            raise ValueError(f"rollout_workers={self.rollout_workers} is more than num_envs={self.num_envs}: "
                             f"every actor needs at least one game slot")
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ValueError(f"device must be cpu or cuda[:N], got {self.device!r}")

    def _set_up_best_response(self) -> None:
        """The probe's settings: only the probed player, as opponent and in evaluation, for a fixed budget.

        A setting the user changed to something else is an error, never silently replaced.
        """
        spec = self.best_response
        probe = {"scripted_opponents": (spec,), "eval_opponents": (spec,), "self_play_weight": 0.0,
                 "past_self_weight": 0.0, "scripted_weight": 1.0}
        defaults = {field.name: field.default for field in dataclasses.fields(TrainConfig)}
        self._require_settings(probe, f"best_response={spec!r} plays against that player alone")
        tables = [make_rules(self.rules, num_players=n) for n in self.num_players]
        for rules in tables:
            try:
                make_policy(spec, rules)
            except (CheckpointTableMismatch, ValueError) as error:
                raise ValueError(f"best_response={spec!r} cannot play rules {self.rules!r} at {rules.num_players} "
                                 f"players: {error}") from None
        try:
            start = exploiter_start(spec, self.best_response_start, tables)
        except (CheckpointTableMismatch, OSError) as error:
            raise ValueError(f"best_response_start={self.best_response_start!r}: {error}") from None
        if start.metadata is not None:  # the network's shape is the checkpoint's
            copied = {"architecture": start.metadata["architecture"],
                      "hidden_sizes": tuple(start.metadata["hidden_sizes"]),
                      "max_players": int(start.metadata["max_players"]),
                      "critic": "privileged" if start.has_privileged_critic else "shared"}
            self._require_settings(copied, f"the exploiter starts from {start.checkpoint}, whose network has "
                                           f"these settings")
        learning_rate = WARM_LEARNING_RATE if start.checkpoint else FRESH_LEARNING_RATE
        exploiter = {"learning_rate": learning_rate, "ent_coef": EXPLOITER_ENTROPY,
                     "final_eval_games": EXPLOITER_EVAL_GAMES, **EXPLOITER_UNREGULARIZED}
        for name, value in exploiter.items():  # the exploiter's own defaults, where the user left the trainer's
            if getattr(self, name) == defaults[name]:
                setattr(self, name, value)
        if self.total_steps == defaults["total_steps"]:
            self.total_steps = self.best_response_steps
        if self.run_dir == defaults["run_dir"]:
            self.run_dir = BEST_RESPONSE_RUN_DIR

    def _take_deck_defaults(self) -> None:
        """The deck's own defaults (`DECK_DEFAULTS`) for the settings left at the trainer's."""
        defaults = {field.name: field.default for field in dataclasses.fields(TrainConfig)}
        for name, value in DECK_DEFAULTS.get(self.rules, {}).items():
            if getattr(self, name) == defaults[name]:
                setattr(self, name, value)

    def _require_settings(self, settings: dict, why: str) -> None:
        """Set each of ``settings``; a ValueError saying ``why`` if the user set one to something else."""
        defaults = {field.name: field.default for field in dataclasses.fields(TrainConfig)}
        for name, value in settings.items():
            current = getattr(self, name)
            if current not in (defaults[name], value):
                raise ValueError(f"{why}: {name} must be left at its default or be {shown(value)}, got "
                                 f"{shown(current)}")
            setattr(self, name, value)

    @property
    def records_every_seat(self) -> bool:
        """Whether self-play games are trained on at every seat (`every_seat`, with ``auto`` resolved)."""
        pure_self_play = self.self_play_weight > 0 and self.past_self_weight == 0 and self.scripted_weight == 0
        return self.every_seat == "on" or (self.every_seat == "auto" and pure_self_play)

    @property
    def padded_players(self) -> int:
        return self.max_players or max(self.num_players)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def check_limit(name: str, value, low, high) -> None:
    """ValueError naming the setting and its range unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}, got {shown(value)}")


def check_spec(field_name: str, spec: str) -> None:
    """ValueError naming the field unless ``spec`` makes a player (a checkpoint is looked for on disk)."""
    try:
        make_policy(spec, make_rules("standard"))
    except CheckpointTableMismatch:
        return  # the spec is sound; whether it fits the run's rules is checked when the run starts
    except ValueError as error:
        raise ValueError(f"{field_name}: {error}") from None
    except OSError as error:
        raise ValueError(f"{field_name}: {error}") from None


def check_field_types(config: "TrainConfig") -> None:
    """Every field of the type its annotation says (`checked_value`), converted in place."""
    for field in dataclasses.fields(TrainConfig):
        setattr(config, field.name, checked_value(field.name, getattr(config, field.name)))


def checked_value(name: str, value):
    """``value`` as field ``name``'s type (tuples from lists too; ints for floats); ValueError naming the field.

    The one type check of every setting, wherever it comes from: Python, a TOML file, flags or a resumed run.
    """
    import math

    hint = typing.get_type_hints(TrainConfig)[name]
    if typing.get_origin(hint) is tuple:
        base = typing.get_args(hint)[0]
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ValueError(f"{name} must be a list of {base.__name__}, got {value!r}")
        return tuple(_checked_item(name, item, base) for item in value)
    value = _checked_item(name, value, hint)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def _checked_item(name: str, value, kind: type):
    if kind is float and (is_int(value) or isinstance(value, float)):
        return float(value)
    if kind is int and is_int(value):
        return int(value)
    if kind is bool and isinstance(value, bool):
        return value
    if kind not in (int, float, bool) and isinstance(value, kind):
        return value
    raise ValueError(f"{name} must be {kind.__name__}, got {shown(value)}")
    return value


def field_docs() -> dict[str, str]:
    """Each field's help text (from `setting`)."""
    return {field.name: field.metadata[HELP] for field in dataclasses.fields(TrainConfig)}

"""Training configuration: settings grouped by concern, each group a dataclass checked when it is made.

`TrainConfig` holds the groups: the run (`RunSettings`), PPO's update (`PPOSettings`), the regularizers
(`RegularizerSettings`), the opponents (`OpponentSettings`), evaluation (`EvaluationSettings`), the network
(`NetworkSettings`) and scale-out (`ScaleOutSettings`). A setting's name is unique across the groups, so a
user spells it flat: ``--magnet-coef`` on the command line, ``magnet_coef`` in a TOML file, in a resumed run's
saved settings and in `TrainConfig.of`. Every field carries its help text (`setting`), which
``rouba-train --help`` shows; the command line and settings files are read by `rouba_training.cli`.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass
from typing import Literal

from rouba_env.checks import is_int, shown
from rouba_env.players.checkpoint import MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH, CheckpointTableMismatch, network_fits
from rouba_env.evaluation.distributed import ray_address_problem
from rouba_env.players.registry import known_players, make_policy, parse_spec
from rouba_env.posterior import MAX_WORLDS, SEARCH_PLAYERS
from rouba_env.rules.config import make_rules
from rouba_env.rules.scoring import REWARD_MODES, TRAINING_REWARD
from rouba_training.best_response import (
    EXPLOITER_ENTROPY, EXPLOITER_EVAL_GAMES, FRESH_LEARNING_RATE, WARM_LEARNING_RATE, NetworkStart, checkpoint_start,
    exploiter_start, start_shape,
)

Schedule = Literal["constant", "linear", "power"]
"""How a coefficient moves over a run (`rouba_training.regularizers.scheduled`)."""
Magnet = Literal["none", "uniform", "ema"]
"""What the magnet KL pulls the policy towards (``none``: no magnet term)."""
EverySeat = Literal["auto", "on", "off"]
Architecture = Literal["rank", "mlp"]
Critic = Literal["shared", "privileged"]
PolicyObjective = Literal["clipped", "mirror_fit", "searched_mirror"]
Reward = Literal[REWARD_MODES]  # type: ignore[valid-type]
SCHEDULES = typing.get_args(Schedule)

LIMITS = {
    "seed": (0, 2**63 - 1),
    "max_players": (0, 8),
    "total_steps": (1, 10**12),
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
    "learning_rate_power": (0, 10),
    "schedule_power": (0, 10),
    "magnet_coef": (0, 100),
    "mirror_coef": (0, 1000),
    "support_coef": (0, 100),
    "support_until": (1e-6, 1),
    "weight_average": (0, 0.999999),
    "best_response_temperature": (1, 1024),
    "search_worlds": (1, MAX_WORLDS),
    "search_share": (0, 1),
    "search_cut": (0, 1000),
}
"""Allowed range (inclusive) of each numeric setting, checked when its group is made, whatever its source.

The network's sizes share the checkpoint loader's limits (`MAX_HIDDEN_WIDTH`, `MAX_HIDDEN_LAYERS`), so a run
never trains a network that could not be loaded. The bounds keep a run within one machine's memory and time:
``num_envs x rollout_steps`` decisions are held at once, and one update runs ``update_epochs`` passes."""
REMOVED_SETTINGS = {
    "policy_loss": ("ppo", "the NeuRD policy term is gone: the policy term is PPO's clipped surrogate"),
    "neurd_threshold": (6.0, "it set the NeuRD policy term, which is gone: the policy term is PPO's"),
    "neurd_clip": (100.0, "it set the NeuRD policy term, which is gone: the policy term is PPO's"),
    "magnet_interval": (50, "it refreshed the snapshot magnet, which was never run and is gone: --magnet ema (the "
                            "moving average of the weights) or uniform"),
    "play_average": (False, "playing the moving average of the weights is gone: the policy is the trained "
                            "network (--weight-average still feeds --magnet ema)"),
    "best_response_steps": (3_000_000, "an exploiter's budget is --total-steps N (3M unless given)"),
    "ray_address": ("", "it is now --ray ADDRESS (auto or HOST:6379; --ray local starts a Ray on this machine)"),
}
"""Settings of earlier versions that are gone: the value they had when unused, and what to do instead. A flag
or a TOML key naming one is refused with that line; a resumed run that held one at that value resumes, one
that set it otherwise is refused."""
REMOVED_CHOICES = {("magnet", "snapshot"): "the snapshot magnet was never run and is gone: --magnet ema (the "
                                           "moving average of the weights) or uniform"}
"""Values of a setting that are gone, and what to choose instead."""
PLAYER_SPEC_FIELDS = ("best_response", "scripted_opponents", "eval_opponents")
"""Fields that hold player specs (their help lists the known players), checked in this order (an exploiter's
opponents are its best_response)."""
COMMAND_LINE_ONLY = ("ray",)
"""Settings never taken from a file (a resumed run's or a TOML config): joining a cluster means trusting it,
so the user says so on the command line each time."""
NOT_RESUMED = ("device",)
"""Settings a resumed run never takes from its file: they belong to the machine it runs on now
(a run started on a GPU resumes on the CPU unless ``--device`` says otherwise)."""
BEST_RESPONSE_RUN_DIR = "runs/best_response"
"""Where a best-response probe goes unless run_dir is given."""
TINY_DECK_BUDGET = {"num_envs": 128, "total_steps": 1_000_000}
DECK_DEFAULTS = {"mini": TINY_DECK_BUDGET, "mini3": {"num_players": (3,), **TINY_DECK_BUDGET},
                 "mini4": {"num_players": (4,), **TINY_DECK_BUDGET}, "small3": {"num_players": (3,)}}
"""Per deck, the defaults of settings a run does not give: on the tiny decks (a game of a few moves) 1,024
games an update would be a few dozen updates in the whole run; a deck laid out for three or four seats plays
at that table. An exploiter (best_response) keeps its own budget, not the table size."""
DECK_TABLE = "num_players"
"""The deck default an exploiter keeps too: the table the deck is laid out for."""
EXPLOITER_UNREGULARIZED = {"magnet": "none", "magnet_coef": 0.0, "mirror_coef": 0.0, "weight_average": 0.0}
"""An exploiter is plain PPO against its frozen target: the default recipe's regularizers are off unless given."""
PROBE_SETTINGS = ("scripted_opponents", "eval_opponents", "self_play_weight", "past_self_weight", "scripted_weight")
"""An exploiter's settings that must hold its own values: it plays its target alone, as opponent and in
evaluation (a value given otherwise is refused)."""
EXPLOITER_LEARNING_RATES = f"{WARM_LEARNING_RATE:g} from a network start, {FRESH_LEARNING_RATE:g} fresh"
"""An exploiter's default learning rate, which depends on its start (`resolve_start`), as the help says it."""
GIVEN, DECK, EXPLOITER, START, DEFAULT = "given", "deck", "exploiter", "start", "default"
"""Where a setting's value came from (`TrainConfig.sources`): the user (a flag, a TOML key, a `TrainConfig.of`
argument, or a resumed run's saved settings, which keep the source they had), the deck's own default
(`DECK_DEFAULTS`), an exploiter's (`exploiter_defaults`), the checkpoint the network starts from
(`resolve_start`), or the trainer's default."""
SOURCES = (GIVEN, DECK, EXPLOITER, START, DEFAULT)
MIN_EVALUATIONS = 4
"""A run of at least this many updates is evaluated at least this many times (`TrainConfig.evaluation_due`)."""
LOCAL_RAY = "local"
"""``ray`` for a Ray started on this machine for the run."""
SEARCH_SETTINGS = ("search_worlds", "search_share", "search_cut")
"""The settings of policy_objective searched_mirror's search (refused with another objective)."""
HELP = "help"
"""Field metadata key of a setting's help text."""


def setting(default, help_text: str):
    """A settings field: its default and the help text that ``--help`` shows."""
    return dataclasses.field(default=default, metadata={HELP: help_text})


@dataclass
class RunSettings:
    """The run: where it writes, what it plays, how long, on what."""

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
    reward: Reward = setting(
        TRAINING_REWARD,
        "Training reward: margin (own score minus the others' mean, over the cards in play: a denser signal "
        "that learns faster), lead (own score minus the best other's: the same with 2 players; at 3+ it "
        'rewards beating the leader) or outcome (+1/0/-1). Evaluation always reports win rates.')
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


    def __post_init__(self) -> None:
        check_group(self)
        if len(set(self.num_players)) != len(self.num_players):
            raise ValueError(f"num_players must list each table size once, got {list(self.num_players)}")
        if not self.run_dir.strip():
            raise ValueError("run_dir must name a folder, got ''")
        try:
            make_rules(self.rules)
        except ValueError as error:
            raise ValueError(f"rules: {error}") from None
        if not self.num_players or any(not 2 <= n <= 8 for n in self.num_players):
            raise ValueError(f"num_players must list table sizes in 2..8, got {self.num_players}")
        for size in self.num_players:
            try:
                make_rules(self.rules, num_players=size)
            except ValueError as error:
                raise ValueError(f"rules {self.rules!r} at {size} players: {error}") from None
        if self.max_players and self.max_players < max(self.num_players):
            raise ValueError(f"max_players={self.max_players} is smaller than the largest table {max(self.num_players)}")
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ValueError(f"device must be cpu or cuda[:N], got {self.device!r}")


@dataclass
class PPOSettings:
    """PPO's update: the optimizer and its schedule, the advantage estimate, the loss weights."""

    learning_rate: float = setting(
        1e-3, 'Adam step size at the start; learning_rate_schedule says how it moves (by default linearly to '
        'learning_rate_floor, 0, over the run).')
    learning_rate_schedule: Schedule = setting(
        "linear", "How the learning rate moves: constant, linear (to learning_rate_floor at total_steps; a run "
        "carried on to more steps continues from where it is) or power (learning_rate * (1 + update)^-"
        "learning_rate_power, never below the floor).")
    learning_rate_floor: float = setting(0.0, 'The lowest learning rate a schedule reaches.')
    learning_rate_power: float = setting(0.5, "Exponent of the learning rate's power schedule.")
    gamma: float = setting(1.0, 'Discount; games are short and only their result counts.')
    gae_lambda: float = setting(0.95, "GAE's bias/variance trade-off.")
    update_epochs: int = setting(4, 'Passes over each batch.')
    minibatch_size: int = setting(
        2048, 'Learner decisions per gradient step; a batch smaller than this is one gradient step per epoch.')
    clip_coef: float = setting(0.2, "PPO's probability-ratio clip.")
    ent_coef: float = setting(0.0, 'Entropy bonus (over legal actions only).')
    vf_coef: float = setting(0.5, 'Weight of the value loss.')
    max_grad_norm: float = setting(0.5, 'Gradient norm clip.')
    policy_objective: PolicyObjective = setting(
        "clipped",
        "How the policy learns from a batch: clipped (PPO's clipped surrogate on the sampled advantages, the "
        "magnet and mirror KLs added as terms) or mirror_fit (an action-value head learns every action's return; "
        "each update takes the magnetic mirror-descent step in closed form at every sampled decision, from the "
        "collecting policy, the action values and the magnet, with step size 1 / mirror_coef and temperature "
        "magnet_coef, and fits the policy to it by cross-entropy; with critic privileged, action values that "
        "see the hidden cards learn the returns and the head learns every legal action's value from them) or "
        "searched_mirror (the same step on searched values: at each decision with a choice, search_worlds worlds "
        "drawn from the posterior the collecting policy's own moves imply, every legal move played out in each "
        "with that policy in both seats; pure self-play at two seats).")
    search_worlds: int = setting(
        16, "searched_mirror: worlds drawn per searched decision; every legal move is played out in each (a "
        "value's error falls as 1 / sqrt(worlds), its cost grows with it).")
    search_share: float = setting(
        1.0, "searched_mirror: the share (0, 1] of the decisions with a choice that are searched; the others "
        "do not move the policy.")
    search_cut: int = setting(
        0, "searched_mirror: end each playout after this many moves with the critic's estimate of the rest "
        "(0: play every playout to the end).")
    hand_coef: float = setting(
        0.0,
        "Weight of an auxiliary loss: the network also predicts every other hand and the deck per rank "
        "(squared error against the real cards during training); 0: no such head. The head is saved beside the "
        "policy, for a search that deals its imagined worlds by it; it never plays.")


    def __post_init__(self) -> None:
        check_group(self)
        if self.search_share <= 0:
            raise ValueError(f"search_share is the share of decisions searched, in (0, 1]: got {self.search_share}")
        if self.policy_objective != "searched_mirror":
            given = [name for name in SEARCH_SETTINGS if getattr(self, name) != DEFAULTS[name]]
            if given:
                raise ValueError(f"{given[0]}={getattr(self, given[0])} sets the search of policy_objective="
                                 f"searched_mirror, but policy_objective is {self.policy_objective}")
        elif self.search_cut and self.vf_coef == 0:
            raise ValueError(f"search_cut={self.search_cut} stands the critic's estimate for the rest of a playout, "
                             f"but vf_coef=0 leaves the critic untrained: give vf_coef above 0 or search_cut 0")
        if self.learning_rate_floor > self.learning_rate:
            raise ValueError(f"learning_rate_floor={self.learning_rate_floor} is above learning_rate="
                             f"{self.learning_rate}")
        if not 0 <= self.gae_lambda <= 1 or not 0 < self.gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1] and gae_lambda in [0, 1], got gamma={self.gamma} and "
                             f"gae_lambda={self.gae_lambda}")


@dataclass
class RegularizerSettings:
    """The KL terms that steer self-play towards an equilibrium (magnetic mirror descent)."""

    magnet: Magnet = setting(
        "ema",
        "Regularized self-play (magnetic mirror descent): the policy the magnet KL pulls towards: none, uniform "
        "(the uniform policy over the legal moves: an entropy bonus in KL form) or ema (the moving average of the "
        "weights, weight_average: a magnet that moves, so its pull ends at an equilibrium).")
    magnet_coef: float = setting(
        0.05, "Weight of KL(policy || magnet), exact over the legal moves: the mirror-descent step's temperature "
        "(the policy objectives mirror_fit and searched_mirror take the step in closed form at this temperature).")
    magnet_schedule: Schedule = setting("constant", 'How magnet_coef moves: constant, linear (to 0) or power.')
    mirror_coef: float = setting(
        0.1, "Weight of KL(policy || the policy that collected the batch), exact over the legal moves: the "
        "mirror-descent step's inverse step size (mirror_fit and searched_mirror take the step of size "
        "1 / mirror_coef in closed form).")
    mirror_schedule: Schedule = setting("constant", 'How mirror_coef moves: constant, linear (to 0) or power.')
    support_coef: float = setting(
        0.0, "Weight of KL(uniform || policy), exact over the legal moves: a barrier that keeps every legal "
        "move's probability away from 0 (its pull on a move grows as the move is dropped, where the entropy's "
        "fades). It biases the policy towards playing every move, so anneal it (support_schedule).")
    support_schedule: Schedule = setting("constant", 'How support_coef moves: constant, linear (to 0) or power.')
    schedule_power: float = setting(
        0.5, "Exponent of the regularizers' power schedules (magnet_coef, mirror_coef, support_coef: weight * "
        "(1 + update)^-schedule_power).")
    support_until: float = setting(
        1.0, "Share of the run the support term lasts (0..1]: its schedule runs over that share (linear "
        "reaches 0 there) and the term is off after it. A share of total_steps: a run carried on to more "
        "steps moves the point (and may turn the term on again).")
    weight_average: float = setting(
        0.99, 'Decay of an exponential moving average of the weights, updated after every update (0: none); the '
        'ema magnet.')


    def __post_init__(self) -> None:
        check_group(self)
        if (self.magnet == "none") != (self.magnet_coef == 0):
            raise ValueError(f"magnet={self.magnet!r} with magnet_coef={self.magnet_coef}: a magnet needs a weight "
                             f"above 0, and a weight needs a magnet (uniform or ema)")
        if self.magnet == "ema" and self.weight_average == 0:
            raise ValueError("magnet ema uses the moving average of the weights: set weight_average (its decay, "
                             "e.g. 0.99)")


@dataclass
class OpponentSettings:
    """Who the learner plays: itself, past selves, scripted players, or one frozen target."""

    self_play_weight: float = setting(1.0, 'Share of games whose other seats are played by the current policy.')
    every_seat: EverySeat = setting(
        "auto",
        "Train on every seat's decisions in games against the current policy, each with its own seat's reward "
        "(twice the data per game at 2 players): on, off, or auto (on when every game is such a game, "
        "self_play_weight the only weight above 0).")
    past_self_weight: float = setting(0.0, 'Share of games against a snapshot of an earlier self from the pool.')
    scripted_weight: float = setting(0.0, 'Share of games against a scripted player from scripted_opponents.')
    scripted_opponents: tuple[str, ...] = setting(
        ("heuristic", "greedy"),
        'Player specs of the scripted part of the opponent pool.')
    snapshot_interval: int = setting(20, 'Updates between snapshots of the learner added to the pool.')
    pool_size: int = setting(8, 'Most past snapshots kept (oldest dropped first).')
    best_response: str = setting(
        "",
        'Approximate best response: a player spec (e.g. checkpoint:2p) that an exploiter trains against, alone '
        '(no self-play, no snapshots), playing as it plays for users; the exploiter starts as a copy of it where '
        'it is a network (best_response_start). Evaluated against it at the start and the end on the same '
        'duplicate deals: the exploiter\'s seat-averaged margin is a lower bound on the target\'s exploitability. '
        'Runs total_steps (3M by default on every deck); learning_rate, ent_coef and final_eval_games left at the '
        'trainer\'s defaults take the exploiter\'s (2e-4 from a copy or 1e-3 fresh, 0, 10000), and the '
        'regularizers are off.')
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


    def __post_init__(self) -> None:
        check_group(self)
        weights = (self.self_play_weight, self.past_self_weight, self.scripted_weight)
        if min(weights) < 0 or sum(weights) <= 0:
            raise ValueError(f"opponent weights must be >= 0 and not all zero, got {weights}")
        if self.scripted_weight > 0 and not self.scripted_opponents:
            raise ValueError("scripted_weight > 0 needs at least one scripted_opponents spec")
        if not self.best_response and self.best_response_start != "auto":
            raise ValueError(f"best_response_start={self.best_response_start!r} says where an exploiter "
                             f"starts: it needs best_response (the player it exploits)")
        if self.best_response_temperature != DEFAULTS["best_response_temperature"]:
            if not self.best_response:
                raise ValueError(f"best_response_temperature={self.best_response_temperature} softens an "
                                 f"exploiter's network start: it needs best_response (the player it exploits)")
            if self.best_response_start == "fresh":
                raise ValueError(f"best_response_temperature={self.best_response_temperature} softens a network "
                                 f"start, but best_response_start='fresh' starts from no network")


@dataclass
class EvaluationSettings:
    """The periodic and final duplicate-deal evaluations."""

    eval_interval: int = setting(
        10, 'Updates between evaluations against eval_opponents (0: only at the end); the default run evaluates '
        'about ten times, for a learning curve, in about 2% of its time. A run too short for 4 evaluations at '
        'this interval is also evaluated at each quarter of total_steps.')
    eval_games: int = setting(200, 'Duplicate-deal games per opponent at each periodic evaluation.')
    final_eval_games: int = setting(2000, 'Duplicate-deal games per opponent at the end (0: skip).')
    eval_opponents: tuple[str, ...] = setting(
        ("random", "greedy", "heuristic"),
        'Players the learner is evaluated against.')


    def __post_init__(self) -> None:
        check_group(self)
        if self.eval_interval and not self.eval_games:
            raise ValueError(f"eval_interval={self.eval_interval} evaluates every so many updates, so eval_games "
                             f"must be at least 1 (or eval_interval 0)")
        if not self.eval_opponents and (self.eval_interval or self.final_eval_games):
            raise ValueError("eval_opponents is empty, but evaluations are asked for: name at least one opponent, "
                             "or evaluate nothing with --eval-interval 0 --final-eval-games 0")


@dataclass
class NetworkSettings:
    """The network's shape and its critic."""

    architecture: Architecture = setting(
        "rank",
        'Network: rank (one token per rank slot, the same weights for every rank, with a context of the '
        'rank-free entries; see rouba_env.players.network.RankNetwork) or mlp (one MLP over the whole '
        'observation).')
    hidden_sizes: tuple[int, ...] = setting(
        (128, 64),
        'For architecture rank, (context width, token width); for mlp, the widths of its hidden layers.')
    critic: Critic = setting(
        "shared",
        "Value estimate for PPO: shared (the actor's own value head, from the observation) or privileged "
        "(a critic that also sees every hand and the deck during training; the saved policy is the actor "
        "alone).")
    start_from: str = setting(
        "fresh",
        "Where the network starts: fresh, or a checkpoint spec (checkpoint:NAME or checkpoint:PATH, e.g. "
        "checkpoint:2p) whose actor and any privileged critic it copies, to train on from a good policy; a "
        "network start fixes architecture, hidden_sizes, max_players and critic to the checkpoint's. An "
        "approximate best response says where it starts with best_response_start.")


    def __post_init__(self) -> None:
        check_group(self)
        if not network_fits(self.hidden_sizes):
            raise ValueError(f"hidden_sizes must be 1..{MAX_HIDDEN_LAYERS} widths, each in 1..{MAX_HIDDEN_WIDTH} "
                             f"(what a checkpoint may hold), got {shown(list(self.hidden_sizes))}")
        if self.architecture == "rank" and len(self.hidden_sizes) != 2:
            raise ValueError(f"architecture rank takes two hidden_sizes (context width, token width), "
                             f"got {list(self.hidden_sizes)}")


@dataclass
class ScaleOutSettings:
    """Collecting on Ray actors (needs the ray extra)."""

    ray: str = setting(
        "",
        'Collect rollouts on Ray actors: local (a Ray started on this machine) or the address of a running '
        'cluster to join (auto, or HOST:6379); empty: no Ray.')
    rollout_workers: int = setting(
        2,
        'Ray rollout actors; each plays its share of num_envs with a CPU copy of the policy and the pool.')


    def __post_init__(self) -> None:
        check_group(self)
        if self.ray not in ("", LOCAL_RAY) and ray_address_problem(self.ray) is not None:
            raise ValueError(f"ray must be local, auto or HOST:PORT (empty: no Ray), got {self.ray!r}")

GROUPS = {"run": RunSettings, "ppo": PPOSettings, "regularizers": RegularizerSettings, "opponents": OpponentSettings,
          "evaluation": EvaluationSettings, "network": NetworkSettings, "scale_out": ScaleOutSettings}
"""`TrainConfig`'s groups, by attribute, in the order ``--help`` lists them."""
GROUP_OF = {field.name: group for group, kind in GROUPS.items() for field in dataclasses.fields(kind)}
"""Each setting's group."""


def setting_fields() -> list[dataclasses.Field]:
    """Every setting's field, group by group."""
    return [field for kind in GROUPS.values() for field in dataclasses.fields(kind)]


def setting_hints() -> dict[str, object]:
    """Each setting's type annotation (``Literal`` choices included)."""
    return {name: hint for kind in GROUPS.values() for name, hint in typing.get_type_hints(kind).items()}


DEFAULTS = {field.name: field.default for field in setting_fields()}
"""Each setting's default (before a deck's own, `DECK_DEFAULTS`)."""
HINTS = setting_hints()
"""Each setting's type, read once from the groups' annotations."""


@dataclass
class TrainConfig:
    """PPO self-play on the batched engine (defaults: the README's 2-player run), as groups of settings.

    The default recipe heads for an equilibrium: pure self-play with every seat's decisions trained on, no
    entropy bonus, a magnet KL towards the moving average of the network's own weights (the magnet moves,
    so its pull ends at an equilibrium rather than at a smoothed one) and the mirror step (a KL to the
    policy that collected the batch). On ``mini`` a run defaults to smaller updates and a shorter budget
    (`DECK_DEFAULTS`). The pool recipe (scripted and past opponents) is the shipped config ``pool_2p``. `TrainConfig.of` makes one from flat settings, as a user spells them."""

    run: RunSettings = dataclasses.field(default_factory=RunSettings)
    ppo: PPOSettings = dataclasses.field(default_factory=PPOSettings)
    regularizers: RegularizerSettings = dataclasses.field(default_factory=RegularizerSettings)
    opponents: OpponentSettings = dataclasses.field(default_factory=OpponentSettings)
    evaluation: EvaluationSettings = dataclasses.field(default_factory=EvaluationSettings)
    network: NetworkSettings = dataclasses.field(default_factory=NetworkSettings)
    scale_out: ScaleOutSettings = dataclasses.field(default_factory=ScaleOutSettings)
    sources: dict[str, str] = dataclasses.field(default_factory=dict, compare=False)
    """Where each setting's value came from (`SOURCES`). A config made from its groups directly takes every
    value as given, except those at the trainer's default."""

    @classmethod
    def of(cls, **settings) -> "TrainConfig":
        """A config from flat settings (``TrainConfig.of(rules="small", magnet_coef=0.1)``), each in its group,
        the others at their defaults (`resolve_defaults`); a ValueError names a setting that does not exist (or
        is gone, and what replaced it)."""
        return cls.from_settings(settings)

    @classmethod
    def from_settings(cls, settings: dict, sources: dict[str, str] | None = None) -> "TrainConfig":
        """`of`, with the source of each given setting (``sources``; GIVEN where it names none)."""
        check_names(settings)
        values, resolved = resolve_defaults(settings, sources)
        grouped: dict[str, dict] = {group: {} for group in GROUPS}
        for name, value in values.items():
            grouped[GROUP_OF[name]][name] = value
        return cls(**{group: GROUPS[group](**values) for group, values in grouped.items()}, sources=resolved)

    def __post_init__(self) -> None:
        for group, kind in GROUPS.items():
            if not isinstance(getattr(self, group), kind):
                raise ValueError(f"TrainConfig.{group} must be a {kind.__name__}, got {shown(getattr(self, group))}")
        if not self.sources:
            self.sources = {name: DEFAULT if value == DEFAULTS[name] else GIVEN for name, value in self.to_dict().items()}
        unknown = {name: source for name, source in self.sources.items() if name not in GROUP_OF or source not in SOURCES}
        if unknown or set(self.sources) != set(GROUP_OF):
            raise ValueError(f"TrainConfig.sources must name every setting's source, one of {', '.join(SOURCES)}; "
                             f"got {unknown or sorted(set(GROUP_OF) ^ set(self.sources))}")
        for field_name in PLAYER_SPEC_FIELDS:
            for spec in self.specs(field_name):
                check_spec_syntax(field_name, spec)
        if self.opponents.best_response:
            self._check_probe()
        if self.network.start_from != DEFAULTS["start_from"] and self.opponents.best_response:
            raise ValueError(f"start_from={self.network.start_from!r}: an approximate best response starts where "
                             f"best_response_start says; leave start_from out")
        if self.ppo.policy_objective in ("mirror_fit", "searched_mirror"):
            self._check_mirror_fit()
        if self.ppo.policy_objective == "searched_mirror":
            self._check_search()
        if self.scale_out.ray and self.scale_out.rollout_workers > self.run.num_envs:
            raise ValueError(f"rollout_workers={self.scale_out.rollout_workers} is more than num_envs="
                             f"{self.run.num_envs}: every actor needs at least one game slot")

    def specs(self, field_name: str) -> tuple[str, ...]:
        """The player specs a field of `PLAYER_SPEC_FIELDS` holds."""
        specs = self.get(field_name)
        return specs if isinstance(specs, tuple) else ((specs,) if specs else ())

    def _check_probe(self) -> None:
        """An exploiter plays its target alone: its `PROBE_SETTINGS` hold its own values."""
        spec = self.opponents.best_response
        for name in PROBE_SETTINGS:
            value = exploiter_defaults(spec)[name]
            if self.get(name) != value:
                raise ValueError(f"best_response={spec!r} plays against that player alone: {name} must be left "
                                 f"out or be {shown(value)}, got {shown(self.get(name))}")

    def _check_search(self) -> None:
        """searched_mirror weighs the other seat's hands by the collecting policy and plays both seats with it:
        pure self-play at a two-seat table whose hands come from the deck, in this process."""
        objective = "policy_objective=searched_mirror"
        if self.run.num_players != (SEARCH_PLAYERS,):
            raise ValueError(f"{objective} searches two-seat tables: num_players must be {SEARCH_PLAYERS}, got "
                             f"{list(self.run.num_players)}")
        if not self.records_every_seat or self.opponents.past_self_weight or self.opponents.scripted_weight:
            raise ValueError(f"{objective} plays both seats with the collecting policy: pure self-play "
                             f"(past_self_weight 0, scripted_weight 0, every_seat auto or on), got past_self_weight="
                             f"{self.opponents.past_self_weight}, scripted_weight={self.opponents.scripted_weight}, "
                             f"every_seat={self.opponents.every_seat!r}")
        if self.opponents.best_response:
            raise ValueError(f"{objective} trains by self-play; best_response trains against a frozen target")
        if self.scale_out.ray:
            raise ValueError(f"{objective} searches in this process: leave ray out")
        if make_rules(self.run.rules, num_players=SEARCH_PLAYERS).draw_from_deck:
            raise ValueError(f"{objective} needs hands dealt from the deck (rules {self.run.rules!r} draw from it "
                             f"card by card, which the posterior does not weigh)")

    def _check_mirror_fit(self) -> None:
        """The mirror fit's step needs a step size (mirror_coef above 0, its schedule constant), reads the
        actor's own action values (no hand head beside them) and has no clip."""
        if self.regularizers.mirror_coef <= 0:
            exploiter = (" (a best response turns the mirror term off unless --mirror-coef is given)"
                         if self.opponents.best_response else "")
            raise ValueError(f"policy_objective={self.ppo.policy_objective} takes its step size as 1 / mirror_coef: "
                             f"mirror_coef "
                             f"must be above 0, got {self.regularizers.mirror_coef}{exploiter}")
        clashing = {"mirror_schedule": ("constant", self.regularizers.mirror_schedule),
                    "hand_coef": (0.0, self.ppo.hand_coef)}
        for name, (allowed, value) in clashing.items():
            if value != allowed:
                raise ValueError(f"policy_objective={self.ppo.policy_objective} needs {name}={allowed!r}, got "
                                 f"{value!r}")
        if self.ppo.clip_coef != DEFAULTS["clip_coef"]:
            raise ValueError(f"clip_coef={self.ppo.clip_coef} has no effect with policy_objective="
                             f"{self.ppo.policy_objective} (its "
                             f"step is bounded by mirror_coef): leave it out")

    def get(self, name: str):
        """A setting by its flat name."""
        return getattr(getattr(self, GROUP_OF[name]), name)

    def network_start(self) -> NetworkStart | None:
        """Where the learner's network starts: an exploiter's start (`best_response_start`), `start_from`'s
        checkpoint, or None (fresh)."""
        rules_per_size = [make_rules(self.run.rules, num_players=n) for n in self.run.num_players]
        if self.opponents.best_response:
            return exploiter_start(self.opponents.best_response, self.opponents.best_response_start, rules_per_size)
        if self.network.start_from != DEFAULTS["start_from"]:
            return checkpoint_start(self.network.start_from, rules_per_size)
        return None

    @property
    def records_every_seat(self) -> bool:
        """Whether self-play games are trained on at every seat (`every_seat`, with ``auto`` resolved)."""
        opponents = self.opponents
        pure_self_play = (opponents.self_play_weight > 0 and opponents.past_self_weight == 0
                          and opponents.scripted_weight == 0)
        return opponents.every_seat == "on" or (opponents.every_seat == "auto" and pure_self_play)

    @property
    def padded_players(self) -> int:
        return self.run.max_players or max(self.run.num_players)

    def evaluation_due(self, update: int, steps_before: int, steps_after: int) -> bool:
        """Whether a periodic evaluation follows ``update`` (which took the run from ``steps_before`` to
        ``steps_after`` learner steps): every ``eval_interval`` updates, or, in a run too short to be evaluated
        `MIN_EVALUATIONS` times so (its updates estimated from one round of every slot for rollout_steps rounds),
        each time it passes a `MIN_EVALUATIONS`-th of total_steps."""
        interval = self.evaluation.eval_interval
        if not interval:
            return False
        if update % interval == 0:
            return True
        updates = math.ceil(self.run.total_steps / (self.run.num_envs * self.run.rollout_steps))
        if updates // interval >= MIN_EVALUATIONS:
            return False
        quarter = lambda steps: min(steps, self.run.total_steps) * MIN_EVALUATIONS // self.run.total_steps  # noqa: E731
        return quarter(steps_after) > quarter(steps_before)

    def to_dict(self) -> dict:
        """Every setting by its flat name (what a run saves, and what `TrainConfig.of` takes back)."""
        return {name: value for group in GROUPS for name, value in dataclasses.asdict(getattr(self, group)).items()}


def exploiter_defaults(target: str) -> dict:
    """An exploiter's own defaults, for the settings a run does not give: it plays ``target`` alone
    (`PROBE_SETTINGS`), as plain PPO (`EXPLOITER_UNREGULARIZED`, no entropy bonus), 10,000 games at the end,
    into its own folder. Its learning rate depends on where its network starts (`resolve_start`)."""
    return {"scripted_opponents": (target,), "eval_opponents": (target,), "self_play_weight": 0.0,
            "past_self_weight": 0.0, "scripted_weight": 1.0, "ent_coef": EXPLOITER_ENTROPY,
            "final_eval_games": EXPLOITER_EVAL_GAMES, "run_dir": BEST_RESPONSE_RUN_DIR, **EXPLOITER_UNREGULARIZED}


def resolve_defaults(settings: dict, sources: dict[str, str] | None = None) -> tuple[dict, dict[str, str]]:
    """(every setting's value, where each came from): the given ``settings`` as they are (labelled by
    ``sources``, else GIVEN), else an exploiter's own default (with best_response), else the deck's
    (`DECK_DEFAULTS`), else the trainer's.

    The one place where a default other than the trainer's applies (the network start's are resolved when
    the run starts, `resolve_start`): a given setting is never replaced."""
    target = checked_value("best_response", settings.get("best_response", DEFAULTS["best_response"]))
    rules = checked_value("rules", settings.get("rules", DEFAULTS["rules"]))
    layers = ((EXPLOITER, exploiter_defaults(target) if target else {}),
              (DECK, {name: value for name, value in DECK_DEFAULTS.get(rules, {}).items()
                      if not target or name == DECK_TABLE}), (DEFAULT, DEFAULTS))
    values, resolved = {}, {}
    for name in DEFAULTS:
        if name in settings:
            values[name], resolved[name] = settings[name], (sources or {}).get(name, GIVEN)
        else:
            source, defaults = next((source, defaults) for source, defaults in layers if name in defaults)
            values[name], resolved[name] = defaults[name], source
    return values, resolved


def other_defaults(name: str) -> str:
    """What ``--help`` adds to a setting's text: its defaults other than the trainer's, from what
    `resolve_defaults` reads."""
    def spelt(value) -> str:  # as the command line spells it: a table-size list as its numbers
        return " ".join(map(str, value)) if isinstance(value, tuple) else shown(value)

    notes = [f"on {deck}: {spelt(defaults[name])}" for deck, defaults in DECK_DEFAULTS.items() if name in defaults]
    if name == "learning_rate":
        notes.append(f"an exploiter: {EXPLOITER_LEARNING_RATES}")
    elif name not in PROBE_SETTINGS and exploiter_defaults("").get(name, DEFAULTS[name]) != DEFAULTS[name]:
        notes.append(f"an exploiter: {shown(exploiter_defaults('')[name])}")
    return f" Unless given, {'; '.join(notes)}." if notes else ""


def resolve_start(config: TrainConfig) -> TrainConfig:
    """The config a run starts with, once the files it names are read: every player spec made (a checkpoint
    read from disk), an exploiter's target checked on every table, and the settings the network's start fixes
    (its shape, from the checkpoint; an exploiter's learning rate, lower from a network start) taken where
    they were not given. A ValueError names a setting given otherwise, or a player that cannot play."""
    for field_name in PLAYER_SPEC_FIELDS:
        for spec in config.specs(field_name):
            check_spec(field_name, spec)
    values, sources = config.to_dict(), dict(config.sources)
    spec = config.opponents.best_response or config.network.start_from
    setting_name = "best_response_start" if config.opponents.best_response else "start_from"
    if config.opponents.best_response:
        for rules in (make_rules(config.run.rules, num_players=n) for n in config.run.num_players):
            try:
                make_policy(spec, rules)
            except (CheckpointTableMismatch, ValueError) as error:
                raise ValueError(f"best_response={spec!r} cannot play rules {config.run.rules!r} at "
                                 f"{rules.num_players} players: {error}") from None
    try:
        start = config.network_start()
    except (CheckpointTableMismatch, OSError, ValueError) as error:
        raise ValueError(f"{setting_name}={config.get(setting_name)!r}: {error}") from None
    if start is None:
        return config
    fixed = start_shape(start) if start.metadata is not None else {}
    for name, value in fixed.items():
        if sources[name] == GIVEN and values[name] != value:
            raise ValueError(f"the network starts from {start.checkpoint}, whose network has these settings: {name} "
                             f"must be left out or be {shown(value)}, got {shown(values[name])}")
        if sources[name] != GIVEN:
            values[name], sources[name] = value, START
    if config.opponents.best_response and sources["learning_rate"] != GIVEN:
        values["learning_rate"] = WARM_LEARNING_RATE if start.checkpoint else FRESH_LEARNING_RATE
        sources["learning_rate"] = EXPLOITER
    return TrainConfig.from_settings(values, sources)


def check_names(settings: dict) -> None:
    """A ValueError for a setting that does not exist: a removed one says what replaced it."""
    for name in settings:
        if name in REMOVED_SETTINGS:
            raise ValueError(f"{name} was removed: {REMOVED_SETTINGS[name][1]}")
        if name not in GROUP_OF:
            raise ValueError(f"unknown setting {name!r}; the settings are: {', '.join(sorted(GROUP_OF))}")


def check_group(group) -> None:
    """Every field of a settings group of the type its annotation says (converted in place) and in its range."""
    for field in dataclasses.fields(group):
        value = checked_value(field.name, getattr(group, field.name))
        setattr(group, field.name, value)
        if field.name in LIMITS:
            check_limit(field.name, value, *LIMITS[field.name])


def check_limit(name: str, value, low, high) -> None:
    """ValueError naming the setting and its range unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}, got {shown(value)}")


def check_spec_syntax(field_name: str, spec: str) -> None:
    """ValueError naming the field unless ``spec`` is written as a player spec of a known player (no file read)."""
    if spec != spec.strip():
        raise ValueError(f"{field_name}: {spec!r} has spaces around it; write the spec as {spec.strip()!r}")
    try:
        name = parse_spec(spec)[0]
    except ValueError as error:
        raise ValueError(f"{field_name}: {error}") from None
    if name not in known_players():
        raise ValueError(f"{field_name}: unknown player {name!r} in spec {spec!r}; known players: "
                         f"{', '.join(known_players())}")


def check_spec(field_name: str, spec: str) -> None:
    """ValueError naming the field unless ``spec`` makes a player (a checkpoint is read from disk)."""
    check_spec_syntax(field_name, spec)
    try:
        make_policy(spec, make_rules("standard"))
    except CheckpointTableMismatch:
        return  # the spec is sound; whether it fits the run's rules is checked when the run starts
    except ValueError as error:
        raise ValueError(f"{field_name}: {error}") from None
    except OSError as error:
        raise ValueError(f"{field_name}: {error}") from None


def checked_value(name: str, value):
    """``value`` as setting ``name``'s type (tuples from lists too; ints for floats; one of a ``Literal``'s
    choices); ValueError naming the setting.

    The one type check of every setting, wherever it comes from: Python, a TOML file, flags or a resumed run.
    """
    check_names({name: value})
    hint = HINTS[name]
    if typing.get_origin(hint) is tuple:
        base = typing.get_args(hint)[0]
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ValueError(f"{name} must be a list of {base.__name__}, got {value!r}")
        return tuple(_checked_item(name, item, base) for item in value)
    if typing.get_origin(hint) is Literal:
        choices = typing.get_args(hint)
        if (name, value) in REMOVED_CHOICES:
            raise ValueError(f"{name}={value!r} was removed: {REMOVED_CHOICES[name, value]}")
        if value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(choices)}, got {shown(value)}")
        return value
    value = _checked_item(name, value, hint)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def _checked_item(name: str, value, kind):
    if kind is float and (is_int(value) or isinstance(value, float)):
        return float(value)
    if kind is int and is_int(value):
        return int(value)
    if kind is bool and isinstance(value, bool):
        return value
    if kind not in (int, float, bool) and isinstance(value, kind):
        return value
    raise ValueError(f"{name} must be {kind.__name__}, got {shown(value)}")


def field_docs() -> dict[str, str]:
    """Each setting's help text (from `setting`)."""
    return {field.name: field.metadata[HELP] for field in setting_fields()}

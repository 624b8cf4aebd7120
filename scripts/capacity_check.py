"""Can the trainer's network hold an equilibrium of a solvable deck, and which layers hold a network back?

Measurements on one tree (``medium`` by default), each by exact NashConv:

- ``--distill``: the trainer's network (its default shape, or ``--architecture``/``--hidden-sizes``) fitted
  by supervised learning to CFR+'s strategy at every information set with a choice (cross-entropy, each set
  weighed by how often the equilibrium reaches it, mixed with a uniform share). If the fitted network's
  NashConv is far below what reinforcement learning reaches, the network can hold a better answer and the
  learning is what stops; if not, the network (its shape or its size) is the limit.
- ``--exact-pg``: the same network trained by magnetic mirror descent on exact action values (the tree's
  counterfactual values of the network's own strategy, no sampling): the trainer's update without its noise.
- ``--exact-fit``: the same, each step taken in closed form at every set (tabular MMD's step) and the network
  fitted to it by cross-entropy: the trainer's ``--policy-objective mirror_fit`` on exact values (or, with
  ``--pg-value-noise``, on exact values with errors of a given size, fresh each step or fixed for the run;
  with ``--pg-sampled-decisions``, fitted at a trainer's batch of sampled decisions rather than every set).
- ``--action-values RUN_DIR``: how well a mirror-fit run's action-value head (its ``checkpoint.pt``) knows
  the exact action values of the run's own policy.
- ``--searched-values RUN_DIR``: a searched_mirror run's values against the exact ones: one batch collected
  and searched by the run's network (from a copy of its ``checkpoint.pt``), each searched decision whose
  observation names one information set compared with the tree's exact action values of that network; and
  one update with the run's settings, by how far it moves the policy towards the exact closed-form step.
- ``--policy``: a trained checkpoint's NashConv broken down by depth: its strategy with CFR+'s put in at
  one layer of information sets at a time (what each layer costs it); and by how often its own self-play
  meets a set: CFR+'s put in at every set met less often than a threshold (whether the sets a trainer
  rarely samples cost it most).

Each curve point of ``--exact-pg`` and ``--exact-fit`` is the strategy that step starts from (the network
after the previous steps' updates).

Usage: python scripts/capacity_check.py --rules medium --cfr 300 --distill --json scripts/results/capacity_medium.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.files import write_atomically
from rouba_env.players.network import load_policy
from rouba_env.rules.config import preset
from rouba_env.solve.exploitability import (
    CFRPlus, counterfactual_action_values, mmd_step, moved_magnet, nash_conv, policy_strategy, reach_probabilities,
)
from rouba_env.solve.game_tree import GameTree
from rouba_training.network import make_network, masked_logits, numpy_policy, playing_network

DEFAULT_UNIFORM_SHARE = 0.5
"""The share of the weight spread evenly over the choice sets (the rest by how often play reaches them):
rarely reached sets still count, since a best response can steer play into them."""


def slots_of(tree: GameTree, infosets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slots, row, action): every strategy slot of ``infosets``, its set's row in ``infosets`` and its action."""
    position = np.full(tree.num_infosets, -1)
    position[infosets] = np.arange(len(infosets))
    slots = np.flatnonzero(position[tree.slot_infoset] >= 0)
    return slots, position[tree.slot_infoset[slots]], tree.slot_action[slots]


def dense(tree: GameTree, strategy: np.ndarray, infosets: np.ndarray) -> np.ndarray:
    """float32[len(infosets), actions]: ``strategy`` at ``infosets`` as rows over every action."""
    rows = np.zeros((len(infosets), tree.masks.shape[1]), np.float32)
    slots, row, action = slots_of(tree, infosets)
    rows[row, action] = strategy[slots]
    return rows


def network_nash_conv(tree: GameTree, network, rules, max_players: int) -> float:
    sampling = numpy_policy(network, rules, max_players, deterministic=False)
    return nash_conv(tree, policy_strategy(tree, sampling)[0])


def fresh_network(args, tree: GameTree, max_players: int):
    torch.manual_seed(args.seed)
    return make_network(args.architecture, tree.observations.shape[1], tree.masks.shape[1],
                        hidden_sizes=tuple(args.hidden_sizes), max_players=max_players)


def choice_sets(tree: GameTree) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
    """(the information sets with a choice, their observations, their legal moves) as the network reads them."""
    choice = np.flatnonzero(tree.infoset_size > 1)
    return (choice, torch.as_tensor(np.asarray(tree.observations[choice], np.float32)),
            torch.as_tensor(np.asarray(tree.masks[choice], bool)))


def set_weights(tree: GameTree, strategy: np.ndarray, choice: np.ndarray, *, uniform_share: float) -> torch.Tensor:
    """float32[len(choice)], summing to 1: each choice set's weight in a fit, ``uniform_share`` of it spread
    evenly and the rest by how often play under ``strategy`` reaches the set."""
    reach = reach_probabilities(tree, strategy)[choice]
    weight = (1 - uniform_share) * reach / reach.sum() + uniform_share / len(choice)
    return torch.as_tensor(weight / weight.sum(), dtype=torch.float32)


def fit_epoch(network, optimizer, *, obs: torch.Tensor, mask: torch.Tensor, goal: torch.Tensor,
              weight: torch.Tensor, batch: int, generator: torch.Generator) -> None:
    """One pass of minibatches minimizing the weighted cross-entropy of the network's policy to ``goal``."""
    for rows in torch.randperm(len(obs), generator=generator).split(batch):
        log_probs = torch.log_softmax(masked_logits(network(obs[rows])[0], mask[rows]), dim=1)
        cross_entropy = -(goal[rows] * torch.where(mask[rows], log_probs, 0.0)).sum(dim=1)
        loss = (weight[rows] * cross_entropy).sum() * len(obs) / len(rows)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def distill(args, tree: GameTree, target: np.ndarray, *, rules, max_players: int) -> list[dict]:
    choice, obs, mask = choice_sets(tree)
    weight = set_weights(tree, target, choice, uniform_share=args.uniform_share)
    goal = torch.as_tensor(dense(tree, target, choice))
    network = fresh_network(args, tree, max_players)
    optimizer = torch.optim.Adam(network.parameters(), lr=args.lr)
    generator = torch.Generator().manual_seed(args.seed)
    curve = []
    for epoch in range(1, args.epochs + 1):
        fit_epoch(network, optimizer, obs=obs, mask=mask, goal=goal, weight=weight, batch=args.batch,
                  generator=generator)
        if epoch % args.every == 0 or epoch == args.epochs:
            with torch.no_grad():
                log_probs = torch.log_softmax(masked_logits(network(obs)[0], mask), dim=1)
                kl = (goal * (torch.log(goal.clamp_min(1e-12)) - torch.where(mask, log_probs, 0.0))).sum(dim=1)
                mean_kl = float((weight * kl).sum())
            measured = network_nash_conv(tree, network, rules, max_players)
            curve.append({"epoch": epoch, "weighted_kl": mean_kl, "nash_conv": measured})
            print(f"distill epoch {epoch}: weighted KL {mean_kl:.5f}, NashConv {measured:.5f}", flush=True)
    return curve


def network_strategy(tree: GameTree, network, choice: np.ndarray, *, obs: torch.Tensor,
                     mask: torch.Tensor) -> tuple[np.ndarray, torch.Tensor]:
    """(strategy over every slot, probabilities at the choice sets): the network's sampling strategy (one
    legal move elsewhere)."""
    with torch.no_grad():
        probabilities = torch.softmax(masked_logits(network(obs)[0], mask), dim=1)
    strategy = tree.uniform_strategy()
    slots, row, action = slots_of(tree, choice)
    rows = probabilities.double().numpy()
    rows /= rows.sum(axis=1, keepdims=True)
    strategy[slots] = rows[row, action]
    return strategy, probabilities


def exact_policy_gradient(args, tree: GameTree, rules, max_players: int) -> list[dict]:
    """Magnetic mirror descent in the network's weights on exact counterfactual action values of its own
    strategy: each step maximizes, over the choice sets weighed as in `distill`, the expected action value
    minus KL to the last policy (times 1/step size) and KL to a magnet (times ``--pg-temperature``) that
    moves geometrically towards the policy by ``--pg-magnet-rate`` a step, as the tabular MMD does."""
    choice, obs, mask = choice_sets(tree)
    network = fresh_network(args, tree, max_players)
    optimizer = torch.optim.Adam(network.parameters(), lr=args.lr)
    magnet = None
    generator = torch.Generator().manual_seed(args.seed)
    curve = []
    for step in range(1, args.pg_steps + 1):
        strategy, old = network_strategy(tree, network, choice, obs=obs, mask=mask)
        if magnet is None:
            magnet = old.clone()
        values = torch.as_tensor(dense(tree, counterfactual_action_values(tree, strategy), choice))
        weight = set_weights(tree, strategy, choice, uniform_share=args.uniform_share)
        advantage = values - (old * values).sum(dim=1, keepdim=True)
        log_old, log_magnet = torch.log(old.clamp_min(1e-12)), torch.log(magnet.clamp_min(1e-12))
        for _ in range(args.pg_epochs):
            for rows in torch.randperm(len(choice), generator=generator).split(args.batch):
                log_probs = torch.where(mask[rows], torch.log_softmax(masked_logits(network(obs[rows])[0], mask[rows]),
                                                                      dim=1), 0.0)
                probs = log_probs.exp() * mask[rows]
                gain = (probs * advantage[rows]).sum(dim=1)
                kl_old = (probs * (log_probs - log_old[rows])).sum(dim=1)
                kl_magnet = (probs * (log_probs - log_magnet[rows])).sum(dim=1)
                objective = gain - kl_old / args.pg_step_size - args.pg_temperature * kl_magnet
                loss = -(weight[rows] * objective).sum() * len(choice) / len(rows)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        with torch.no_grad():
            moved = torch.where(mask, (1 - args.pg_magnet_rate) * log_magnet + args.pg_magnet_rate * log_old, -1e30)
            magnet = torch.softmax(moved, dim=1) * mask
        if step % args.every == 0 or step == args.pg_steps:
            measured = nash_conv(tree, strategy)
            curve.append({"step": step, "nash_conv": measured})
            print(f"exact policy gradient step {step}: NashConv {measured:.5f}", flush=True)
    return curve


def exact_mirror_fit(args, tree: GameTree, rules, max_players: int) -> list[dict]:
    """Magnetic mirror descent whose step is taken in closed form per set and then fitted: each step the
    tabular MMD step (`mmd_step`) from the network's strategy on its exact counterfactual action values, with
    a magnet that follows the network's strategy, is the target of ``--pg-epochs`` epochs of cross-entropy
    (warm-started). Against `exact_policy_gradient` it separates the mirror step from how well the weights
    follow it; against the tabular MMD it shows what the fit costs."""
    choice, obs, mask = choice_sets(tree)
    network = fresh_network(args, tree, max_players)
    optimizer = torch.optim.Adam(network.parameters(), lr=args.lr)
    generator = torch.Generator().manual_seed(args.seed)
    errors = ValueErrors(len(tree.slot_infoset), scale=args.pg_value_noise, fixed=args.pg_value_errors == "fixed",
                         seed=args.seed)
    sampling = np.random.default_rng([args.seed, 2])
    magnet = None
    curve = []
    for step in range(1, args.pg_steps + 1):
        strategy = network_strategy(tree, network, choice, obs=obs, mask=mask)[0]
        if magnet is None:
            reach = reach_probabilities(tree, strategy)
            choice_share = float(reach[choice].sum() / reach.sum())
            print(f"{choice_share:.1%} of a trainer's decisions hold a choice", flush=True)
        magnet = strategy if magnet is None else magnet
        values = counterfactual_action_values(tree, strategy) + errors.draw()
        target = mmd_step(tree.slot_start, strategy, values, magnet, step_size=args.pg_step_size,
                          temperature=args.pg_temperature)
        magnet = moved_magnet(tree.slot_start, magnet, strategy, rate=args.pg_magnet_rate)
        if args.pg_sampled_decisions:  # the step's target at the decisions a trainer's batch would hold
            by_reach = set_weights(tree, strategy, choice, uniform_share=0.0).double().numpy()
            counts = sampling.multinomial(args.pg_sampled_decisions, by_reach / by_reach.sum())
            weight = torch.as_tensor(counts / args.pg_sampled_decisions, dtype=torch.float32)
        else:
            weight = set_weights(tree, strategy, choice, uniform_share=args.uniform_share)
        goal = torch.as_tensor(dense(tree, target, choice))
        for _ in range(args.pg_epochs):
            fit_epoch(network, optimizer, obs=obs, mask=mask, goal=goal, weight=weight, batch=args.batch,
                      generator=generator)
        if step % args.every == 0 or step == args.pg_steps:
            measured = nash_conv(tree, strategy)
            target_nash_conv = nash_conv(tree, target)
            curve.append({"step": step, "nash_conv": measured, "target_nash_conv": target_nash_conv})
            print(f"exact mirror fit step {step}: NashConv {measured:.5f} (its closed-form target "
                  f"{target_nash_conv:.5f})", flush=True)
    return {"choice_share": choice_share, "curve": curve}


class ValueErrors:
    """Gaussian errors of standard deviation ``scale`` for ``size`` action values, as a learner's estimates
    err: drawn anew at every `draw` (they average out over the steps) or, ``fixed``, once for the run (a
    lasting bias); all zero at scale 0."""

    def __init__(self, size: int, *, scale: float, fixed: bool, seed: int):
        self.size, self.scale, self.fixed = size, scale, fixed
        self.fresh = np.random.default_rng(seed)
        self.lasting = np.random.default_rng([seed, 1]).normal(0.0, scale, size) if fixed else None

    def draw(self) -> np.ndarray:
        if self.scale == 0:
            return np.zeros(self.size)
        return self.lasting if self.fixed else self.fresh.normal(0.0, self.scale, size=self.size)


def action_value_check(tree: GameTree, run_dir: str, *, rules_name: str, max_players: int) -> dict:
    """The run's action-value head against the exact counterfactual action values of its policy (sampling):
    over the choice sets, weighed by how often the policy reaches them, the correlation and regression slope
    of each legal action's advantage (its value less the policy's mean) and the mean error of the state value."""
    from pathlib import Path

    from rouba_training.run_folder import read_resume_file

    saved = read_resume_file(Path(run_dir))
    config = saved["config"]
    seats = int(config["max_players"]) or max(config["num_players"])  # 0: the most players of its tables
    if config["rules"] != rules_name or seats != max_players:
        raise SystemExit(f"--action-values {run_dir}: the run trained rules {config['rules']!r} for {seats} "
                         f"players; this tree is {rules_name!r} for {max_players}")
    if config.get("policy_objective") != "mirror_fit":
        raise SystemExit(f"--action-values {run_dir}: the run has no action-value head (policy_objective "
                         f"{config.get('policy_objective', 'clipped')!r}, not 'mirror_fit')")
    trained = make_network(config["architecture"], tree.observations.shape[1], tree.masks.shape[1],
                           hidden_sizes=tuple(config["hidden_sizes"]), max_players=max_players,
                           critic=config.get("critic", "shared"),
                           hidden_size=ObservationEncoder(tree.rules, max_players).hidden_size, action_values=True)
    trained.load_state_dict(saved["network"])
    network = playing_network(trained)
    choice, obs, mask = choice_sets(tree)
    strategy, probabilities = network_strategy(tree, network, choice, obs=obs, mask=mask)
    exact = dense(tree, counterfactual_action_values(tree, strategy), choice)
    with torch.no_grad():
        head = torch.cat([network.forward_with_action_values(part)[2] for part in obs.split(8192)]).numpy()
    policy, legal = probabilities.numpy(), mask.numpy()
    reach = reach_probabilities(tree, strategy)[choice]
    exact_advantage = (exact - (policy * exact).sum(axis=1, keepdims=True))[legal]
    head_advantage = (head - (policy * head).sum(axis=1, keepdims=True))[legal]
    weight = np.broadcast_to(reach[:, None], legal.shape)[legal]
    covariance = np.cov(exact_advantage, head_advantage, aweights=weight)
    state_error = np.abs((policy * exact).sum(axis=1) - (policy * head).sum(axis=1))
    result = {"run": run_dir, "learner_steps": int(saved["learner_steps"]), "nash_conv": nash_conv(tree, strategy),
              "advantage_correlation": float(covariance[0, 1] / np.sqrt(covariance[0, 0] * covariance[1, 1])),
              "advantage_slope": float(covariance[0, 1] / covariance[0, 0]),
              "exact_advantage_std": float(np.sqrt(covariance[0, 0])),
              "head_advantage_std": float(np.sqrt(covariance[1, 1])),
              "advantage_error_std": float(np.sqrt(covariance[0, 0] + covariance[1, 1] - 2 * covariance[0, 1])),
              "state_value_error": float(np.average(state_error, weights=reach))}
    print(f"{run_dir} at {result['learner_steps']} steps: NashConv {result['nash_conv']:.5f}; its head's "
          f"advantages against the exact ones: correlation {result['advantage_correlation']:.3f}, slope "
          f"{result['advantage_slope']:.3f}; state values off by {result['state_value_error']:.4f}", flush=True)
    return result


def searched_value_check(tree: GameTree, run_dir: str, *, rules_name: str) -> dict:
    """A searched_mirror run's searched values and its update against the exact values (see the module)."""
    import copy
    import shutil
    import tempfile
    from pathlib import Path

    from rouba_training.config import TrainConfig
    from rouba_training.losses import mirror_fit_target
    from rouba_training.ppo import whole_log_probs, ppo_update
    from rouba_training.run_folder import read_resume_file
    from rouba_training.searched_values import NetworkPlayer
    from rouba_training.trainer import Trainer

    with tempfile.TemporaryDirectory() as scratch:  # the run's own folder is never written
        shutil.copy(Path(run_dir) / "checkpoint.pt", scratch)
        saved = read_resume_file(Path(scratch))
        settings = {key: tuple(value) if isinstance(value, list) else value for key, value in saved["config"].items()}
        config = TrainConfig.of(**{**settings, "run_dir": scratch, "progress": False, "ray": ""})
        if config.ppo.policy_objective != "searched_mirror" or config.run.rules != rules_name:
            raise SystemExit(f"--searched-values {run_dir}: not a searched_mirror run on {rules_name!r}")
        trainer = Trainer(config, resume=True, saved=saved)
        network = trainer.learner.network.eval()
        batch = trainer.collector.collect(network)
        regularization = trainer.regularization()
        trainer.writer.close()
    strategy = policy_strategy(tree, NetworkPlayer(network, tree.rules, tree.rules.num_players,
                                                   device=torch.device("cpu")))[0]
    exact_values = counterfactual_action_values(tree, strategy)
    weights = np.random.default_rng(0).standard_normal(tree.observations.shape[1])
    by_key: dict[float, list[int]] = {}
    for infoset, key in enumerate((np.asarray(tree.observations, np.float64) @ weights).tolist()):
        by_key.setdefault(key, []).append(infoset)
    searched = np.flatnonzero(batch.searched)
    named = [by_key.get(key, []) for key in (batch.obs[searched].astype(np.float64) @ weights).tolist()]
    rows = np.array([row for row, sets in zip(searched, named) if len(sets) == 1], dtype=np.int64)
    sets = np.array([sets[0] for sets in named if len(sets) == 1], dtype=np.int64)
    exact = np.zeros((len(rows), batch.mask.shape[1]))
    for i, infoset in enumerate(sets.tolist()):
        slots = tree.slot_start[infoset] + np.arange(tree.infoset_size[infoset])
        exact[i, tree.slot_action[slots]] = exact_values[slots]
    legal = torch.as_tensor(batch.mask[rows]).bool()

    def advantages(values: torch.Tensor) -> torch.Tensor:
        values = torch.where(legal, values, 0.0)
        return torch.where(legal, values - values.sum(-1, keepdim=True) / legal.sum(-1, keepdim=True), 0.0)

    exact_q = torch.as_tensor(exact)
    searched_q = torch.as_tensor(np.nan_to_num(batch.searched_values[rows]), dtype=torch.float64)
    error = (advantages(searched_q) - advantages(exact_q))[legal]
    obs = torch.as_tensor(batch.obs[rows])
    collecting = whole_log_probs(network, obs, legal)
    magnet = (None if regularization.magnet is None else whole_log_probs(regularization.magnet, obs, legal))
    goal = mirror_fit_target(exact_q.float(), collecting, magnet, legal, step_size=1.0 / regularization.mirror_coef,
                             temperature=regularization.magnet_coef)
    goal_log = torch.where(legal, goal.clamp_min(1e-30).log(), 0.0)

    def to_goal(log_probs: torch.Tensor) -> float:
        return float((goal * (goal_log - torch.where(legal, log_probs, 0.0))).sum(-1).mean())

    updated = copy.deepcopy(network)
    optimizer = torch.optim.Adam(updated.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
    optimizer.load_state_dict(saved["optimizer"])
    ppo_update(updated, optimizer, batch, ppo=config.ppo, regularization=regularization,
               generator=torch.Generator().manual_seed(0), device=torch.device("cpu"), update=saved["update"] + 1)
    result = {"run": run_dir, "update": int(saved["update"]), "nash_conv": nash_conv(tree, strategy),
              "searched_decisions": int(len(searched)), "compared": int(len(rows)),
              "advantage_error_rms": float(error.pow(2).mean().sqrt()),
              "exact_advantage_mean_size": float(advantages(exact_q)[legal].abs().mean()),
              "kl_to_exact_step_before": to_goal(collecting),
              "kl_to_exact_step_after": to_goal(whole_log_probs(updated.eval(), obs, legal))}
    print(f"{run_dir} at update {result['update']}: NashConv {result['nash_conv']:.5f}; searched advantages err by "
          f"{result['advantage_error_rms']:.4f} (rms) where the exact ones average {result['exact_advantage_mean_size']:.4f}; "
          f"one update moves the policy's KL to the exact step from {result['kl_to_exact_step_before']:.6f} to "
          f"{result['kl_to_exact_step_after']:.6f}", flush=True)
    return result


def breakdown(tree: GameTree, path: str, target: np.ndarray) -> dict:
    policy = load_policy(path, tree.rules, deterministic=False)
    strategy = policy_strategy(tree, policy)[0]
    slot_layer = tree.infoset_layer[tree.slot_infoset]
    rows = {"policy": path, "nash_conv": nash_conv(tree, strategy), "layers": []}
    print(f"{path}: NashConv {rows['nash_conv']:.5f}", flush=True)
    for depth in range(len(tree.layers)):
        here = slot_layer == depth
        if not (tree.infoset_size[tree.slot_infoset[here]] > 1).any():
            continue
        patched = nash_conv(tree, np.where(here, target, strategy))
        kept_only = nash_conv(tree, np.where(here, strategy, target))
        choices = int((tree.infoset_size[tree.infoset_layer == depth] > 1).sum())
        rows["layers"].append({"depth": depth, "choice_sets": choices, "equilibrium_here": patched,
                               "network_only_here": kept_only})
        print(f"depth {depth} ({choices} choice sets): CFR+ here {patched:.5f}; the network only here "
              f"{kept_only:.5f}", flush=True)
    rows["reach"] = reach_breakdown(tree, strategy, target)
    return rows


REACH_THRESHOLDS = (1e-7, 1e-6, 1e-5, 1e-4, 1e-3)
"""How often self-play meets a choice set, below which `reach_breakdown` puts CFR+'s strategy in."""


def reach_breakdown(tree: GameTree, strategy: np.ndarray, target: np.ndarray) -> list[dict]:
    """Whether the rarely met choice sets cost the network most: for each of `REACH_THRESHOLDS`, its
    NashConv with CFR+'s strategy put in at the choice sets that its own self-play reaches less often than
    that, and what share of the sets and of a trainer's samples (self-play's visits) they are."""
    reach = reach_probabilities(tree, strategy)
    choice = tree.infoset_size > 1
    slot_set = tree.slot_infoset
    rows = []
    for threshold in REACH_THRESHOLDS:
        rare = choice & (reach < threshold)
        patched = nash_conv(tree, np.where(rare[slot_set], target, strategy))
        row = {"below_reach": threshold, "choice_sets": int(rare.sum()), "set_share": float(rare.sum() / choice.sum()),
               "sample_share": float(reach[rare].sum() / reach[choice].sum()), "equilibrium_there": patched}
        rows.append(row)
        print(f"sets met less often than {threshold:g} ({row['set_share']:.1%} of the choice sets, "
              f"{row['sample_share']:.2%} of the visits): CFR+ there {patched:.5f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="medium")
    parser.add_argument("--cfr", type=int, default=300, help="CFR+ iterations for the equilibrium")
    parser.add_argument("--distill", action="store_true")
    parser.add_argument("--exact-pg", action="store_true")
    parser.add_argument("--exact-fit", action="store_true",
                        help="mirror descent on exact values, each step's closed-form target fitted by cross-entropy")
    parser.add_argument("--policy", help="a checkpoint folder to break down by depth")
    parser.add_argument("--action-values", metavar="RUN_DIR",
                        help="a mirror-fit run folder whose action-value head to check against the exact values")
    parser.add_argument("--searched-values", metavar="RUN_DIR",
                        help="a searched_mirror run folder whose searched values and update to check against the "
                             "exact values")
    parser.add_argument("--architecture", default="rank", choices=("rank", "mlp"))
    parser.add_argument("--hidden-sizes", type=int, nargs="+", default=[128, 64])
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--pg-steps", type=int, default=200, help="mirror steps of --exact-pg and --exact-fit")
    parser.add_argument("--pg-epochs", type=int, default=4, help="epochs of Adam per step (both)")
    parser.add_argument("--pg-step-size", type=float, default=1.0, help="the mirror step size (both)")
    parser.add_argument("--pg-temperature", type=float, default=0.05, help="the magnet's weight (both)")
    parser.add_argument("--pg-magnet-rate", type=float, default=0.1, help="how far the magnet moves a step (both)")
    parser.add_argument("--pg-value-noise", type=float, default=0.0,
                        help="--exact-fit: the standard deviation of Gaussian errors added to every exact "
                             "action value each step (how accurate the values must be)")
    parser.add_argument("--pg-value-errors", choices=("fresh", "fixed"), default="fresh",
                        help="--pg-value-noise's errors drawn anew each step (they average out over the steps) "
                             "or once for the run (a learner's lasting bias)")
    parser.add_argument("--pg-sampled-decisions", type=int, default=0,
                        help="--exact-fit: fit each step at this many decisions with a choice, drawn by how often "
                             "play reaches each set (a trainer's batch), not at every set weighed by "
                             "--uniform-share; 0: every set")
    parser.add_argument("--uniform-share", type=float, default=DEFAULT_UNIFORM_SHARE,
                        help="share of each set's weight spread evenly over the choice sets (0: by reach only)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.cfr < 1 or args.epochs < 1 or args.batch < 1 or args.every < 1 or args.pg_steps < 1:
        parser.error("--cfr, --epochs, --batch, --every and --pg-steps must be at least 1")
    fit_only = {"--pg-value-noise": args.pg_value_noise > 0, "--pg-sampled-decisions": args.pg_sampled_decisions > 0,
                "--pg-value-errors fixed": args.pg_value_errors == "fixed"}
    for flag, given in fit_only.items():
        if given and not args.exact_fit:
            parser.error(f"{flag} changes --exact-fit only: give --exact-fit too")
    if args.pg_value_errors == "fixed" and args.pg_value_noise == 0:
        parser.error("--pg-value-errors fixed needs a --pg-value-noise above 0")
    if args.pg_sampled_decisions < 0:
        parser.error(f"--pg-sampled-decisions must be at least 0, got {args.pg_sampled_decisions}")
    if args.pg_value_noise < 0:
        parser.error(f"--pg-value-noise must be at least 0, got {args.pg_value_noise}")
    if not 0 <= args.uniform_share <= 1:
        parser.error(f"--uniform-share must be in [0, 1], got {args.uniform_share}")
    rules = preset(args.rules)
    started = time.perf_counter()
    tree = GameTree(rules)
    print(f"tree: {tree.num_infosets} information sets in {time.perf_counter() - started:.0f} s", flush=True)
    solver = CFRPlus(tree)
    for _ in range(args.cfr - 1):
        solver.iterate(measure=False)
    equilibrium_nash_conv = solver.iterate(measure=True)
    target = solver.average_strategy()
    print(f"CFR+ {args.cfr} iterations: NashConv {equilibrium_nash_conv:.6f}", flush=True)
    result = {"rules": args.rules, "cfr_iterations": args.cfr, "cfr_nash_conv": equilibrium_nash_conv,
              "architecture": args.architecture, "hidden_sizes": args.hidden_sizes, "seed": args.seed,
              "uniform_share": args.uniform_share}
    torch.set_num_threads(1)
    if args.policy:
        result["breakdown"] = breakdown(tree, args.policy, target)
    if args.action_values:
        result["action_values"] = action_value_check(tree, args.action_values, rules_name=args.rules,
                                                     max_players=rules.num_players)
    if args.searched_values:
        result["searched_values"] = searched_value_check(tree, args.searched_values, rules_name=args.rules)
    if args.distill:
        result["distill"] = {"epochs": args.epochs, "batch": args.batch, "lr": args.lr,
                             "curve": distill(args, tree, target, rules=rules, max_players=rules.num_players)}
    if args.exact_pg:
        result["exact_pg"] = {"steps": args.pg_steps, "epochs": args.pg_epochs, "step_size": args.pg_step_size,
                              "temperature": args.pg_temperature, "magnet_rate": args.pg_magnet_rate,
                              "lr": args.lr, "curve": exact_policy_gradient(args, tree, rules, rules.num_players)}
    if args.exact_fit:
        result["exact_fit"] = {"steps": args.pg_steps, "epochs": args.pg_epochs, "step_size": args.pg_step_size,
                               "value_noise": args.pg_value_noise, "value_errors": args.pg_value_errors,
                               "sampled_decisions": args.pg_sampled_decisions,
                               "temperature": args.pg_temperature, "magnet_rate": args.pg_magnet_rate,
                               "lr": args.lr, **exact_mirror_fit(args, tree, rules, rules.num_players)}
    result["seconds"] = time.perf_counter() - started
    if args.json:
        write_atomically(args.json, json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""CleanRL-style PPO in one file: a masked actor-critic against ``heuristic`` on the batched vector env.

    pip install -e ".[train]"                       # torch
    python examples/cleanrl_ppo.py                  # about a minute on 2 cores
    python examples/cleanrl_ppo.py --total-timesteps 2000000 --opponent greedy

Collects with ``gymnasium.make_vec("RoubaMonte-v0")`` (N games on the batched
engine, the opponents played in batch, same-step autoreset), trains PPO with
illegal actions masked out of the policy, then reports the trained policy's
win rate against the opponent from the duplicate-deal evaluator, with its
Wilson 95% interval. Everything the loop needs is in this file; compare
CleanRL's ``ppo.py``.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import gymnasium
import numpy as np
import tyro

import rouba_env
from rouba_env.players.base import BasePolicy


@dataclasses.dataclass
class Args:
    total_timesteps: int = 200_000
    """learner decisions to train for"""
    num_envs: int = 128
    """games collected in parallel"""
    num_steps: int = 32
    """decisions per game per rollout"""
    opponent: str = "heuristic"
    """player spec of the other seats"""
    learning_rate: float = 2.5e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 4
    num_minibatches: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    eval_games: int = 2000
    """duplicate-deal games of the final evaluation"""
    seed: int = 1


def parse_args(argv=None) -> Args:
    """Flags from the dataclass fields (``--total-timesteps``, ...), made by tyro as in CleanRL."""
    return tyro.cli(Args, args=argv, description=__doc__.split("\n\n")[0])


def problem_with(args: Args) -> str | None:
    """What is wrong with the settings, before any work starts (None: nothing)."""
    for name in ("total_timesteps", "num_envs", "num_steps", "update_epochs", "num_minibatches", "eval_games"):
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
    batch_size = args.num_envs * args.num_steps
    if args.num_minibatches > batch_size:
        return f"--num-minibatches {args.num_minibatches} is more than the {batch_size} decisions of a batch"
    if args.total_timesteps < batch_size:
        return (f"--total-timesteps {args.total_timesteps} is less than one batch (--num-envs x --num-steps = "
                f"{batch_size}); training goes by whole batches")
    if not (0.0 < args.gamma <= 1.0 and 0.0 <= args.gae_lambda <= 1.0):
        return f"--gamma must be in (0, 1] and --gae-lambda in [0, 1], got {args.gamma} and {args.gae_lambda}"
    for name in ("learning_rate", "clip_coef", "max_grad_norm"):
        if not getattr(args, name) > 0:
            return f"--{name.replace('_', '-')} must be above 0, got {getattr(args, name)}"
    for name in ("ent_coef", "vf_coef"):
        if not getattr(args, name) >= 0:
            return f"--{name.replace('_', '-')} must be 0 or more, got {getattr(args, name)}"
    return None


def main(argv=None) -> int:
    args = parse_args(argv)
    problem = problem_with(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        import torch
        from torch import nn
    except ImportError:
        print("error: this example needs torch: pip install -e '.[train]'", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    try:
        envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=args.num_envs, opponents=args.opponent)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    obs_size = envs.single_observation_space.shape[0]
    num_actions = envs.single_action_space.n

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(obs_size, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh())
            self.actor = nn.Linear(256, num_actions)
            self.critic = nn.Linear(256, 1)

        def value(self, x):
            return self.critic(self.body(x)).squeeze(-1)

        def action_and_value(self, x, mask, action=None):
            hidden = self.body(x)
            logits = self.actor(hidden).masked_fill(~mask, -1e9)  # illegal actions get no probability
            dist = torch.distributions.Categorical(logits=logits)
            if action is None:
                action = dist.sample()
            return action, dist.log_prob(action), dist.entropy(), self.critic(hidden).squeeze(-1)

    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    shape = (args.num_steps, args.num_envs)
    obs = torch.zeros(shape + (obs_size,))
    masks = torch.zeros(shape + (num_actions,), dtype=torch.bool)
    actions = torch.zeros(shape, dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros(shape) for _ in range(4))

    next_obs, info = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.as_tensor(next_obs), torch.as_tensor(info["action_mask"].astype(bool))
    next_done = torch.zeros(args.num_envs)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    updates = args.total_timesteps // batch_size  # whole batches (problem_with: at least one)
    finished: list[float] = []
    started = time.perf_counter()
    for update in range(1, updates + 1):
        optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (update - 1) / updates)
        for step in range(args.num_steps):
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.action_and_value(next_obs, next_mask)
            actions[step], logprobs[step], values[step] = action, logprob, value
            next_obs, reward, terminated, truncated, info = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            finished += reward[terminated].tolist()
            next_obs = torch.as_tensor(next_obs)
            next_mask = torch.as_tensor(info["action_mask"].astype(bool))
            next_done = torch.as_tensor(terminated | truncated, dtype=torch.float32)

        with torch.no_grad():  # GAE; a row that ended was reset in the same step (dones[t + 1] cuts it)
            next_value = agent.value(next_obs)
            advantages = torch.zeros(shape)
            last = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    not_done, following = 1.0 - next_done, next_value
                else:
                    not_done, following = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * following * not_done - values[t]
                advantages[t] = last = delta + args.gamma * args.gae_lambda * not_done * last
            returns = advantages + values

        b_obs, b_masks = obs.reshape(batch_size, obs_size), masks.reshape(batch_size, num_actions)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        for _ in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for start in range(0, batch_size, minibatch_size):
                mb = order[start:start + minibatch_size]
                _, new_logprob, entropy, new_value = agent.action_and_value(b_obs[mb], b_masks[mb], b_actions[mb])
                ratio = (new_logprob - b_logprobs[mb]).exp()
                advantage = b_advantages[mb]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                policy_loss = torch.max(-advantage * ratio,
                                        -advantage * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                value_loss = 0.5 * ((new_value - b_returns[mb]) ** 2).mean()
                loss = policy_loss - args.ent_coef * entropy.mean() + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        if update % 10 == 0 or update == updates:
            recent = finished[-2000:]
            print(f"update {update}/{updates}: {update * batch_size} steps, "
                  f"{update * batch_size / (time.perf_counter() - started):.0f} steps/s, "
                  f"mean reward of the last {len(recent)} games {np.mean(recent) if recent else 0:+.3f}")
    envs.close()

    class TrainedPolicy(BasePolicy):
        """The agent's most likely legal action, as a rouba_env player (batched: numpy in, numpy out)."""

        name = "cleanrl_ppo"
        plays_in_batch = True

        def act_batch(self, obs, mask, rng):
            obs, legal = self.checked(obs, mask)
            with torch.no_grad():
                logits = agent.actor(agent.body(torch.as_tensor(obs))).numpy()
            return np.where(legal, logits, -np.inf).argmax(axis=1).astype(np.int64)

    result = rouba_env.evaluate([TrainedPolicy(rouba_env.preset("standard")), args.opponent],
                                games=args.eval_games, seed=args.seed)
    stats = result.players[0]
    print(f"win rate vs {args.opponent}: {stats.win_rate:.1%} [{stats.win_low:.1%}, {stats.win_high:.1%}] "
          f"(Wilson 95%) over {stats.games} duplicate games")
    return 0


if __name__ == "__main__":
    sys.exit(main())

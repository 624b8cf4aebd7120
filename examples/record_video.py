#!/usr/bin/env python
"""Record games as videos with Gymnasium's ``RecordVideo`` (``render_mode="rgb_array"``).

    pip install moviepy          # RecordVideo writes the videos with it (the dev extra brings it)
    python examples/record_video.py --episodes 2 --folder runs/videos

Each frame shows the table from the learner's seat: every pile as a stack
with its size, the table cards, the deck, the learner's hand face up and the
other hands face down. The learner here plays random legal moves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium
import numpy as np

import rouba_env  # noqa: F401  (registers RoubaMonte-v0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2, help="games to record")
    parser.add_argument("--folder", type=Path, default=Path("runs") / "videos", help="where the videos go")
    parser.add_argument("--opponents", default="heuristic", help="player spec of the other seat")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("error: RecordVideo needs moviepy: pip install moviepy", file=sys.stderr)
        return 2
    env = gymnasium.make("RoubaMonte-v0", opponents=args.opponents, render_mode="rgb_array")
    env = gymnasium.wrappers.RecordVideo(env, str(args.folder), episode_trigger=lambda episode: True,
                                         name_prefix="rouba", disable_logger=True)
    rng = np.random.default_rng(args.seed)
    for episode in range(args.episodes):
        obs, info = env.reset(seed=args.seed + episode)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, done, truncated, info = env.step(action)
        seat = info["seat"]
        print(f"episode {episode}: the learner (random moves) in seat {seat} scored {info['scores'][seat]}, "
              f"{args.opponents} {[s for i, s in enumerate(info['scores']) if i != seat]}; reward {reward:+.0f}")
    env.close()
    videos = sorted(args.folder.glob("rouba-episode-*.mp4"))
    print(f"recorded {len(videos)} videos in {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

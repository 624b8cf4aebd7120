#!/usr/bin/env python
"""Train a rouba-monte policy by PPO self-play (the project's main job).

    python scripts/train.py                      # the default 2-player run
    python scripts/train.py --config run.toml    # fields from a TOML file
    python scripts/train.py --resume             # carry on after a stop
    python scripts/train.py --help               # every setting, with its meaning
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rouba_training.config import config_from_args  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    try:
        config, resume = config_from_args(argv)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from rouba_training.train import train

    try:
        final = train(config, resume=resume)
    except (ValueError, FileNotFoundError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"\ntrained {final['learner_steps']} learner steps in {final['seconds_training']} s "
          f"({final['learner_steps_per_second']:.0f} steps/s); run folder: {config.run_dir}")
    if final["evaluation"]:
        print(f"{'opponent':<22}{'games':>7}{'win rate':>10}{'95% interval':>18}{'margin':>9}")
        for row in final["evaluation"]:
            print(f"{row['opponent']:<22}{row['games']:>7}{row['win_rate']:>10.1%}"
                  f"   [{row['win_low']:.1%}, {row['win_high']:.1%}]{row['mean_margin']:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

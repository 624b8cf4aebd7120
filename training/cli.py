"""``rouba-train``: train a rouba-monte policy by PPO self-play (the project's main job).

    rouba-train                          # the default 2-player run into runs/default
    rouba-train --config run.toml        # settings from a TOML file (flags win)
    rouba-train --resume                 # carry on after a stop, with the run's saved settings
    rouba-train --best-response checkpoint:2p   # exploitability probe: train against one frozen player
    rouba-train --help                   # every setting, with its meaning and default

Needs the ``train`` extra (`rouba_env.extras.install_hint`: torch,
tensorboard, matplotlib, tqdm). Errors are one ``error:`` line and exit status 2;
a run stopped by Ctrl-C or SIGTERM writes a checkpoint, prints how to resume
and exits with 130 or 143.
"""

from __future__ import annotations

import sys

from rouba_env.cli.common import fail, run_main


TORCH_CPU_INSTALL = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
"""How to install PyTorch without its CUDA libraries (PyTorch's own CPU wheel index)."""


def format_value(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def main(argv: list[str] | None = None) -> int:
    from rouba_training.command_line import build_config, parse_request  # no torch: --help reads without it

    if {"-h", "--help"} & set(sys.argv[1:] if argv is None else argv):
        parse_request(argv)  # prints the settings and exits
    try:
        from rouba_training.run_folder import RunFolderError, is_complete, read_resume_file
        from rouba_training.train import EXIT_INTERRUPTED, train
    except ImportError as error:
        from rouba_env.extras import install_hint

        return fail(f"training needs the train extra ({error.name} is missing): {install_hint('train')}; "
                    f"for torch's CPU-only build, which is far smaller, first: {TORCH_CPU_INSTALL}")
    from pathlib import Path
    import signal

    from rouba_env.files import FileWriteError
    from rouba_env.players.checkpoint import CheckpointError

    command = " ".join(["rouba-train", *(sys.argv[1:] if argv is None else argv)])
    try:
        request = parse_request(argv)
        saved = read_resume_file(Path(request.run_dir)) if request.resume and \
            (Path(request.run_dir) / "checkpoint.pt").is_file() else None
        config, changes = build_config(request, saved["config"] if saved else None)
        if saved is not None and is_complete(Path(config.run_dir), saved, config.total_steps):
            print(f"{config.run_dir} is complete: {saved['learner_steps']} learner steps of {config.total_steps} "
                  f"and its final evaluation; nothing was changed. To train it further: rouba-train --resume "
                  f"--run-dir {config.run_dir} --total-steps N (N above {saved['learner_steps']})")
            if changes:
                print(f"  not applied, since nothing is trained: {', '.join(name for name, _, _ in changes)}")
            return 0
        if saved is not None:
            print(f"resuming {config.run_dir} at update {saved['update']} ({saved['learner_steps']} learner steps)")
            for name, old, new in changes:
                print(f"  {name}: {format_value(old)} -> {format_value(new)}")
        final = train(config, resume=request.resume, command=command, overwrite=request.overwrite, saved=saved)
    except (ValueError, FileNotFoundError, RunFolderError, FileWriteError, CheckpointError) as error:
        return fail(str(error))
    except OSError as error:
        return fail(f"{error.filename or 'a file'}: {error.strerror or error}")
    except RuntimeError as error:
        return fail(str(error))
    except KeyboardInterrupt:
        print("\nstopped at once; the last checkpoint is intact: "
              f"rouba-train --resume --run-dir {request.run_dir}", file=sys.stderr)
        return EXIT_INTERRUPTED[signal.SIGINT]
    if final["interrupted"]:
        print(f"\nstopped by {final['interrupted']} after {final['learner_steps']} learner steps "
              f"(update {final['updates']}); checkpoint written. Resume with:\n  {final['resume_command']}")
        return EXIT_INTERRUPTED[signal.Signals[final["interrupted"]]]
    print(f"\ntrained {final['learner_steps']} learner steps in {final['seconds_training']} s "
          f"({final['learner_steps_per_second']:.0f} steps/s); run folder: {config.run_dir}")
    if "seconds_final_evaluation" in final or final.get("seconds_periodic_evaluations"):
        print(f"evaluations took {final.get('seconds_periodic_evaluations', 0.0)} s periodic and "
              f"{final.get('seconds_final_evaluation', 0.0)} s final")
    if final["evaluation"]:
        print(f"{'opponent':<22}{'games':>7}{'win rate':>10}{'95% interval':>18}{'margin':>9}")
        for row in final["evaluation"]:
            print(f"{row['opponent']:<22}{row['games']:>7}{row['win_rate']:>10.1%}"
                  f"   [{row['win_low']:.1%}, {row['win_high']:.1%}]{row['mean_margin']:>9.2f}")
        if config.best_response:  # one row per table size, in num_players' order
            for players, row in zip(config.num_players, final["evaluation"]):
                print(f"exploitability probe: a fresh network trained {final['learner_steps']} steps against "
                      f"{config.best_response} alone wins {row['win_rate']:.1%} [{row['win_low']:.1%}, "
                      f"{row['win_high']:.1%}] against it at {players} players ({1 / players:.1%}, one seat's "
                      f"share, would mean no exploit found)")
    return 0


if __name__ == "__main__":
    run_main(main)

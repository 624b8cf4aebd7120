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

The command line: flags from `TrainConfig` (tyro), settings files (TOML), a resumed run's settings.

Where a setting comes from, lowest first: the defaults, the saved settings of the run being resumed
(``--resume``), a TOML file (``--config run.toml``, unknown keys are an error), the flags. Every value is
checked once, when the `TrainConfig` is made.
"""

from __future__ import annotations

import dataclasses
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from rouba_env.cli.common import fail, run_main
from rouba_training.config import (
    COMMAND_LINE_ONLY,
    GROUP_OF,
    HELP,
    HINTS,
    NOT_RESUMED,
    PLAYER_SPEC_FIELDS,
    REMOVED_CHOICES,
    GIVEN,
    REMOVED_SETTINGS,
    SOURCES,
    TrainConfig,
    checked_value,
    other_defaults,
    resolve_defaults,
    resolve_start,
    setting,
    setting_fields,
)


MAX_CONFIG_BYTES = 64 * 1024
"""A TOML config larger than this is refused (a run's settings are a few hundred bytes)."""
SHIPPED_CONFIGS = Path(__file__).resolve().parent / "configs"
"""The shipped policies' run settings (``rank_2p.toml``, ...), installed with the trainer."""


def shipped_configs() -> list[str]:
    """Names ``--config`` accepts without a path: the shipped TOML files, without ``.toml``."""
    return sorted(path.stem for path in SHIPPED_CONFIGS.glob("*.toml"))


def config_path(value: str | Path) -> Path:
    """A ``--config`` value as a file: a path, or the name of a shipped config (``rank_2p``)."""
    if str(value) in shipped_configs():  # a shipped name is the shipped file: ./NAME reads a local one
        return SHIPPED_CONFIGS / f"{value}.toml"
    return Path(value)


def load_toml(path: Path) -> dict:
    """Fields from a TOML file (a path or a shipped config's name); unknown keys or wrong types are errors."""
    path = config_path(path)
    if path.exists() and not path.is_file():  # a folder, a FIFO (which would block), a device
        raise ValueError(f"config file {path} is not a regular file: a run's settings are a TOML file")
    try:
        with open(path, "rb") as stream:  # at most the limit, whatever the file (a device never ends)
            raw = stream.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ValueError(f"config file {path} is larger than {MAX_CONFIG_BYTES} bytes: not a run's settings")
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ValueError(f"config file {path} does not exist (shipped configs: {', '.join(shipped_configs())})") from None
    except (IsADirectoryError, PermissionError) as error:
        raise ValueError(f"config file {path} cannot be read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"config file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"config file {path} is not valid TOML: {error}") from None
    except RecursionError:
        raise ValueError(f"config file {path} is nested too deeply to be a config") from None
    for key in data:
        if key in REMOVED_SETTINGS:
            raise ValueError(f"{key} in {path} was removed: {REMOVED_SETTINGS[key][1]}")
    unknown = sorted(set(data) - set(GROUP_OF))
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in {path}; known keys: {sorted(GROUP_OF)}")
    outside = sorted(set(data) & set(COMMAND_LINE_ONLY))
    if outside:
        raise ValueError(f"{outside} in {path}: settings that reach outside this machine are taken from the "
                         f"command line only (--ray local, --ray ADDRESS)")
    for key, value in data.items():
        try:
            data[key] = checked_value(key, value)
        except ValueError as error:
            raise ValueError(f"{error} (in {path})") from None
    return data


COMMAND_FLAGS = {
    "config": ("", "TOML file setting any of the fields below, or a shipped config's name ({shipped}: the "
                   "shipped policies' settings)"),
    "resume": (False, "Carry on from the last checkpoint in --run-dir, with its saved settings."),
    "overwrite": (False, "Start afresh in a --run-dir that holds an earlier run, deleting that run's files."),
}
"""The command's own flags, beside every `TrainConfig` field: (default, help)."""
DESCRIPTION = ("Train a rouba-monte policy by PPO self-play on the batched engine. Settings come from the defaults, "
               "then the resumed run's saved settings (--resume), then --config, then the flags.")


@dataclass
class TrainRequest:
    """What the command line asked for, before it is combined with a resumed run's settings."""

    argv: list[str]
    """The arguments, parsed against the combined defaults by `build_config`."""
    file_values: dict
    """Fields from the ``--config`` TOML file."""
    resume: bool
    overwrite: bool
    run_dir: str
    """The run folder the flags (or else the file, or else the default) name."""


def command_fields() -> type:
    """The command line as tyro reads it: the command's flags, then every `TrainConfig` field with its help.

    Parsed without `TrainConfig`'s checks, which run when the config is made (`build_config`), so that a
    bad value is one error line naming the setting, as it is from Python or a file.
    """
    from rouba_env.players.registry import known_players

    flags = [(name, type(default), setting(default, text.format(shipped=", ".join(shipped_configs()))))
             for name, (default, text) in COMMAND_FLAGS.items()]
    specs = f" Specs: {', '.join(known_players())}, with checkpoint:PATH or checkpoint:NAME."
    fields = [(field.name, HINTS[field.name],
               setting(field.default, field.metadata[HELP] + other_defaults(field.name)
                       + (specs if field.name in PLAYER_SPEC_FIELDS else "")))
              for field in setting_fields()]
    return dataclasses.make_dataclass("TrainCommand", flags + fields)


def parse_command(argv: list[str], defaults: dict) -> dict:
    """Every setting and flag from ``argv`` (tyro), each unset one at ``defaults`` or its field's default."""
    import tyro

    command = command_fields()
    return dataclasses.asdict(tyro.cli(command, args=argv, default=command(**defaults), prog="rouba-train",
                                       description=DESCRIPTION))


def refuse_removed_flags(argv: list[str]) -> None:
    """A ValueError for a flag of an earlier version that is gone or spelled anew, naming what replaces it
    (before tyro, whose own error would only say the flag is unknown)."""
    for index, arg in enumerate(argv):
        if not arg.startswith("--"):
            continue
        flag, _, attached = arg[2:].partition("=")
        name = flag.replace("-", "_")
        following = attached or (argv[index + 1] if index + 1 < len(argv) else "")
        if name == "ray" and not attached and (not following or following.startswith("--")):
            raise ValueError("--ray now says where Ray runs: --ray local (a Ray started on this machine) or "
                             "--ray ADDRESS (auto, or HOST:6379 of a running cluster)")
        if name == "no_ray":
            raise ValueError("--no-ray: leave --ray out (no Ray is the default)")
        for removed in (name, name.removeprefix("no_")):
            if removed in REMOVED_SETTINGS:
                raise ValueError(f"--{flag} was removed: {REMOVED_SETTINGS[removed][1]}")
        if (name, following) in REMOVED_CHOICES:
            raise ValueError(f"--{flag} {following} was removed: {REMOVED_CHOICES[name, following]}")


def given_flags(argv: list[str]) -> set[str]:
    """The settings ``argv`` gives by flag (``--num-envs 8``, ``--num_envs=8``, ``--no-progress``): the only
    ones the flags set; the others come from the file, the resumed run or the defaults."""
    given = set()
    for arg in argv:
        if arg.startswith("--"):
            name = arg[2:].partition("=")[0].replace("-", "_")
            given |= {candidate for candidate in (name, name.removeprefix("no_")) if candidate in GROUP_OF}
    return given


def parse_request(argv: list[str] | None = None) -> TrainRequest:
    """The command line as a `TrainRequest`: ``--help`` prints every setting and exits; tyro reports bad
    flags, ValueError a bad TOML file."""
    argv = list(sys.argv[1:] if argv is None else argv)
    refuse_removed_flags(argv)
    given = [arg for arg in argv if arg == "--config" or arg.startswith("--config=")]
    if len(given) > 1:
        raise ValueError(f"--config is given {len(given)} times: one settings file a run (flags set the rest)")
    values = parse_command(argv, {})  # the flags alone: the file and the run folder they name
    if values["resume"] and values["overwrite"]:
        raise ValueError("--resume and --overwrite exclude each other: resume the run, or start it again")
    file_values = load_toml(values["config"]) if values["config"] else {}
    flagged = {name: values[name] for name in given_flags(argv)}
    run_dir = resolve_defaults({**file_values, **flagged})[0]["run_dir"]  # flags win; an exploiter's own folder
    return TrainRequest(argv, file_values, values["resume"], values["overwrite"], run_dir)


def build_config(request: TrainRequest, saved: dict | None = None,
                 saved_sources: dict | None = None) -> tuple[TrainConfig, list[tuple[str, object, object]]]:
    """(config, changes): defaults < ``saved`` (a resumed run's settings, with their ``saved_sources``) < TOML <
    flags. Only the settings one of these gives are given: the rest take the deck's, an exploiter's or the
    trainer's defaults (`resolve_defaults`).

    ``changes`` lists (field, saved value, new value) for every saved setting that
    the file or the flags change, so that a resume can say what differs.
    """
    check_resumable(saved or {})
    if saved_sources is not None and (not isinstance(saved_sources, dict) or not set(saved_sources.values()) <= set(SOURCES)):
        raise ValueError(f"--resume: the checkpoint's config_sources are not a setting's sources ({', '.join(SOURCES)}): "
                         f"the file is damaged")
    values = {key: value for key, value in (saved or {}).items()
              if key in GROUP_OF and key not in COMMAND_LINE_ONLY + NOT_RESUMED}
    base = {key: checked_value(key, value) for key, value in values.items()}
    sources = {key: (saved_sources or {}).get(key, GIVEN) for key in base}
    parsed, flagged = parse_command(request.argv, {}), given_flags(request.argv)
    given = {**base, **request.file_values, **{name: parsed[name] for name in flagged}}
    if saved is not None:
        given["run_dir"] = request.run_dir  # the folder the user named is the run, whatever the file says
    sources |= {name: GIVEN for name in given if name not in base or name in request.file_values or name in flagged}
    held = (saved or {}).get("best_response")
    if saved is not None and held and given.get("best_response", held) != held:
        raise ValueError(f"--resume: this run is an exploiter of best_response={held!r}; it cannot take another "
                         f"target ({given['best_response']!r}): start a new run for that one")
    config = TrainConfig.from_settings(given, sources)
    changes = []
    if saved is not None:
        final = config.to_dict()
        before = TrainConfig.from_settings({**base, "run_dir": request.run_dir}, sources).to_dict()
        resumable = set(final) - set(COMMAND_LINE_ONLY) - set(NOT_RESUMED) - {"run_dir"}  # a setting newer
        changes = [(key, before[key], final[key]) for key in sorted(resumable)  # than the run counts too
                   if before[key] != final[key]]
    return config, changes


def check_resumable(saved: dict) -> None:
    """A ValueError if a resumed run's saved settings hold a removed setting away from the value it had when
    unused (that run cannot go on as it was trained); at that value, the setting is left out."""
    for name, (unused, why) in REMOVED_SETTINGS.items():
        if name in saved and name != "ray_address" and saved[name] != unused:  # never resumed: command line only
            raise ValueError(f"--resume: this run was trained with {name}={saved[name]!r}, a setting that was "
                             f"removed ({why}); it cannot be carried on as it was trained: start a fresh run")
    for (name, value), why in REMOVED_CHOICES.items():
        if saved.get(name) == value:
            raise ValueError(f"--resume: this run was trained with {name}={value!r}, which was removed ({why}); "
                             f"it cannot be carried on as it was trained: start a fresh run")


def config_from_args(argv: list[str] | None = None) -> tuple[TrainConfig, bool]:
    """(config, resume) from command-line arguments alone (no saved settings; see `build_config`)."""
    request = parse_request(argv)
    return build_config(request)[0], request.resume

SHOWN_ONLY = ("progress",)
"""Settings that change only what a run shows: a finished run has nothing to show them on, so none is named
as not applied."""
TORCH_CPU_INSTALL = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
"""How to install PyTorch without its CUDA libraries (PyTorch's own CPU wheel index)."""


def format_value(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def main(argv: list[str] | None = None) -> int:
    """Run ``rouba-train``; its exit status (2 with one error line, 130 or 143 when a signal stops the run)."""
    if {"-h", "--help"} & set(sys.argv[1:] if argv is None else argv):
        parse_request(argv)  # prints the settings and exits
    import signal

    from rouba_env.files import FileWriteError
    from rouba_env.players.checkpoint import CheckpointError
    from rouba_training.run_folder import RunFolderError

    command = " ".join(["rouba-train", *(sys.argv[1:] if argv is None else argv)])
    try:  # every flag and value checked before torch is imported (which takes seconds on a busy machine)
        request = parse_request(argv)
        if not request.resume:  # a resumed run's settings are read from its checkpoint, with torch
            resolve_start(build_config(request)[0])
    except (ValueError, FileNotFoundError, CheckpointError) as error:
        return fail(str(error))
    try:
        from rouba_training.trainer import EXIT_INTERRUPTED
    except ImportError as error:
        from rouba_env.extras import install_hint

        return fail(f"training needs the train extra ({error.name} is missing): {install_hint('train')}; "
                    f"for torch's CPU-only build, which is far smaller, first: {TORCH_CPU_INSTALL}")
    try:
        config, final = train_request(request, command=command)
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
    if final is None:  # a complete run, left as it was
        return 0
    if final["interrupted"]:
        print(f"\nstopped by {final['interrupted']} after {final['learner_steps']} learner steps "
              f"(update {final['updates']}); checkpoint written. Resume with:\n  {final['resume_command']}")
        return EXIT_INTERRUPTED[signal.Signals[final["interrupted"]]]
    print_report(config, final)
    return 0


def train_request(request: TrainRequest, *, command: str) -> tuple[TrainConfig, dict | None]:
    """Read a resumed run's checkpoint, say what its settings change, and train: (config, the run's final
    answer), or (config, None) for a run already complete, which is left as it is."""
    from rouba_training.run_folder import is_complete, read_resume_file
    from rouba_training.trainer import train

    saved = read_resume_file(Path(request.run_dir)) if request.resume and \
        (Path(request.run_dir) / "checkpoint.pt").is_file() else None
    config, changes = build_config(request, saved["config"] if saved else None,
                                   saved.get("config_sources") if saved else None)
    if saved is not None and is_complete(Path(config.run.run_dir), saved, config.run.total_steps):
        print(f"{config.run.run_dir} is complete: {saved['learner_steps']} learner steps of {config.run.total_steps} "
              f"and its final evaluation; nothing was changed. To train it further: rouba-train --resume "
              f"--run-dir {config.run.run_dir} --total-steps N (N above {saved['learner_steps']})")
        unapplied = [name for name, _, _ in changes if name not in SHOWN_ONLY]
        if unapplied:
            print(f"  not applied, since nothing is trained: {', '.join(unapplied)}")
        return config, None
    if saved is not None:
        print(f"resuming {config.run.run_dir} at update {saved['update']} ({saved['learner_steps']} learner steps)")
        for name, old, new in changes:
            print(f"  {name}: {format_value(old)} -> {format_value(new)}")
    return config, train(config, resume=request.resume, command=command, overwrite=request.overwrite, saved=saved)


def print_report(config: TrainConfig, final: dict) -> None:
    """Print what a finished run did: its speed, its evaluations' time and results, and a best response's
    bound at the start and at the end."""
    print(f"\ntrained {final['learner_steps']} learner steps in {final['seconds_training']} s "
          f"({final['learner_steps_per_second']:.0f} steps/s); run folder: {config.run.run_dir}")
    if "seconds_final_evaluation" in final or final.get("seconds_periodic_evaluations"):
        print(f"evaluations took {final.get('seconds_periodic_evaluations', 0.0)} s periodic and "
              f"{final.get('seconds_final_evaluation', 0.0)} s final")
    if final["evaluation"]:
        print(f"{'opponent':<22}{'games':>7}{'win rate':>10}{'95% interval':>18}{'margin':>9}")
        for row in final["evaluation"]:
            print(f"{row['opponent']:<22}{row['games']:>7}{row['win_rate']:>10.1%}"
                  f"   [{row['win_low']:.1%}, {row['win_high']:.1%}]{row['mean_margin']:>9.2f}")
    if config.opponents.best_response and final["evaluation"]:  # one row per table size, in num_players' order
        from rouba_training.best_response import describe_bound

        report = final["best_response"]
        print(f"approximate best response to {config.opponents.best_response}; the exploiter started as {report['start']}")
        for players, start, end in zip(config.run.num_players, report["start_evaluation"] or [None] * len(
                config.run.num_players), final["evaluation"]):
            print(f"{players} players, at the start: "
                  f"{describe_bound(start) if start else 'not evaluated'}")
            print(f"{players} players, after {final['learner_steps']} steps: {describe_bound(end)}")


if __name__ == "__main__":
    run_main(main)

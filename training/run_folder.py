"""A training run's folder, kept consistent whatever happens to the process.

Files: ``checkpoint.pt`` (everything needed to resume, read with
``torch.load(weights_only=True)``), ``policy/`` (the same update's policy as
a checkpoint that plays without torch), ``metrics.csv``, ``eval.csv``,
TensorBoard events under ``tb/``, ``final_eval.json``, ``learning_curve.png``.

Guarantees:

* every file is written atomically (`rouba_env.files.write_atomically`), so a
  kill leaves the previous version whole; temporary files of a killed write
  are removed when the run folder is opened again;
* ``policy/`` is written from the same update as ``checkpoint.pt``: a resume
  rewrites it from the checkpoint when a kill fell between the two writes;
* on resume, CSV rows and TensorBoard points written after the checkpoint are
  dropped (``purge_step``), so the curves do not go back on themselves;
* a fresh run never mixes with an earlier one: a folder holding a run needs
  ``--resume`` or ``--overwrite``.
"""

from __future__ import annotations

import csv
import errno
import io
import pickle
import shutil
import zipfile
from pathlib import Path

from rouba_env.checks import check_int, check_number
from rouba_env.files import remove_stale_temporaries, write_atomically
from rouba_env.players.checkpoint import RUN_POLICY_DIR

CHECKPOINT_FILE = "checkpoint.pt"
POLICY_DIR = RUN_POLICY_DIR
METRICS_FILE = "metrics.csv"
EVAL_FILE = "eval.csv"
TENSORBOARD_DIR = "tb"
FINAL_EVAL_FILE = "final_eval.json"
CURVE_FILE = "learning_curve.png"
RUN_FILES = (CHECKPOINT_FILE, POLICY_DIR, METRICS_FILE, EVAL_FILE, TENSORBOARD_DIR, FINAL_EVAL_FILE, CURVE_FILE)
"""What a run writes; ``--overwrite`` deletes exactly these."""
CHECKPOINT_KEYS = {"config": dict, "network": dict, "optimizer": dict, "pool": dict, "learner_steps": int,
                   "engine_steps": int, "games": int, "update": int, "seconds": float, "numpy_rng": dict}
"""Fields a resume file must hold, with their types."""
COUNT_KEYS = ("learner_steps", "engine_steps", "games", "update")
"""Fields that count something, so are never negative."""
OPTIONAL_KEYS = ("torch_rng", "generator", "observation_version", "latest_eval", "weight_average", "snapshot_magnet",
                 "start_eval", "evaluation_seconds", "total_steps_asked", "config_sources")
"""Fields a resume file may hold besides `CHECKPOINT_KEYS`; anything else is refused unread."""
MAX_CSV_BYTES = 256 * 1024 * 1024
"""A run's metrics.csv or eval.csv larger than this is not one of ours (a run writes a few hundred bytes an update)."""


class RunFolderError(RuntimeError):
    """The run folder cannot be used as asked; the message says why and what to do."""


def is_complete(run_dir: Path, saved: dict, total_steps: int) -> bool:
    """True when the run in ``run_dir`` (its resume file read as ``saved``) has trained ``total_steps`` and
    finished its final evaluation: resuming it would only repeat that evaluation."""
    return saved["learner_steps"] >= total_steps and (run_dir / FINAL_EVAL_FILE).is_file()


def require_checkpoint(run_dir: Path) -> None:
    """A `RunFolderError` unless ``run_dir`` holds a run to resume."""
    if not (run_dir / CHECKPOINT_FILE).is_file():
        raise RunFolderError(f"--resume: no {CHECKPOINT_FILE} in {run_dir}; start a fresh run without --resume")


def prepare(run_dir: Path, resume: bool, overwrite: bool) -> None:
    """Create the folder, refuse to mix a fresh run with an earlier one, clear leftovers of killed writes."""
    if resume:  # checked first: a failed resume creates nothing
        require_checkpoint(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunFolderError(f"cannot create the run folder {run_dir}: {error.strerror or error}") from None
    existing = [name for name in RUN_FILES if (run_dir / name).exists()]
    if not resume and existing:
        if not overwrite:
            raise RunFolderError(f"{run_dir} already holds a run ({', '.join(existing)}); add --resume to carry on "
                                 f"or --overwrite to start again (its files are deleted)")
        for name in existing:
            path = run_dir / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    remove_stale_temporaries(run_dir)
    if (run_dir / POLICY_DIR).is_dir():
        remove_stale_temporaries(run_dir / POLICY_DIR)


def read_resume_file(run_dir: Path) -> dict:
    """The saved training state, or a `RunFolderError` naming the file and what is wrong with it."""
    import torch

    path = run_dir / CHECKPOINT_FILE
    try:
        # Mapped, not read: a tensor is only paged in when used, so an entry that is not ours costs nothing.
        saved = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except (pickle.UnpicklingError, EOFError, zipfile.BadZipFile, RuntimeError, ValueError, KeyError,
            AttributeError, TypeError, IndexError) as error:
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise RunFolderError(f"cannot resume from {path}: the file is damaged or not a rouba_env checkpoint "
                             f"({type(error).__name__}: {reason})") from None
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.EACCES, errno.EPERM):
            raise RunFolderError(f"cannot read {path}: {error.strerror or error}") from None
        raise RunFolderError(f"cannot resume from {path}: the file is damaged or truncated "
                             f"({error.strerror or error})") from None
    if not isinstance(saved, dict):
        raise RunFolderError(f"cannot resume from {path}: it holds a {type(saved).__name__}, not a training state")
    unknown = sorted(str(key) for key in saved if key not in CHECKPOINT_KEYS and key not in OPTIONAL_KEYS)
    if unknown:
        raise RunFolderError(f"cannot resume from {path}: unknown entries {unknown[:5]}; it is not a rouba_env "
                             f"checkpoint or has been tampered with")
    for key, kind in CHECKPOINT_KEYS.items():
        value = saved.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise RunFolderError(f"cannot resume from {path}: field {key!r} is missing or not a {kind.__name__}; "
                                 f"the file is damaged")
    try:
        for key in COUNT_KEYS:
            check_int(key, saved[key], 0)
        check_number("seconds", saved["seconds"], 0)
    except ValueError as error:
        raise RunFolderError(f"cannot resume from {path}: {error}; the file is damaged") from None
    latest_eval = saved.get("latest_eval", [])
    if not isinstance(latest_eval, list) or not all(is_evaluation_row(row) for row in latest_eval):
        raise RunFolderError(f"cannot resume from {path}: field 'latest_eval' must be a list of evaluation rows "
                             f"(text keys; numbers, text, true/false or null values); the file is damaged")
    return saved


def is_evaluation_row(row) -> bool:
    """A row as the evaluator writes it: text keys, and values that JSON holds (numbers, text, flags, null)."""
    return isinstance(row, dict) and all(
        isinstance(key, str) and (value is None or type(value) in (int, float, str, bool)) for key, value in row.items())


def save_resume_file(run_dir: Path, state: dict) -> None:
    """Write ``checkpoint.pt`` atomically (torch's zip format; tensors and plain data only)."""
    import torch

    write_atomically(run_dir / CHECKPOINT_FILE, lambda path: torch.save(state, path))


def append_rows(path: Path, fields: list[str], rows: list[dict]) -> None:
    """Append rows to a CSV file, with a header when the file is new.

    An existing file keeps its own columns (a run begun by an older version resumes into them).
    """
    new = not path.exists()
    if not new:
        with path.open(newline="") as stream:
            header = next(csv.reader(stream), None)
        fields = header or fields
    try:
        with path.open("a", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=fields, extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerows(rows)
    except OSError as error:
        from rouba_env.files import FileWriteError, describe_os_error

        raise FileWriteError(error.errno, f"cannot write {path}: {describe_os_error(error)}") from error


def truncate_rows(path: Path, last_update: int) -> None:
    """Drop the rows written after update ``last_update`` (the checkpoint a run resumes from)."""
    if not path.exists():
        return
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_CSV_BYTES:
        raise RunFolderError(f"cannot resume: {path} is not a regular file of at most {MAX_CSV_BYTES} bytes "
                             f"(a link, a device or not this run's); move it away or start afresh")
    with path.open(newline="") as stream:
        reader = csv.DictReader(stream)
        fields = reader.fieldnames or []
        rows = [row for row in reader if row.get("update", "").isdigit() and int(row["update"]) <= last_update]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(path, text.getvalue())


def policy_update(run_dir: Path) -> int | None:
    """The update recorded in ``policy/metadata.json``, or None when there is no readable one."""
    import json

    try:
        return int(json.loads((run_dir / POLICY_DIR / "metadata.json").read_text())["update"])
    except (OSError, ValueError, KeyError, TypeError):
        return None

"""Writing files so that a crash, a kill or a full disk never leaves a half-written one.

`write_atomically` is the project's one way to write a result, checkpoint or
metadata file: the data goes to a temporary file in the same folder, is
flushed to disk, gets ordinary permissions (0644 under the usual umask, not
the 0600 of a temporary file) and then replaces the target in one rename. On
any failure the temporary file is removed and the old target is untouched;
the error is a `FileWriteError` naming the file and the cause.

A symlink is followed: the file it points to is replaced (keeping its
permissions), the link stays; a symlink loop is an error. A target that exists
and is not a regular file (a device such as /dev/null, a FIFO) is written
through, never replaced: such a write cannot be atomic, and replacing it would
turn a device into a plain file. A path that is this process's standard output
or error (``/dev/stdout``, ``/dev/fd/1``, ...), whatever that is (a terminal, a
pipe, a file appended to), is written to that stream.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Callable

DEFAULT_FILE_MODE = 0o666
"""Permissions asked for new files, before the umask (0644 under the usual umask 022)."""
TEMP_SUFFIX = ".tmp"


class FileWriteError(OSError):
    """Writing a file failed; the message names the file and the cause (disk full, read-only, ...)."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def describe_os_error(error: OSError) -> str:
    """A short cause for an OS error: 'the disk is full', 'permission denied', ..."""
    causes = {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exceeded",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENOENT: "the folder does not exist",
        errno.ENOTDIR: "a part of the path is not a folder",
    }
    return causes.get(error.errno or 0, error.strerror or str(error))


LOW_DISK_BYTES = 16 * 1024 * 1024
"""Free space below which a failed write is reported as a full disk."""


def _free_bytes(folder: Path) -> int:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return LOW_DISK_BYTES  # unknown: do not claim a full disk


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: str | Path, data: bytes | str | Callable[[Path], None]) -> Path:
    """Write ``data`` to ``path`` atomically and return the path.

    Missing parent folders are created. ``data`` is bytes, text (written as UTF-8), or a function that writes the
    temporary file at the path it is given (for writers such as torch.save or
    matplotlib that want a file name). Raises `FileWriteError` on failure,
    leaving any previous file at ``path`` as it was.
    """
    path = Path(path)
    stream_fd = _standard_stream(path)
    if stream_fd is not None or _is_special(path):
        return _write_through(path, data, stream_fd)
    if path.is_symlink():
        path = _link_target(path)
    previous_mode = _mode_of(path)
    temp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
        temp = Path(temp_name)
        with os.fdopen(handle, "wb") as stream:
            if isinstance(data, str):
                data = data.encode("utf-8")
            if isinstance(data, (bytes, bytearray, memoryview)):
                stream.write(data)
        if callable(data):
            data(temp)
        with open(temp, "rb+") as stream:
            os.fsync(stream.fileno())
        os.chmod(temp, DEFAULT_FILE_MODE & ~_current_umask() if previous_mode is None else previous_mode)
        os.replace(temp, path)
        temp = None
    except OSError as error:
        raise FileWriteError(error.errno, f"cannot write {path}: {describe_os_error(error)}") from error
    except RuntimeError as error:  # torch.save reports a full disk as a RuntimeError ("unexpected pos ...")
        full = _free_bytes(path.parent) < LOW_DISK_BYTES
        reason = "the disk is full" if full else f"the writer failed ({str(error).splitlines()[0][:120]})"
        raise FileWriteError(errno.ENOSPC if full else errno.EIO, f"cannot write {path}: {reason}") from error
    finally:
        _remove_quietly(temp)
    return path


def _remove_quietly(temp: Path | None) -> None:
    """Delete a temporary file that a failed or finished write left, if any; a failure to delete is ignored."""
    if temp is not None:
        try:
            temp.unlink()
        except OSError:
            pass


def _standard_stream(path: Path) -> int | None:
    """1 or 2 if ``path`` (after its symlinks) is this process's standard output or error, else None."""
    try:
        target = os.stat(path)
    except OSError:
        return None
    for fd in (1, 2):
        try:
            stream = os.fstat(fd)
        except OSError:
            continue
        if (stream.st_dev, stream.st_ino) == (target.st_dev, target.st_ino):
            return fd
    return None


def _link_target(path: Path) -> Path:
    """The file a symlink leads to (which may not exist yet); `FileWriteError` for a loop."""
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        return Path(os.path.realpath(path))
    except OSError as error:
        raise FileWriteError(errno.ELOOP, f"cannot write {path}: its symlinks form a loop") from error


def _mode_of(path: Path) -> int | None:
    """The permission bits of an existing regular file (kept when it is replaced), or None."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


def _is_special(path: Path) -> bool:
    """Whether ``path`` (after its symlinks) exists and is not a regular file or a folder."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_through(path: Path, data: bytes | str | Callable[[Path], None], stream_fd: int | None = None) -> Path:
    """Write ``data`` into an existing device or FIFO in place, or to standard stream ``stream_fd`` (appending
    where it is a file): the `write_atomically` of what is not a plain file to replace."""
    temp = None
    try:
        if callable(data):
            handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
            os.close(handle)
            temp = Path(temp_name)
            data(temp)
            data = temp.read_bytes()
        if isinstance(data, str):
            data = data.encode("utf-8")
        view = memoryview(data)
        if stream_fd is not None:
            import sys

            for stream in (sys.stdout, sys.stderr):  # what Python printed before comes first
                try:
                    stream.flush()
                except (OSError, ValueError, AttributeError):
                    pass
            while view:
                view = view[os.write(stream_fd, view):]
        else:
            with open(path, "wb", buffering=0) as device:
                while view:
                    written = device.write(view)
                    view = view[written or len(view):]
    except OSError as error:
        raise FileWriteError(error.errno, f"cannot write {path}: {describe_os_error(error)}") from error
    except RuntimeError as error:  # a writer function's own failure (torch.save, ...)
        raise FileWriteError(errno.EIO, f"cannot write {path}: the writer failed "
                                        f"({str(error).splitlines()[0][:120]})") from error
    finally:
        _remove_quietly(temp)
    return path


def check_writable(path: str | Path, folder: bool = False) -> Path:
    """Make sure ``path`` (a file, or with ``folder`` a folder to write files into) can be written, before any work.

    Nothing is created: the nearest existing folder on the way is probed with a
    temporary file that is removed at once. Raises `FileWriteError` naming the
    path and the reason (a folder where a file is meant, or the reverse; a
    special or read-only file system; permissions).
    """
    path = Path(path)
    if folder and path.exists() and not path.is_dir():
        raise FileWriteError(errno.ENOTDIR, f"cannot write into {path}: it is a file, not a folder")
    if not folder and path.is_dir():
        raise FileWriteError(errno.EISDIR, f"cannot write {path}: it is a folder")
    if not folder and (_standard_stream(path) is not None or _is_special(path)):
        if not os.access(path, os.W_OK):
            raise FileWriteError(errno.EACCES, f"cannot write {path}: permission denied")
        return path
    if path.is_symlink():
        if folder and not path.exists():
            raise FileWriteError(errno.ENOENT, f"cannot write into {path}: it is a symlink to a missing folder")
        path = _link_target(path)
    existing = path if folder and path.is_dir() else path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise FileWriteError(errno.ENOTDIR, f"cannot write {path}: {existing} is not a folder")
    try:
        handle, probe = tempfile.mkstemp(dir=existing, prefix=".write-check.", suffix=TEMP_SUFFIX)
    except OSError as error:
        reason = (f"files cannot be created in {existing}" if error.errno == errno.ENOENT
                  else describe_os_error(error))
        raise FileWriteError(error.errno, f"cannot write {path}: {reason}") from None
    os.close(handle)
    os.unlink(probe)
    return path


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Delete temporary files left in ``folder`` by `write_atomically` calls that were killed; the removed paths."""
    removed = []
    folder = Path(folder)
    if folder.is_dir():
        for leftover in folder.glob(f".*{TEMP_SUFFIX}"):
            try:
                leftover.unlink()
                removed.append(leftover)
            except OSError:
                pass
    return removed

"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

WRITTEN_FILE_MODE = 0o644
"""Results are for everyone to read (a temporary file starts private)."""


def write_atomically(path: "str | os.PathLike", data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then `os.replace` it over ``path``.

    The folder is created if needed; on any error the temporary file is removed
    and ``path`` is left as it was.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temp, WRITTEN_FILE_MODE)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise

"""The data dir is owner-only: what the backend makes in it is a directory 0700 or a file 0600 from its creation
(the database holds tokens and password hashes; media files and downloads are a tenant's). Pure filesystem
helpers, no configuration."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """`path` as a directory, each missing component made owner-only (0700); an existing one is left as it is."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)
    return path


def open_private(path: Path) -> BinaryIO:
    """A file for writing (created or truncated), owner-only (0600) from its creation."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE), "wb")

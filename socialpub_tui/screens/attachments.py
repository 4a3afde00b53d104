"""What a post being composed carries as media, and reading a file the user names: shared by the compose screen and
the generations screens (which attach a creation to a new post, and upload the files a creation starts from)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Media:
    """A media of the post being composed: its URL on the media host, its kind, what the user sees of it."""

    url: str
    kind: str | None  # image | video | None (unknown: a URL prefilled from a post)
    label: str


def local_file(text: str) -> tuple[Path, int | None]:
    """The path the user typed (`~` expanded) and its size, None when it is not a file. Blocking."""
    path = Path(text).expanduser()
    return path, path.stat().st_size if path.is_file() else None

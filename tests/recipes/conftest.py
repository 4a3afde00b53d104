"""Recipe files written into a temporary folder, with media files next to them; and, for the tests that plan and
apply, `backend`: an initialised embedded data dir on a paid plan (the free plan allows 3 publications)."""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from recipes.load import load
from recipes.model import Loaded
from tests.cli.conftest import cli_env, embedded, invoke  # noqa: F401 - fixtures reused
from tests.media import corpus
from tests.support.networks import catalogue

EXAMPLES = Path(__file__).resolve().parents[2] / "recipes" / "examples"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A recipe folder `shop/` with images/a.jpg, images/b.jpg, clips/one.mp4, clips/two.mp4."""
    root = tmp_path / "shop"
    for name in ("images/a.jpg", "images/b.jpg", "clips/one.mp4", "clips/two.mp4"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(media_bytes(name))
    return root


@functools.cache
def media_bytes(name: str) -> bytes:
    """Real content for a media file named `name` (validate reads what a file is from its first bytes, as the
    backend does): a small JPEG, or a tiny H.264 MP4."""
    return corpus.video("mp4") if name.endswith(".mp4") else corpus.jpeg()


@pytest.fixture
def write(folder: Path) -> Callable[..., Path]:
    def _write(text: str, name: str = "posts.yaml") -> Path:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def load_text(folder: Path, write: Callable[..., Path]) -> Callable[..., Loaded]:
    """Write one file into the folder and load the folder."""

    def _load(text: str, name: str = "posts.yaml", **kwargs: object) -> Loaded:
        write(text, name)
        return load(folder, networks=catalogue(), **kwargs)  # type: ignore[arg-type]

    return _load


PAID = ("admin", "plan", "GROWTH", "--status", "active", "--period-end", "2030-01-01T00:00:00Z")


@pytest.fixture
def backend(embedded):  # type: ignore[no-untyped-def]  # noqa: F811
    """`init --sandbox` done, on a paid plan."""
    r = invoke(*PAID)
    assert r.code == 0, r.err
    return embedded

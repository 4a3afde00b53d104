"""The end-to-end stories' shared fixture: `story`, each network's emulator served by `socialpub sandbox serve` and
`socialpub serve` on a fresh data dir (tests/e2e/test_live_story.py's Story)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_live_story import NETWORKS, Story


@pytest.fixture
def story(tmp_path: Path) -> Iterator[Story]:
    s = Story(tmp_path)
    try:
        s.run("init", "--password", "story-password")
        for n in NETWORKS:
            s.start(
                f"emu-{n}",
                "sandbox",
                "serve",
                n,
                "--port",
                str(s.ports[n]),
                "--data-dir",
                str(tmp_path / "emu"),
                ready=f"http://127.0.0.1:{s.ports[n]}/_sandbox/oauth",
            )
        s.start(
            "serve",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(s.api_port),
            ready=f"http://127.0.0.1:{s.api_port}/v1/health",
        )
        yield s
    finally:
        s.stop()

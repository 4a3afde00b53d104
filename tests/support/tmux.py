"""A private tmux server for end-to-end tests (its own socket, killed afterwards).

tmux is installed by .ci/ensure-tools.sh (`make test-sqlite`); without it a test is skipped, saying so — except
under CI (CI=true), where a missing tmux fails the test: CI installs it, so its absence is a broken setup."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

Tmux = Callable[..., "subprocess.CompletedProcess[str]"]


@contextmanager
def private_tmux(name: str = "e2e") -> Iterator[Tmux]:
    """`tmux(*args)` on a fresh server: `tmux("capture-pane", "-p", "-t", "tui")`."""
    binary = shutil.which("tmux")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "tmux is not installed although CI=true: .ci/ensure-tools.sh should have installed it"
            )
        pytest.skip("tmux is not installed (.ci/ensure-tools.sh installs it)")
    socket = f"socialpub-{name}-{uuid.uuid4().hex[:8]}"

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([binary, "-L", socket, *args], capture_output=True, text=True, timeout=30)

    try:
        yield call
    finally:
        call("kill-server")

"""`socialpub … | head`: a reader that goes away early ends the command quietly (no "Broken pipe" error; click's
exit status 1 for a closed stdout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXE = str(Path(sys.executable).with_name("socialpub"))


def test_a_closed_stdout_is_not_an_error(cli_env) -> None:  # type: ignore[no-untyped-def]
    env = dict(os.environ)
    assert (
        subprocess.run(
            [EXE, "init", "--sandbox", "--json"], env=env, capture_output=True, timeout=60
        ).returncode
        == 0
    )
    for i in range(3):
        assert (
            subprocess.run(
                [EXE, "posts", "create", f"post {i}", "--to", "facebook", "--at", "+2h", "--json"],
                env=env,
                capture_output=True,
                timeout=60,
            ).returncode
            == 0
        )
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes anything
    proc = subprocess.run([EXE, "posts", "list"], env=env, stdout=write, stderr=subprocess.PIPE, timeout=60)
    os.close(write)
    assert (
        proc.stderr == b""
    )  # click's own handling of EPIPE: exit 1 quietly (was "Error: [Errno 32] Broken pipe")
    assert proc.returncode == 1

"""Every snapshot file under __snapshots__/ belongs to a snapshot test that exists.

syrupy fails a run that leaves a snapshot file unused — but only when the suite runs in one process: under
pytest-xdist, as `make test` runs it, it leaves that check out (syrupy's session.py). This test keeps it: a renamed
or deleted snapshot test, or a changed parameter id, leaves a file that nothing compares against any more."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SNAPSHOTS = HERE / "__snapshots__"


def test_every_snapshot_file_belongs_to_a_test() -> None:
    modules = sorted(
        p
        for p in HERE.glob("test_*.py")
        if "snap_compare" in p.read_text(encoding="utf-8") and p.name != Path(__file__).name
    )
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            *(str(p.relative_to(ROOT)) for p in modules),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    ids = [line.split("::", 1) for line in collected.stdout.splitlines() if "::" in line]
    named = {f"{Path(path).stem}/{name}" for path, name in ids}
    assert len(named) >= len(modules), collected.stdout
    files = {f"{p.parent.name}/{p.stem}" for p in SNAPSHOTS.glob("*/*.svg")}
    assert files, f"no snapshot files under {SNAPSHOTS}"
    unused = sorted(files - named)
    assert not unused, f"snapshot files no test uses (delete them): {unused}"

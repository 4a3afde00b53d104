"""backend.datadir: owner-only directories and files, whatever the process's umask."""

from __future__ import annotations

import os
import stat

from backend.datadir import open_private, private_dir


def test_every_missing_directory_is_made_0700_and_a_file_0600(tmp_path):
    old = os.umask(0o022)
    try:
        leaf = private_dir(tmp_path / "a" / "b" / "c")
        with open_private(leaf / "f.bin") as f:
            f.write(b"x")
    finally:
        os.umask(old)
    for d in (tmp_path / "a", tmp_path / "a" / "b", leaf):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert stat.S_IMODE((leaf / "f.bin").stat().st_mode) == 0o600

"""What the backend leaves in its data dir (issue 30 item 9): owner-only files (0600) and directories (0700), and no
lock file once migrations are over (`socialpub.db.migrating`, `sandbox.db.migrating` stayed behind, 0644)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from PIL import Image


def _modes(root: Path) -> tuple[list[str], list[str], list[str]]:
    """(directories not 0700, files not 0600, lock files) under root (root included)."""
    bad_dirs, bad_files, locks = [], [], []
    for here, _dirs, files in os.walk(root):
        if stat.S_IMODE(os.stat(here).st_mode) != 0o700:
            bad_dirs.append(f"{oct(stat.S_IMODE(os.stat(here).st_mode))} {here}")
        for name in files:
            path = Path(here) / name
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode != 0o600:
                bad_files.append(f"{oct(mode)} {path}")
            if name.endswith(".migrating"):
                locks.append(str(path))
    return bad_dirs, bad_files, locks


def test_a_used_data_dir_is_owner_only_and_keeps_no_lock_file(tmp_path, db_kind):
    """Real processes, as an operator runs them: init with sandbox accounts (the product's and the sandbox's
    databases, each migrated), an image and a video uploaded, a post sent to a sandbox network, a generated file
    stored: every file 0600, every directory 0700, no `*.migrating`."""
    if db_kind != "sqlite":
        return  # the files in question are SQLite's and the local media store's
    data = tmp_path / "data"
    image = tmp_path / "photo.jpg"
    Image.new("RGB", (64, 48), "red").save(image)
    from tests.media.corpus import video as make_video

    video = tmp_path / "clip.mp4"
    video.write_bytes(make_video("mp4"))
    env = {
        **{k: v for k, v in os.environ.items() if k != "SOCIALPUB_DATABASE_URL"},
        "SOCIALPUB_DATA_DIR": str(data),
        "SOCIALPUB_CONFIG": str(tmp_path / "cfg" / "config.yaml"),
        "SOCIALPUB_SANDBOX_DELAY_S": "0",
        "SOCIALPUB_SANDBOX_PROCESSING_S": "0",
    }
    exe = str(Path(sys.executable).with_name("socialpub"))

    def run(*args: str) -> None:
        done = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-3000:]

    run("init", "--sandbox", "--json")
    run("media", "upload", str(image), str(video))
    run("posts", "create", "hello", "--to", "facebook", "--media", str(image), "--wait")
    bad_dirs, bad_files, locks = _modes(data)
    assert (bad_dirs, bad_files, locks) == ([], [], [])
    assert (data / "sandbox.db").exists() and any((data / "media").iterdir())


def test_a_generated_file_moved_into_the_store_is_made_owner_only(settings, owner):
    """A generation's output is written by a renderer with the process's umask, then moved into the media store:
    the store makes it 0600."""
    from backend.services import media as svc

    made = settings.data_dir / "tmp" / "render.mp4"
    made.parent.mkdir(parents=True, exist_ok=True)
    from tests.media.corpus import video as make_video

    made.write_bytes(make_video("mp4"))
    os.chmod(made, 0o644)
    row = svc.store_generated(settings, owner.workspace_id, made, ref="generation:gen_x")
    stored = next(p for p in (settings.data_dir / "media").rglob(row.key))
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700


def test_an_old_lock_file_is_removed_by_the_next_migration(settings, db_kind):
    """A data dir upgraded from a version that left `socialpub.db.migrating` behind: the next start removes it."""
    if db_kind != "sqlite":
        return
    from backend.store.db import database, migrate

    old = Path(f"{database.obj.database}.migrating")
    old.write_text("")
    migrate(database.obj)
    assert not old.exists()

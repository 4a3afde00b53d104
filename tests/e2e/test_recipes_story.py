"""The recipes acceptance story, with the real `socialpub` command in subprocesses on an embedded data dir:

a new user copies recipes/examples/ elsewhere, runs `plan` then `apply`; edits one entry's time and text and
`plan` shows exactly that one update; deletes an entry and `plan --prune` cancels exactly that post; leaves
`watch` running, drops in a new YAML file with an image, and the post is scheduled within a second."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOCIALPUB = str(Path(sys.executable).with_name("socialpub"))
REACTION_S = 1.0


@pytest.fixture
def env(settings, tmp_path, pg_url):  # type: ignore[no-untyped-def]
    # `settings`: on PostgreSQL, a clean store (the data dir itself is a fresh one, below)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env |= {
        "SOCIALPUB_DATA_DIR": str(tmp_path / "e2e"),
        "SOCIALPUB_CONFIG": str(tmp_path / "cfg" / "config.yaml"),
        "SOCIALPUB_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
        "TZ": "Europe/Paris",
    }
    if pg_url:
        env["SOCIALPUB_DATABASE_URL"] = pg_url
    return env


def sp(env: dict[str, str], *args: str, codes: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([SOCIALPUB, *args], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode in codes, f"socialpub {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return done


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_the_recipes_story(env, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.recipes.helpers import jpeg
    from tests.recipes.watching import WatchProcess

    sp(env, "init", "--sandbox", "--password", "story-password")
    sp(env, "admin", "plan", "GROWTH", "--status", "active", "--period-end", "2030-01-01T00:00:00Z")
    folder = tmp_path / "my-content"
    shutil.copytree(ROOT / "recipes" / "examples", folder)

    plan = json.loads(sp(env, "recipes", "plan", str(folder), "--json").stdout)
    total = len(plan["create"])
    assert total >= 20 and not plan["update"] and not plan["cancel"] and not plan["errors"]
    applied = json.loads(sp(env, "recipes", "apply", str(folder), "--json").stdout)
    assert applied["summary"]["created"] == total and not applied["failed"]
    assert (
        json.loads(sp(env, "recipes", "plan", str(folder), "--json").stdout)["unchanged"].__len__() == total
    )

    # one entry's time and text edited: exactly one update, naming both
    launch = folder / "launch.yaml"
    replace(launch, '"Something from Guji is in the roaster.', '"Something from Guji is roasting right now.')
    replace(launch, '"2027-01-12 18:00"', '"2027-01-12 19:15"')
    plan = json.loads(sp(env, "recipes", "plan", str(folder), "--json").stdout)
    assert [(i["entry"], i["changes"]) for i in plan["update"]] == [("teaser", ["content", "scheduledAt"])]
    assert plan["update"][0]["scheduledAt"] == "2027-01-12T18:15:00Z"
    assert not plan["create"] and not plan["cancel"] and len(plan["unchanged"]) == total - 1
    sp(env, "recipes", "plan", str(folder), "--detailed-exitcode", codes=(2,))
    sp(env, "recipes", "apply", str(folder))
    sp(env, "recipes", "plan", str(folder), "--detailed-exitcode", codes=(0,))

    # an entry deleted: plan --prune cancels exactly its post
    posts = {
        i["entry"]: i["postId"]
        for i in json.loads(sp(env, "recipes", "plan", str(folder), "--json").stdout)["unchanged"]
    }
    text = launch.read_text()
    launch.write_text(text[: text.index("  - id: last-call")])
    plan = json.loads(sp(env, "recipes", "plan", str(folder), "--prune", "--json").stdout)
    assert [(i["entry"], i["postId"]) for i in plan["cancel"]] == [("last-call", posts["last-call"])]
    assert not plan["create"] and not plan["update"]
    sp(env, "recipes", "apply", str(folder), "--prune")
    shown = json.loads(sp(env, "posts", "show", posts["last-call"], "--json").stdout)
    assert shown["status"] == "cancelled"

    # watch: a new YAML file with an image, scheduled within a second
    watch = WatchProcess(folder, "--prune", env=env)
    try:
        watch.wait_for("watching ", timeout=60)
        time.sleep(0.5)
        t0 = time.perf_counter()
        (folder / "images" / "new-mug.jpg").write_bytes(jpeg(7, (1080, 1080)))
        (folder / "mugs.yaml").write_text(
            'timezone: Europe/Paris\nposts:\n  - id: mugs\n    content: "New mugs in the shop, from {weekday}!"\n'
            '    media: images/new-mug.jpg\n    targets: [facebook, instagram]\n    at: "2027-01-21 10:00"\n'
        )
        line = watch.wait_for("created mugs.yaml#mugs", timeout=30)
        reaction = time.perf_counter() - t0
        post_id = line.rsplit("→ ", 1)[1].split()[0]
    finally:
        assert watch.stop() == 0
    shown = json.loads(sp(env, "posts", "show", post_id, "--json").stdout)
    assert shown["status"] == "scheduled" and len(shown["mediaUrls"]) == 1
    assert shown["scheduledAt"].startswith("2027-01-21T09:00:00")
    assert reaction <= REACTION_S, f"the post was scheduled {reaction:.2f} s after the files were written"

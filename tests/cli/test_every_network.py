"""Issue 32's "done when", for the CLI and recipes: on a fresh `init --sandbox`, one post with a video to every
built-in network (eight today, read from the registry) succeeds — from `posts create --wait`, and from a recipe
applied then run by `socialpub tick` (the cron form)."""

from __future__ import annotations

import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from backend.networks import registry
from tests.cli.conftest import invoke

CLIP = Path(__file__).resolve().parents[2] / "recipes/examples/clips/pour-over.mp4"
NETWORKS = sorted(n.name for n in registry.networks() if n.builtin and n.emulator)


def succeeded_everywhere(post: dict) -> None:  # type: ignore[type-arg]
    states = {t["platform"]: t["status"] for t in post["targets"]}
    assert states == dict.fromkeys(NETWORKS, "succeeded"), states
    assert post["status"] == "completed"


def test_one_video_to_every_network_from_the_cli(embedded) -> None:  # type: ignore[no-untyped-def]
    assert len(NETWORKS) >= 8
    to = [a for n in NETWORKS for a in ("--to", n)]
    r = invoke(
        "posts",
        "create",
        "Pour-over morning #coffee https://example.com/beans",
        *to,
        "--media",
        str(CLIP),
        "--tiktok-privacy",
        "SELF_ONLY",
        "--wait",
        "--timeout",
        "120",
        "--json",
    )
    assert r.code == 0, r.err
    succeeded_everywhere(r.json())


def test_one_video_to_every_network_from_a_recipe(embedded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    (folder / "clips").mkdir(parents=True)
    shutil.copy(CLIP, folder / "clips" / "pour-over.mp4")
    due = (datetime.now(UTC) + timedelta(seconds=4)).replace(microsecond=0)
    (folder / "everywhere.yaml").write_text(
        "posts:\n"
        "  - id: everywhere\n"
        '    content: "Pour-over in 3 minutes #coffee"\n'
        "    media: clips/pour-over.mp4\n"
        f"    targets: [{', '.join(NETWORKS)}]\n"
        "    options:\n"
        "      tiktok: {privacy: SELF_ONLY}\n"
        f'    at: "{due.isoformat()}"\n',
        encoding="utf-8",
    )
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 0, r.err
    time.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 0.5)
    r = invoke("tick", "--max-seconds", "120", "--json")
    assert r.code == 0, r.err
    [post] = invoke("posts", "list", "--json").json()
    succeeded_everywhere(invoke("posts", "show", post["id"], "--json").json())

# ruff: noqa: F811  (pytest fixtures imported from tests.support.gen_fixtures)
"""`socialpub gen` against the embedded backend (issue 15): the cost preview, create --wait (exit 0 on success, 1 on
failure), list / show / delete / download, a local start image uploaded first, and `posts create --media gen:ID`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.cli.conftest import invoke
from tests.media import corpus
from tests.support.gen_fixtures import gen_provider_dir  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("gen_provider_dir")


@pytest.fixture
def growth(embedded):  # type: ignore[no-untyped-def]
    end = (datetime.now(UTC) + timedelta(days=60)).isoformat()
    r = invoke("admin", "plan", "GROWTH", "--status", "active", "--period-end", end)
    assert r.code == 0, r.err
    return embedded


def test_dry_run_prints_the_cost_and_the_balance_after(growth) -> None:  # type: ignore[no-untyped-def]
    r = invoke(
        "gen",
        "create",
        "--type",
        "video",
        "--prompt",
        "Slow pan over beans",
        "--duration",
        "10",
        "--dry-run",
        "--json",
    )
    assert r.code == 0, r.err
    assert r.json() == {
        "dryRun": True,
        "type": "video",
        "durationSec": 10,
        "creditsCost": 30,
        "balance": 1000,
        "balanceAfter": 970,
        "enough": True,
    }
    human = invoke("gen", "create", "--type", "image", "--prompt", "A cup", "--dry-run")
    assert human.code == 0 and "An image costs 2 credits: balance 1000 → 998" in human.out
    assert invoke("gen", "list", "--json").json()["items"] == []  # nothing created
    assert invoke("admin", "credits", "--set", "20").code == 0
    short = invoke("gen", "create", "--type", "video", "--prompt", "Beans", "--duration", "15", "--dry-run")
    assert (
        short.code == 1
        and "Not enough credits: a 15-second video costs 45, the balance is 20 (25 missing)" in short.out
    )


def test_create_wait_success_then_list_show_download_delete(growth, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = invoke(
        "gen",
        "create",
        "--type",
        "image",
        "--prompt",
        "Latte art close-up",
        "--aspect",
        "1:1",
        "--wait",
        "--json",
    )
    assert r.code == 0, r.err
    g = r.json()
    assert (
        g["status"] == "completed"
        and g["mimeType"] == "image/jpeg"
        and g["mediaUrl"]
        and g["creditsCost"] == 2
    )
    assert f"{g['id']}: completed" in r.err  # progress on stderr, the result alone on stdout

    listing = invoke("gen", "list", "--json").json()
    assert [i["id"] for i in listing["items"]] == [g["id"]] and listing["credits"]["balance"] == 998
    human = invoke("gen", "list")
    assert g["id"] in human.out and "completed" in human.out and "credits: 998" in human.out

    shown = invoke("gen", "show", g["id"])
    assert shown.code == 0 and g["mediaUrl"] in shown.out and f"--media gen:{g['id']}" in shown.out

    target = tmp_path / "latte.jpg"
    d = invoke("gen", "download", g["id"], "-o", str(target), "--json")
    assert d.code == 0, d.err
    assert d.json()["bytes"] == target.stat().st_size > 0 and target.read_bytes()[:3] == b"\xff\xd8\xff"

    gone = invoke("gen", "delete", g["id"], "--json")
    assert gone.code == 0 and gone.json()["mediaDeleted"] is True and gone.json()["creditsRefunded"] == 0
    missing = invoke("gen", "show", g["id"], "--json")
    assert missing.code == 1 and missing.err_json()["error"] == "generation_not_found"


def test_create_wait_failure_exits_1_with_the_error(growth) -> None:  # type: ignore[no-untyped-def]
    r = invoke("gen", "create", "--type", "video", "--prompt", "A gory scene", "--wait", "--json")
    assert r.code == 1
    g = r.json()
    assert (
        g["status"] == "failed"
        and "content policy" in g["error"]
        and g["error"].endswith("Your 15 credits were refunded.")
    )
    human = invoke("gen", "create", "--type", "image", "--prompt", "A cup [refuse]", "--wait")
    assert human.code == 1 and "Error: The provider's own policy refuses this prompt" in human.err
    assert invoke("workspace", "show", "--json").json()["credits"]["balance"] == 1000  # both refunded
    download = invoke("gen", "download", g["id"])
    assert download.code == 1 and "is failed, there is no file to download" in download.err


def test_create_without_wait_on_the_embedded_backend_is_produced_before_exit(growth) -> None:  # type: ignore[no-untyped-def]
    r = invoke("gen", "create", "--type", "video", "--prompt", "Beans falling", "--duration", "5", "--json")
    assert r.code == 0, r.err
    assert r.json()["status"] == "completed" and r.json()["durationSec"] == 5


def test_wait_timeout_on_the_embedded_backend_bounds_the_command(growth, gen_provider_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """`gen create --wait --timeout 1` on the embedded backend (a real `socialpub` process) gives up after about a
    second, as against a server: it does not stay while the file is made (the exit drain waited for the production,
    then reported the timeout). The creation stops with the command and the next worker fails and refunds it."""
    import os
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(gen_provider_dir), str(root)]),
        "SOCIALPUB_TEST_PROVIDER_SLOW_S": "60",
        "SOCIALPUB_JOB_LEASE_S": "1",
    }
    started = time.monotonic()
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("socialpub")),
            "gen",
            "create",
            "--type",
            "image",
            "--prompt",
            "A cup [slow]",
            "--wait",
            "--timeout",
            "1",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert time.monotonic() - started < 10, done.stderr
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["status"] == "processing"
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert (
        error["error"] == "wait_timeout"
        and "embedded backend makes it inside this command" in error["message"]
    )

    time.sleep(1.1)  # PostgreSQL: the gone worker's lease ends (SQLite: its dead process is seen at once)
    assert invoke("tick", "--max-seconds", "20", "--settle", "0").code == 0
    g = invoke("gen", "list", "--json").json()
    assert [item["status"] for item in g["items"]] == ["failed"] and "interrupted" in g["items"][0]["error"]
    assert g["credits"]["balance"] == 1000  # refunded


def test_a_local_start_image_is_uploaded_first(growth, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    start = tmp_path / "start.png"
    start.write_bytes(corpus.encode(corpus.canonical(90, 160), "PNG"))
    r = invoke(
        "gen",
        "create",
        "--type",
        "video",
        "--prompt",
        "From this frame",
        "--source",
        str(start),
        "--wait",
        "--json",
    )
    assert r.code == 0, r.err
    g = r.json()
    assert len(g["sourceUrls"]) == 1 and g["sourceUrls"][0].endswith(".jpg")
    media = invoke("media", "list", "--json").json()
    assert {m["origin"] for m in media} == {"upload", "generated"}


def test_posts_create_with_a_creation(growth) -> None:  # type: ignore[no-untyped-def]
    g = invoke("gen", "create", "--type", "video", "--prompt", "Roastery tour", "--wait", "--json").json()
    r = invoke(
        "posts", "create", "Our roastery", "--to", "youtube", "--media", f"gen:{g['id']}", "--wait", "--json"
    )
    assert r.code == 0, r.err
    post = r.json()
    assert (
        post["mediaUrls"] == [g["mediaUrl"]] and post["options"]["youtube"]["containsSyntheticMedia"] is True
    )
    assert post["status"] == "completed"
    pending = invoke(
        "gen", "create", "--type", "image", "--prompt", "A cup [refuse]", "--wait", "--json"
    ).json()
    r = invoke("posts", "create", "Nope", "--to", "facebook", "--media", f"gen:{pending['id']}")
    assert r.code == 1 and f"gen:{pending['id']} is failed, it has no file yet" in r.err


def test_errors_and_usage(embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("gen", "create", "--type", "image", "--prompt", "A cup", "--json")
    assert r.code == 1 and r.err_json()["error"] == "subscription_required"
    r = invoke("gen", "create", "--type", "image", "--prompt", "A cup", "--duration", "10")
    assert r.code == 2 and "for videos only" in r.err
    r = invoke("gen", "create", "--type", "video", "--prompt", "A cup", "--duration", "8")
    assert r.code == 2
    r = invoke("gen", "create", "--type", "video", "--prompt", "x", "--json")
    assert r.code == 1 and r.err_json()["details"][0]["error"] == "prompt_too_short"


def test_a_local_background_photo_is_uploaded_first_and_reaches_the_provider(growth, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 33: a social manager's own photo as the background of a design (an announcement card)."""
    from tests.support import gen_provider

    photo = tmp_path / "shop.png"
    photo.write_bytes(corpus.encode(corpus.canonical(160, 120), "PNG"))
    r = invoke(
        "gen",
        "create",
        "--type",
        "image",
        "--prompt",
        '"Grand opening" "Saturday 10 am"',
        "--background",
        str(photo),
        "--wait",
        "--json",
    )
    assert r.code == 0, r.err
    g = r.json()
    assert g["status"] == "completed" and g["backgroundUrl"].endswith(".jpg")
    assert gen_provider.CALLS[-1].background is not None
    shown = invoke("gen", "show", g["id"])
    assert g["backgroundUrl"] in shown.out
    wrong = invoke("gen", "create", "--type", "video", "--prompt", "Beans", "--background", str(photo))
    assert wrong.code == 2 and "--background is for images" in wrong.err

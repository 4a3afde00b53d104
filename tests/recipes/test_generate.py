# ruff: noqa: F811  (pytest fixtures imported from tests.support.gen_fixtures)
"""`generate:` in recipes (issue 15 item 13) against the embedded backend with the test provider: plan shows the
generation and its cost, apply makes it once per occurrence (never again on a re-apply, even with the local state
lost), an edited prompt makes a new one and updates the post, a refused prompt fails the file with the
generation's reason and nothing applied, --dry-run makes none."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recipes.helpers import invoke, jpeg, set_posts, write
from tests.support.gen_fixtures import gen_provider_dir  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("gen_provider_dir")


def generated(prompt: str = "A flat white on a sunny terrace, {weekday} light", extra: str = "") -> str:
    return f"""
timezone: Europe/Paris
posts:
  - id: launch
    content: "Launch day!"
    targets: [facebook, linkedin]
    at: "2027-01-15 09:00"
    media: media/a.jpg
    generate:
      type: image
      prompt: "{prompt}"
      aspectRatio: "1:1"
{extra}"""


def folder_with(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "gen"
    (folder / "media").mkdir(parents=True, exist_ok=True)
    (folder / "media" / "a.jpg").write_bytes(jpeg(1))
    write(folder, "posts.yaml", text)
    return folder


def generations() -> list:  # type: ignore[type-arg]
    r = invoke("gen", "list", "--json", "--limit", "100")
    assert r.code == 0, r.err
    return r.json()["items"]


def balance() -> int:
    return invoke("workspace", "show", "--json").json()["credits"]["balance"]


def test_plan_shows_the_generation_and_its_cost(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with(tmp_path, generated())
    r = invoke("recipes", "plan", str(folder), "--json")
    assert r.code == 0, r.err
    plan = r.json()
    [item] = plan["create"]
    g = item["generate"]
    assert (g["type"], g["prompt"], g["aspectRatio"], g["creditsCost"]) == (
        "image",
        "A flat white on a sunny terrace, Friday light",
        "1:1",
        2,
    )
    assert g["idempotencyKey"].startswith("recipe-gen-") and "generationId" not in g
    assert plan["credits"] == {
        "required": 2,
        "generations": 1,
        "balance": 1000,
        "balanceAfter": 998,
        "enough": True,
    }
    human = invoke("recipes", "plan", str(folder))
    assert "an image" in human.out and "2 credits" in human.out and "balance 1000 \u2192 998" in human.out
    assert generations() == []  # planning makes none


def test_apply_twice_makes_exactly_one_generation(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with(tmp_path, generated())
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 0, r.err + r.out
    [g] = generations()
    assert g["status"] == "completed" and g["prompt"] == "A flat white on a sunny terrace, Friday light"
    [post] = set_posts("gen")
    assert (
        post.media_urls[0] == g["mediaUrl"] and len(post.media_urls) == 2
    )  # generated first, then media/a.jpg
    assert balance() == 998

    plan = invoke("recipes", "plan", str(folder), "--json").json()
    assert not plan["create"] and not plan["update"] and len(plan["unchanged"]) == 1 and "credits" not in plan
    again = invoke("recipes", "apply", str(folder), "--json")
    assert again.code == 0 and again.json()["summary"]["unchanged"] == 1
    states = list((tmp_path / "d" / "recipes").glob("media-state*.json"))
    assert states
    for f in states:
        f.unlink()  # the local state lost: the generation is found again by its key
    third = invoke("recipes", "apply", str(folder), "--json")
    assert third.code == 0, third.err
    assert len(generations()) == 1 and balance() == 998
    assert len(set_posts("gen")) == 1


def test_an_edited_prompt_makes_a_new_generation_and_updates_the_post(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with(tmp_path, generated())
    assert invoke("recipes", "apply", str(folder)).code == 0
    [first] = generations()
    write(folder, "posts.yaml", generated("An espresso at dawn"))
    plan = invoke("recipes", "plan", str(folder), "--json").json()
    [item] = plan["update"]
    assert "mediaUrls" in item["changes"] and item["generate"]["creditsCost"] == 2
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 0, r.err
    new = [g for g in generations() if g["id"] != first["id"]]
    assert len(new) == 1 and new[0]["prompt"] == "An espresso at dawn"
    [post] = set_posts("gen")
    assert post.media_urls[0] == new[0]["mediaUrl"] and post.status == "scheduled"
    assert balance() == 996
    assert invoke("recipes", "apply", str(folder), "--json").json()["summary"]["unchanged"] == 1
    assert len(generations()) == 2


def test_a_refused_prompt_fails_the_file_with_its_reason_and_applies_nothing(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    other = """
  - id: plain
    content: "No media"
    targets: [facebook]
    at: "2027-01-16 09:00"
"""
    folder = folder_with(tmp_path, generated("A gory scene", extra=other))
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 1
    out = r.json()
    [failed_file] = [f for f in out["files"] if f["status"] == "failed"]
    assert "content policy" in failed_file["summary"] and "\u201cgory\u201d" in failed_file["summary"]
    assert set_posts("gen") == []  # nothing half-applied: the other entry of the file neither
    [g] = generations()
    assert g["status"] == "failed" and balance() == 1000  # refunded
    human = invoke("recipes", "apply", str(folder))
    assert human.code == 1 and "content policy" in human.err
    # a re-apply makes a new generation (the failed one was refunded): its key carries a retry suffix
    assert len(generations()) == 2
    write(folder, "posts.yaml", generated("A calm espresso", extra=other))
    assert invoke("recipes", "apply", str(folder)).code == 0
    assert len(set_posts("gen")) == 2


def test_dry_run_makes_no_generation(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with(tmp_path, generated())
    r = invoke("recipes", "apply", str(folder), "--dry-run", "--json")
    assert r.code == 0, r.err
    assert r.json()["create"][0]["generate"]["creditsCost"] == 2
    assert generations() == [] and set_posts("gen") == [] and balance() == 1000


def test_a_generate_timeout_on_the_embedded_backend_says_the_creation_stops_with_the_command(
    backend, tmp_path, gen_provider_dir
) -> None:  # type: ignore[no-untyped-def]
    """`recipes apply --generate-timeout 1` (a real `socialpub` process on the embedded backend, a production of
    60 s): it gives up after about a second, nothing applied, and the file's failure says that the creation stops
    with the command (the worker making it lives there) and what to do instead."""
    import json
    import os
    import subprocess
    import sys
    import time

    folder = folder_with(tmp_path, generated(prompt="A cup [slow]"))
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
            "recipes",
            "apply",
            str(folder),
            "--generate-timeout",
            "1",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert time.monotonic() - started < 15, done.stderr
    assert done.returncode == 1, done.stderr
    [failed] = json.loads(done.stdout)["failed"]
    assert failed["error"] == "wait_timeout"
    assert "stops here" in failed["message"] and "--generate-timeout" in failed["message"], failed["message"]
    assert set_posts("gen") == []

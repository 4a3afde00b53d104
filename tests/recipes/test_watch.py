"""`socialpub recipes watch` as a subprocess on a recipe folder, files written by the test: create, modify,
rename, delete; broken then fixed YAML; media written after the YAML naming them; deletions only with --prune."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from recipes.model import LABEL_KEY
from tests.recipes.helpers import entry, jpeg, recipe, set_posts, write
from tests.recipes.watching import WatchProcess

STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2} ")


@pytest.fixture
def watching(backend, tmp_path):  # type: ignore[no-untyped-def]
    started: list[WatchProcess] = []

    def start(folder: Path, *args: str) -> WatchProcess:
        w = WatchProcess(folder, *args)
        started.append(w)
        w.wait_for("watching ")
        return w

    yield start
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()


def by_entry(set_name: str = "content") -> dict[str, list]:
    out: dict[str, list] = {}
    for p in set_posts(set_name):
        out.setdefault(p.labels[LABEL_KEY].partition("/")[2], []).append(p)
    return out


def test_watch_create_modify_rename_delete_with_prune(watching, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    folder.mkdir()
    w = watching(folder, "--prune")

    write(folder, "a.yaml", recipe(entry("x", "2027-02-01 10:00", "First")))
    line = w.wait_for("created a.yaml#x", "→ post_")
    assert STAMP.match(line), line
    post_id = line.rsplit("→ ", 1)[1].split()[0]
    assert [p.id for p in by_entry()["a.yaml#x"]] == [post_id]

    write(folder, "a.yaml", recipe(entry("x", "2027-02-01 10:00", "Second")))
    w.wait_for("updated a.yaml#x (content)", post_id)
    assert by_entry()["a.yaml#x"][0].content == "Second"

    os.rename(folder / "a.yaml", folder / "b.yaml")
    w.wait_for("created b.yaml#x")
    w.wait_for("cancelled a.yaml#x", post_id)  # the same batch: the old file's post is pruned
    posts = by_entry()
    assert [p.status for p in posts["a.yaml#x"]] == ["cancelled"]
    assert [p.status for p in posts["b.yaml#x"]] == ["scheduled"]

    (folder / "b.yaml").unlink()
    w.wait_for("cancelled b.yaml#x", "gone from the files")
    assert [p.status for p in by_entry()["b.yaml#x"]] == ["cancelled"]

    assert w.stop() == 0
    assert "stopped" in w.quiet(0.5)[-1]


def test_watch_survives_broken_yaml_picks_up_late_media_keeps_deletions_without_prune(
    watching, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(entry("x", "2027-02-01 10:00", "Good")))
    w = watching(folder)  # the first sync applies what is there
    assert [p.content for p in by_entry()["a.yaml#x"]] == ["Good"]

    write(folder, "a.yaml", "timezone: Europe/Paris\nposts:\n  - id: x\n    content: [unclosed\n")
    w.wait_for("invalid a.yaml:")
    w.wait_for("a.yaml: keeping its last good state")
    assert [(p.content, p.status) for p in by_entry()["a.yaml#x"]] == [("Good", "scheduled")]

    write(folder, "a.yaml", recipe(entry("x", "2027-02-01 10:00", "Fixed")))
    w.wait_for("a.yaml is valid again")
    w.wait_for("updated a.yaml#x (content)")
    assert [p.content for p in by_entry()["a.yaml#x"]] == ["Fixed"]

    # a YAML naming an image not there yet: reported; the image arrives: the post is created with it
    write(folder, "c.yaml", recipe(entry("pic", "2027-02-02 10:00", "With a picture", "media/late.jpg")))
    w.wait_for("invalid c.yaml:")
    (folder / "media").mkdir()
    (folder / "media" / "late.jpg").write_bytes(jpeg(5))
    w.wait_for("uploaded media/late.jpg")
    w.wait_for("created c.yaml#pic")
    [pic] = by_entry()["c.yaml#pic"]
    assert len(pic.media_urls) == 1

    # the image replaced in place: the post gets the new one
    (folder / "media" / "late.jpg").write_bytes(jpeg(6))
    w.wait_for("updated c.yaml#pic (mediaUrls)")

    # a glob: an image added to the folder it names joins the post
    (folder / "gallery").mkdir()
    (folder / "gallery" / "one.jpg").write_bytes(jpeg(7))
    write(folder, "g.yaml", recipe(entry("gal", "2027-02-03 10:00", "Gallery", "gallery/*.jpg")))
    w.wait_for("created g.yaml#gal")
    (folder / "gallery" / "two.jpg").write_bytes(jpeg(8))
    w.wait_for("updated g.yaml#gal (mediaUrls)")
    assert len(by_entry()["g.yaml#gal"][0].media_urls) == 2

    (folder / "a.yaml").unlink()
    w.wait_for("a.yaml: gone from the folder; its scheduled posts are kept")
    assert [p.status for p in by_entry()["a.yaml#x"]] == ["scheduled"]
    assert not any(STAMP.sub("", line).startswith("cancelled") for line in w.seen)
    assert w.stop() == 0


def test_watch_json_lines(watching, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(entry("x", "2027-02-01 10:00")))
    w = watching(folder, "--json")
    events = [json.loads(line) for line in w.seen]
    assert [e["event"] for e in events][-2:] == ["created", "watching"]
    assert (
        events[-2]["file"] == "a.yaml"
        and events[-2]["entry"] == "x"
        and events[-2]["postId"].startswith("post_")
    )
    assert events[-1]["created"] == 1 and STAMP.match(events[-1]["time"] + " ")
    write(folder, "b.yaml", recipe(entry("y", "2027-02-02 10:00")))
    created = json.loads(w.wait_for('"event": "created"'))
    assert (created["file"], created["entry"], created["scheduledAt"]) == (
        "b.yaml",
        "y",
        "2027-02-02T09:00:00Z",
    )
    assert w.stop() == 0
    assert json.loads(w.quiet(0.5)[-1])["event"] == "stopped"


def test_a_watched_folder_that_disappears_cancels_nothing_and_stops_watch(watching, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`rm -rf` of the folder, a moved folder, an unmounted drive: not "every file was deleted", even with --prune."""
    import shutil

    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(entry("x", "2027-02-01 10:00"), entry("y", "2027-02-02 10:00")))
    w = watching(folder, "--prune")
    assert {p.status for p in set_posts("content")} == {"scheduled"}
    shutil.rmtree(folder)
    w.wait_for("is gone", "nothing was cancelled")
    assert w.proc.wait(30) == 1
    assert [p.status for p in set_posts("content")] == ["scheduled", "scheduled"]

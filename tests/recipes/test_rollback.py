"""A file applied all-or-nothing: a change failing midway undoes what this run did to the file, and the outcome
says item by item what was applied, undone, failed and not attempted; other files are applied."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recipes.apply import Applier
from recipes.load import load
from recipes.media import Hasher, MediaState, MediaStore
from recipes.model import LABEL_KEY
from recipes.runner import make_plan
from socialpub_tui.client.errors import ApiError
from tests.recipes.helpers import entry, invoke, recipe, set_posts, write
from tests.support.networks import catalogue


class Failing:
    """The real client, except that one call fails like the API would."""

    def __init__(self, client: Any, method: str, nth: int) -> None:
        self.client, self.method, self.nth, self.calls = client, method, nth, 0

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.client, name)
        if name != self.method:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.nth:
                raise ApiError(
                    400, "invalid_targets", "1 problem(s) on linkedin: refused. Nothing was published."
                )
            return real(*args, **kwargs)

        return call


def run(client: Any, folder: Path, tmp_path: Path, prune: bool = False) -> Any:
    store = MediaStore(client, MediaState.load(tmp_path / "state.json"), Hasher())
    loaded = load(folder, networks=catalogue(), default_zone="Europe/Paris")
    plan = make_plan(client, loaded, store, prune=prune, now=datetime.now(UTC))
    return Applier(client, store).apply(plan)


def test_a_create_failing_midway_undoes_the_files_creates(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from socialpub_tui.client import connect

    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(*(entry(f"e{n}", f"2027-02-0{n} 10:00") for n in range(1, 5))))
    write(folder, "b.yaml", recipe(entry("other", "2027-02-09 10:00")))
    with connect(worker=False) as real:
        result = run(Failing(real, "create_post", 3), folder, tmp_path)
    assert not result.ok
    a, b = result.files
    assert (a.file, a.status, b.file, b.status) == ("a.yaml", "failed", "b.yaml", "applied")
    assert [x.status for x in a.actions] == ["rolled_back", "rolled_back", "failed", "not_applied"]
    assert "e3" in a.error and "invalid_targets" == a.actions[2].error_code
    assert "2 rolled back" in a.summary() and "1 failed" in a.summary() and "1 not applied" in a.summary()
    status = {p.labels[LABEL_KEY].partition("#")[2]: p.status for p in set_posts("content")}
    assert status == {"e1": "cancelled", "e2": "cancelled", "other": "scheduled"}

    with connect(worker=False) as real:  # run again without the failure: the file is applied whole
        again = run(real, folder, tmp_path)
    assert again.ok and [f.status for f in again.files] == ["applied"]
    live = [p for p in set_posts("content") if p.status == "scheduled"]
    assert sorted(p.labels[LABEL_KEY].partition("#")[2] for p in live) == ["e1", "e2", "e3", "e4", "other"]


def test_a_cancel_failing_reverts_the_files_updates(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from socialpub_tui.client import connect

    folder = tmp_path / "content"
    write(
        folder,
        "a.yaml",
        recipe(entry("keep", "2027-02-01 10:00", "Before"), entry("drop", "2027-02-02 10:00")),
    )
    assert invoke("recipes", "apply", str(folder)).code == 0
    write(
        folder, "a.yaml", recipe(entry("keep", "2027-02-01 11:00", "After"), entry("new", "2027-02-03 10:00"))
    )
    with connect(worker=False) as real:
        result = run(Failing(real, "cancel_post", 1), folder, tmp_path, prune=True)
    [a] = result.files
    assert [(x.kind, x.status) for x in a.actions] == [
        ("create", "rolled_back"),
        ("update", "rolled_back"),
        ("cancel", "failed"),
    ]
    posts = {p.labels[LABEL_KEY].partition("#")[2]: p for p in set_posts("content")}
    assert posts["keep"].content == "Before" and posts["keep"].scheduled_at.startswith("2027-02-01T09:00:00")
    assert posts["new"].status == "cancelled" and posts["drop"].status == "scheduled"


def test_the_cli_says_what_was_and_was_not_applied(backend, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from socialpub_tui.client.sync import Client

    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(entry("one", "2027-02-01 10:00"), entry("two", "2027-02-02 10:00")))
    real = Client.create_post
    calls = {"n": 0}

    def failing(self: Client, body: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise ApiError(402, "subscription_required", "this workspace has used its free publications")
        return real(self, body)

    monkeypatch.setattr(Client, "create_post", failing)
    r = invoke("recipes", "apply", str(folder))
    assert r.code == 1
    assert "a.yaml: failed" in r.err and "free publications" in r.err
    assert "create a.yaml#one: rolled back" in r.err and "create a.yaml#two: failed" in r.err
    assert "0 created" in r.out, r.err + r.out

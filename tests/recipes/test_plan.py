"""The planner alone: occurrences built by hand, posts as the API returns them (duck-typed), a fixed `now`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from recipes.model import LABEL_KEY, LABEL_SET, FileResult, Loaded, Occurrence, Problem, idempotency_key
from recipes.plan import Scope, file_of_key, generation_of, plan
from tests.support.networks import catalogue

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
T1 = datetime(2027, 1, 5, 8, 0, tzinfo=UTC)


@dataclass
class T:
    platform: str
    account_id: str | None = None


@dataclass
class P:
    id: str
    status: str
    scheduled_at: str | None
    content: str
    targets: list[T]
    media_urls: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    created_at: str = "2026-11-20T00:00:00.000Z"


def occ(
    entry: str = "launch",
    file: str = "launch.yaml",
    at: datetime = T1,
    content: str = "Hello",
    targets: tuple[Any, ...] = ("facebook", "linkedin"),
    media: tuple[Path, ...] = (),
    options: dict[str, Any] | None = None,
    local: datetime | None = None,
    set_name: str = "examples",
) -> Occurrence:
    return Occurrence(
        set_name, file, entry, 3, local, "Europe/Paris", at, content, media, targets, options or {}
    )


def post_for(
    o: Occurrence, pid: str = "post_1", status: str = "scheduled", generation: int = 0, **over: Any
) -> P:
    values: dict[str, Any] = {
        "id": pid,
        "status": status,
        "scheduled_at": o.scheduled_at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "content": o.content,
        "targets": [T(t) if isinstance(t, str) else T(t["platform"], t.get("channelId")) for t in o.targets],
        "options": {},
        "idempotency_key": idempotency_key(o.key, generation),
        "labels": {LABEL_SET: o.set_name, LABEL_KEY: o.key},
    }
    values.update(over)
    return P(**values)


def loaded(
    *occurrences: Occurrence, problems: dict[str, list[Problem]] | None = None, set_name: str = "examples"
) -> Loaded:
    files: dict[str, FileResult] = {}
    for o in occurrences:
        files.setdefault(o.file, FileResult(o.file, Path("/r") / o.file)).occurrences.append(o)
    for name, probs in (problems or {}).items():
        files[name] = FileResult(name, Path("/r") / name, [], probs)
    return Loaded(Path("/r"), set_name, list(files.values()), catalogue())


def test_nothing_exists_every_occurrence_is_created_with_its_derived_key() -> None:
    a, b = occ("a"), occ("b", at=T1 + timedelta(days=1))
    p = plan(loaded(a, b), [], NOW)
    assert [i.entry for i in p.create] == ["a", "b"] and p.pending
    assert p.create[0].idempotency_key == idempotency_key(a.key) and p.create[0].generation == 0
    item = p.to_json()["create"][0]
    assert (
        item["file"] == "launch.yaml"
        and item["entry"] == "a"
        and item["scheduledAt"] == "2027-01-05T08:00:00Z"
    )
    assert item["targets"] == ["facebook", "linkedin"] and "postId" not in item
    assert set(p.to_json()) >= {"create", "update", "unchanged", "cancel", "errors"}


def test_same_as_the_post_is_unchanged() -> None:
    o = occ(options={"tiktok": {"privacyLevel": "SELF_ONLY"}}, targets=("tiktok",))
    stored = post_for(o, options={"tiktok": {"postMode": "DIRECT_POST", "privacyLevel": "SELF_ONLY"}})
    p = plan(loaded(o), [stored], NOW)
    assert not p.pending and [i.post_id for i in p.unchanged] == ["post_1"]
    assert p.to_json()["unchanged"][0]["postId"] == "post_1"


def test_each_kind_of_edit_is_an_update_naming_the_fields() -> None:
    base = occ()
    cases = {
        "content": (occ(content="Hello again"), {}),
        "scheduledAt": (occ(at=T1 + timedelta(hours=2)), {}),
        "options": (occ(options={"youtube": {"privacyStatus": "unlisted"}}), {}),
    }
    for field_name, (new, _) in cases.items():
        p = plan(loaded(new), [post_for(base)], NOW)
        assert [i.changes for i in p.update] == [[field_name]], field_name
        assert p.to_json()["update"][0]["postId"] == "post_1"
    p = plan(loaded(occ(content="x", at=T1 + timedelta(hours=1))), [post_for(base)], NOW)
    assert p.update[0].changes == ["content", "scheduledAt"]
    assert p.update[0].before == {
        "content": "Hello",
        "scheduledAt": "2027-01-05T08:00:00Z",
    }  # as the item's scheduledAt


def test_media_compare_by_local_content_hash() -> None:
    img, other = Path("/r/media/a.jpg"), Path("/r/media/b.jpg")
    hashes = {img: "h-a", other: "h-b"}
    o = occ(media=(img,))
    stored = post_for(o, media_urls=["https://media/x.jpg"])
    same = plan(loaded(o), [stored], NOW, media_hash=hashes.get, url_hash={"https://media/x.jpg": "h-a"})
    assert not same.pending
    hashes[img] = "h-a2"  # the file was edited in place
    edited = plan(loaded(o), [stored], NOW, media_hash=hashes.get, url_hash={"https://media/x.jpg": "h-a"})
    assert edited.update[0].changes == ["mediaUrls"]
    swapped = plan(
        loaded(occ(media=(other,))),
        [stored],
        NOW,
        media_hash=hashes.get,
        url_hash={"https://media/x.jpg": "h-a"},
    )
    assert swapped.update[0].changes == ["mediaUrls"]
    unknown = plan(loaded(o), [stored], NOW, media_hash=hashes.get, url_hash={})
    assert unknown.update[0].changes == ["mediaUrls"]  # a URL of unknown origin: uploaded again, to be sure
    added = plan(
        loaded(occ(media=(img, other))),
        [stored],
        NOW,
        media_hash=hashes.get,
        url_hash={"https://media/x.jpg": "h-a2"},
    )
    assert added.update[0].changes == ["mediaUrls"]


def test_targets_changed_is_a_replacement_cancel_plus_create() -> None:
    o = occ(targets=("facebook", "youtube"))
    p = plan(loaded(o), [post_for(occ(), generation=0)], NOW)
    assert [i.replaces for i in p.create] == ["post_1"] and p.create[0].generation == 1
    assert p.create[0].changes[0] == "targets"
    assert [(i.post_id, i.reason) for i in p.cancel] == [("post_1", "targets_changed")]
    assert not p.update
    # a named account counts: same network, another account
    named = occ(targets=({"platform": "facebook", "channelId": "acc_2"}, "linkedin"))
    stored = post_for(named, targets=[T("facebook", "acc_1"), T("linkedin", "acc_9")])
    assert plan(loaded(named), [stored], NOW).cancel
    stored_ok = post_for(named, targets=[T("facebook", "acc_2"), T("linkedin", "acc_9")])
    assert not plan(loaded(named), [stored_ok], NOW).pending


def test_sent_or_processing_posts_are_never_touched() -> None:
    o = occ(content="changed after it went out")
    for status in ("processing", "completed", "partial", "failed"):
        p = plan(loaded(o), [post_for(occ(), status=status)], NOW, prune=True)
        assert not p.pending, status
        assert [(i.post_id, i.reason) for i in p.unchanged] == [("post_1", status)]
    # and a sent post whose occurrence is gone is not cancelled either
    p = plan(loaded(occ("other")), [post_for(occ(), status="completed")], NOW, prune=True)
    assert not p.cancel


def test_a_cancelled_post_of_a_live_occurrence_is_created_again_with_a_new_generation() -> None:
    o = occ()
    p = plan(loaded(o), [post_for(o, status="cancelled")], NOW)
    assert [i.generation for i in p.create] == [1]
    assert p.create[0].idempotency_key == idempotency_key(o.key, 1)
    twice = plan(
        loaded(o),
        [post_for(o, "p1", status="cancelled"), post_for(o, "p2", status="cancelled", generation=1)],
        NOW,
    )
    assert twice.create[0].generation == 2
    alive = plan(loaded(o), [post_for(o, "p1", status="cancelled"), post_for(o, "p2", generation=1)], NOW)
    assert not alive.pending and alive.unchanged[0].post_id == "p2"


def test_past_occurrences_are_skipped_with_a_notice_never_created() -> None:
    past = occ("old", at=NOW - timedelta(minutes=1))
    p = plan(loaded(past, occ("new")), [], NOW)
    assert [i.entry for i in p.create] == ["new"]
    assert p.skipped_past == [past] and any("past" in n and "old" in n for n in p.notices)
    # a past occurrence's post (moved into the past by an edit) is left alone, never pruned
    p = plan(loaded(past), [post_for(occ("old"))], NOW, prune=True)
    assert not p.pending and p.unchanged[0].reason == "past"


def test_prune_cancels_only_this_sets_scheduled_posts_whose_occurrence_is_gone() -> None:
    kept, gone = occ("kept"), occ("gone")
    hand = P("post_hand", "scheduled", "2027-01-05T08:00:00.000Z", "by hand", [T("facebook")])
    other_set = post_for(occ("gone", set_name="elsewhere"), "post_other")
    other_set_same_key_shape = post_for(
        occ("gone"), "post_other2", labels={LABEL_SET: "elsewhere", LABEL_KEY: gone.key}
    )
    posts = [
        post_for(kept, "post_kept"),
        post_for(gone, "post_gone"),
        hand,
        other_set,
        other_set_same_key_shape,
    ]
    p = plan(loaded(kept), posts, NOW, prune=True)
    assert [(i.post_id, i.reason) for i in p.cancel] == [("post_gone", "gone")]
    assert p.to_json()["cancel"][0]["postId"] == "post_gone" and p.to_json()["cancel"][0]["reason"] == "gone"
    without = plan(loaded(kept), posts, NOW)
    assert not without.cancel and [i.post_id for i in without.vanished] == ["post_gone"]
    assert any("--prune" in n for n in without.notices)


def test_prune_spares_broken_files_and_files_outside_a_single_file_path() -> None:
    a = occ("a", file="a.yaml")
    b_post = post_for(occ("b", file="b.yaml"), "post_b")
    broken = {"b.yaml": [Problem("b.yaml", 4, 2, "expected a mapping", "invalid_yaml")]}
    p = plan(loaded(a, problems=broken), [post_for(a, "post_a"), b_post], NOW, prune=True)
    assert not p.cancel and p.errors and any("b.yaml" in n for n in p.notices)
    single = loaded(a)
    p = plan(
        single, [post_for(a, "post_a"), b_post], NOW, prune=True, scope=Scope.of(single, whole_set=False)
    )
    assert not p.cancel
    p = plan(single, [post_for(a, "post_a"), b_post], NOW, prune=True)  # the folder: b.yaml was deleted
    assert [i.post_id for i in p.cancel] == ["post_b"]


def test_a_series_whose_count_shrinks_cancels_the_occurrences_beyond_it() -> None:
    times = [T1 + timedelta(days=7 * n) for n in range(5)]
    series = [
        occ("tips", file="weekly.yaml", at=t, local=t.replace(tzinfo=None) + timedelta(hours=1))
        for t in times
    ]
    posts = [post_for(o, f"post_{n}") for n, o in enumerate(series)]
    p = plan(loaded(*series[:3]), posts, NOW, prune=True)
    assert not p.create and not p.update and len(p.unchanged) == 3
    assert [i.post_id for i in p.cancel] == ["post_3", "post_4"]
    assert p.cancel[0].to_json()["entry"] == "tips" and p.cancel[0].to_json()["file"] == "weekly.yaml"
    grown = plan(loaded(*series), posts[:3], NOW)
    assert [i.key for i in grown.create] == [series[3].key, series[4].key]


def test_only_restricts_to_changed_files() -> None:
    a, b = occ("a", file="a.yaml"), occ("b", file="b.yaml")
    gone = post_for(occ("c", file="c.yaml"), "post_c")
    whole = loaded(a, b)
    p = plan(whole, [gone], NOW, prune=True, scope=Scope.of(whole, only={"b.yaml"}))
    assert [i.entry for i in p.create] == ["b"] and not p.cancel
    p = plan(whole, [gone], NOW, prune=True, scope=Scope.of(whole, only={"c.yaml"}))
    assert not p.create and [i.post_id for i in p.cancel] == ["post_c"]


def test_key_helpers() -> None:
    assert file_of_key("ex/sub/a.yaml#tips@2027-01-05T09:00", "ex") == "sub/a.yaml"
    assert file_of_key("other/a.yaml#x", "ex") is None
    assert generation_of(P("p", "scheduled", None, "", [], idempotency_key=idempotency_key("k", 3))) == 3
    assert generation_of(P("p", "scheduled", None, "", [], idempotency_key="by-hand")) == 0

# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""POST /v1/posts (spec 3.1 creation rows, 4.4, 7, 8): every validation rule and per-target code, alone
and together across networks; channel selection; jobs; idempotency (also racing); free publications."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from backend import clock
from backend.services import accounts as accounts_service
from backend.services import plans
from backend.services import workspace as ws_service
from backend.services.posts import checks
from backend.store.models import Job, Post, PostTarget, Workspace
from tests.api.posts_support import (  # noqa: F401  (fixtures)
    BROKEN,
    GONE,
    IMG,
    PNG,
    VID,
    details,
    fast,
    future,
    post,
    remote_media,
    sandbox,
)
from tests.conftest import key_headers, make_owner

pytestmark = pytest.mark.usefixtures(
    "fast", "remote_media", "audited_tiktok"
)  # (its TikTok posts are public)


@pytest.fixture
def subscribed(owner):  # type: ignore[no-untyped-def]
    """Most tests post more than the free publications: give the workspace a current subscription."""
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))


# ------------------------------------------------------------------------------------------- acceptance


def test_immediate_post_202_processing_targets_pending_and_job_now(client, owner, sandbox):
    r = post(
        client, owner, 202, targets=["facebook", "linkedin"], content="Launch day!", mediaUrls=[IMG.format(1)]
    )
    body = r.json()
    assert body["status"] == "processing" and body["scheduledAt"] is None
    assert body["id"].startswith("post_") and body["createdAt"].endswith("Z")
    assert body["content"] == "Launch day!" and body["mediaUrls"] == [IMG.format(1)]
    assert [(t["platform"], t["accountId"], t["accountName"], t["status"]) for t in body["targets"]] == [
        ("facebook", sandbox["facebook"]["id"], sandbox["facebook"]["name"], "pending"),
        ("linkedin", sandbox["linkedin"]["id"], sandbox["linkedin"]["name"], "pending"),
    ]
    for t in body["targets"]:
        assert set(t) == {
            "platform",
            "accountId",
            "accountName",
            "status",
            "externalPostId",
            "postUrl",
            "failReason",
            "failType",
            "completedAt",
            "nextAttemptAt",
            "warnings",
        }
        assert t["externalPostId"] is None and t["failType"] is None and t["nextAttemptAt"] is None
    job = Job.get(Job.dedupe_key == f"post:{body['id']}")
    assert job.kind == "post.publish" and job.status == "queued" and job.payload == {"post_id": body["id"]}
    assert job.workspace_id == owner.workspace_id
    assert abs((job.run_at - clock.now()).total_seconds()) < 5
    tokens = [t.idempotency_token for t in PostTarget.select().where(PostTarget.post == body["id"])]
    assert len(set(tokens)) == 2 and all(tokens)
    stored = Post.get_by_id(body["id"])
    assert [m["kind"] for m in stored.media] == ["image"]  # what the engine builds payloads from


def test_scheduled_post_202_scheduled_and_job_at_scheduled_time(client, owner, sandbox):
    at = clock.now() + timedelta(days=1)
    r = post(client, owner, 202, targets=["facebook"], scheduledAt=at.isoformat())
    body = r.json()
    assert body["status"] == "scheduled"
    assert body["scheduledAt"] == clock.iso(at)
    assert [t["status"] for t in body["targets"]] == ["pending"]
    job = Job.get(Job.dedupe_key == f"post:{body['id']}")
    assert abs((job.run_at - at).total_seconds()) < 0.01


def test_offsets_are_converted_to_utc(client, owner, sandbox):
    r = post(client, owner, 202, targets=["facebook"], scheduledAt="2099-06-01T10:00:00+02:00")
    assert r.json()["scheduledAt"] == "2099-06-01T08:00:00.000Z"


@pytest.mark.parametrize(
    "value,detail",
    [
        ("2099-06-01T10:00:00", "missing_offset"),
        ("tomorrow", "not_iso8601"),
        ("2099-13-01T00:00:00Z", "not_iso8601"),
    ],
)
def test_scheduled_at_needs_an_offset_and_a_real_date(client, owner, sandbox, value, detail):
    r = post(client, owner, 400, targets=["facebook"], scheduledAt=value)
    assert r.json()["error"] == "invalid_scheduled_at"
    assert r.json()["details"][0]["error"] == detail
    assert Post.select().count() == 0


@pytest.mark.parametrize(
    "value,example", [("2099-06-01", "2099-06-01T00:00:00Z"), ("2099-06-01T10:00", "2099-06-01T10:00Z")]
)
def test_a_missing_offset_is_answered_with_an_example_that_reads(client, owner, sandbox, value, example):
    r = post(client, owner, 400, targets=["facebook"], scheduledAt=value)
    assert f"e.g. {example} " in r.json()["message"]
    checks.parse_timestamp(example, "scheduledAt")  # the example itself is accepted


def test_scheduled_at_in_past_alone(client, owner, sandbox):
    r = post(client, owner, 400, targets=["facebook", "linkedin"], scheduledAt=future(minutes=-1))
    assert r.json()["error"] == "scheduled_at_in_past"
    assert details(r) == [("facebook", "scheduled_at_in_past"), ("linkedin", "scheduled_at_in_past")]
    assert Post.select().count() == 0 and Job.select().count() == 0


# ------------------------------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    "targets,content,media,expected",
    [
        (["myspace"], "hi", [], [("myspace", "invalid_target")]),
        ([{"platform": "friendster", "channelId": "acc_x"}], "hi", [], [("friendster", "invalid_target")]),
        (["youtube"], "hi", [], [("youtube", "video_required_for_target")]),
        (["youtube"], "hi", [IMG.format(1)], [("youtube", "video_required_for_target")]),
        (["instagram"], "hi", [], [("instagram", "media_required_for_target")]),
        (["tiktok"], "hi", [], [("tiktok", "media_required_for_target")]),
        (["linkedin"], "x" * 3001, [], [("linkedin", "content_too_long_for_target")]),
        (["instagram"], "x" * 2201, [IMG.format(1)], [("instagram", "content_too_long_for_target")]),
        (["tiktok"], "x" * 2201, [VID.format(1)], [("tiktok", "content_too_long_for_target")]),
        (["facebook"], "x" * 63207, [], [("facebook", "content_too_long_for_target")]),
        (["tiktok"], "x" * 91, [IMG.format(1), IMG.format(2)], [("tiktok", "title_too_long_for_target")]),
        (["facebook"], "hi", [BROKEN], [("facebook", "media_unreadable")]),
        (["facebook"], "hi", [GONE], [("facebook", "media_unreadable")]),
        (["facebook"], "hi", ["http://cdn.example.com/plain-http.jpg"], [("facebook", "media_unreadable")]),
        (["facebook"], "hi", ["ftp://cdn.example.com/x.jpg"], [("facebook", "media_unreadable")]),
    ],
)
def test_each_per_target_code_alone(client, owner, sandbox, targets, content, media, expected):
    r = post(client, owner, 400, targets=targets, content=content, mediaUrls=media)
    assert r.json()["error"] == "invalid_targets"
    assert details(r) == expected
    assert all(d["message"] for d in r.json()["details"])
    assert Post.select().count() == 0 and Job.select().count() == 0


@pytest.mark.parametrize(
    "targets,content,media",
    [
        (["linkedin"], "x" * 3000, []),
        (["instagram", "tiktok"], "x" * 2200, [VID.format(1)]),
        (["tiktok"], "x" * 90, [IMG.format(1), IMG.format(2)]),
        (["facebook"], "x" * 63206, []),
        (["youtube"], "A title\nand a description", [VID.format(1)]),
        (["instagram", "tiktok", "linkedin"], "ten images", [IMG.format(i) for i in range(10)]),
        (
            ["facebook"],
            "only the first is used",
            [VID.format(1), IMG.format(2), BROKEN.replace("broken", "x")],
        ),
    ],
)
def test_limits_are_inclusive(client, owner, sandbox, subscribed, targets, content, media):
    media = [m for m in media if not m.endswith(".bin")]
    post(client, owner, 202, targets=targets, content=content, mediaUrls=media)


def test_every_failure_across_networks_in_one_400(client, owner, sandbox):
    r = post(
        client,
        owner,
        400,
        content="y" * 3100,
        mediaUrls=[IMG.format(1), GONE],
        targets=[
            "facebook",
            "linkedin",
            "instagram",
            "tiktok",
            "youtube",
            "orkut",
            "facebook",
            {"platform": "tiktok", "channelId": "acc_unknown"},
        ],
        scheduledAt=future(seconds=-5),
    )
    got = details(r)
    assert r.json()["error"] == "invalid_targets"
    for expected in [
        ("linkedin", "content_too_long_for_target"),
        ("instagram", "content_too_long_for_target"),
        ("tiktok", "content_too_long_for_target"),
        ("tiktok", "title_too_long_for_target"),
        ("orkut", "invalid_target"),
        ("facebook", "duplicate_target"),
        ("tiktok", "channel_not_connected"),
        ("facebook", "media_unreadable"),
        ("youtube", "media_unreadable"),
        ("facebook", "scheduled_at_in_past"),
        ("youtube", "scheduled_at_in_past"),
    ]:
        assert expected in got, (expected, got)
    # the unreadable media is the cause to fix first: no "video required" noise for youtube
    assert ("youtube", "video_required_for_target") not in got
    unknown = [d for d in r.json()["details"] if d["error"] == "channel_not_connected"]
    assert unknown[0]["channelId"] == "acc_unknown"
    assert "linkedin" in r.json()["message"] and Post.select().count() == 0


def test_no_account_for_the_network(settings, client, owner):
    accounts_service.connect_sandbox(settings, owner.workspace_id, "facebook", "Only page")
    r = post(client, owner, 400, targets=["facebook", "linkedin"])
    assert details(r) == [("linkedin", "channel_not_connected")]


def test_channel_of_another_network_or_workspace_or_disconnected(
    settings, client, owner, other_owner, sandbox, subscribed
):
    theirs = accounts_service.connect_sandbox(settings, other_owner.workspace_id, "facebook", "Their page")
    gone = accounts_service.connect_sandbox(settings, owner.workspace_id, "linkedin", "Old page")
    accounts_service.disconnect(owner.workspace_id, gone.id)
    r = post(
        client,
        owner,
        400,
        targets=[
            {"platform": "facebook", "channelId": theirs.id},
            {"platform": "linkedin", "channelId": sandbox["facebook"]["id"]},
            {"platform": "linkedin", "channelId": gone.id},
        ],
    )
    assert details(r) == [
        ("facebook", "channel_not_connected"),
        ("linkedin", "channel_not_connected"),
        ("linkedin", "channel_not_connected"),
    ]


def test_two_accounts_on_one_network_channel_selection(settings, client, owner, sandbox, subscribed):
    second = accounts_service.connect_sandbox(settings, owner.workspace_id, "tiktok", "Second TikTok")
    default = sandbox["tiktok"]["id"]
    media = [VID.format(1)]
    # a plain name picks the default (oldest connected active account)
    r = post(client, owner, 202, targets=["tiktok"], mediaUrls=media)
    assert [t["accountId"] for t in r.json()["targets"]] == [default]
    # channelId picks the exact account
    r = post(client, owner, 202, targets=[{"platform": "tiktok", "channelId": second.id}], mediaUrls=media)
    assert [(t["accountId"], t["accountName"]) for t in r.json()["targets"]] == [(second.id, "Second TikTok")]
    # both accounts of one network in one post are two distinct targets
    r = post(
        client,
        owner,
        202,
        targets=["tiktok", {"platform": "tiktok", "channelId": second.id}],
        mediaUrls=media,
    )
    assert [t["accountId"] for t in r.json()["targets"]] == [default, second.id]
    # the default named twice, once by name and once by id: a duplicate
    r = post(
        client, owner, 400, targets=["tiktok", {"platform": "tiktok", "channelId": default}], mediaUrls=media
    )
    assert details(r) == [("tiktok", "duplicate_target")]
    # {platform} without channelId is the default too
    r = post(client, owner, 202, targets=[{"platform": "tiktok"}], mediaUrls=media)
    assert [t["accountId"] for t in r.json()["targets"]] == [default]
    # when the default is disconnected, the next oldest becomes the default
    accounts_service.disconnect(owner.workspace_id, default)
    r = post(client, owner, 202, targets=["tiktok"], mediaUrls=media)
    assert [t["accountId"] for t in r.json()["targets"]] == [second.id]


def test_needs_reauth_account_is_not_connected(client, owner, sandbox):
    from backend.store.models import Account

    Account.update(status="needs_reauth").where(Account.id == sandbox["linkedin"]["id"]).execute()
    r = post(client, owner, 400, targets=["linkedin"])
    assert details(r) == [("linkedin", "channel_not_connected")]
    r = post(client, owner, 400, targets=[{"platform": "linkedin", "channelId": sandbox["linkedin"]["id"]}])
    assert "reconnected" in r.json()["details"][0]["message"]


@pytest.mark.parametrize(
    "body,field",
    [
        ({"targets": []}, "targets"),
        ({"targets": ["facebook"] * 21}, "targets"),
        ({"targets": ["facebook"], "mediaUrls": [IMG.format(i) for i in range(11)]}, "mediaUrls"),
        ({"targets": ["facebook"], "content": None}, "content"),
        ({"targets": ["facebook"], "options": {"instagram": {"reel": True}}}, "options.instagram"),
        ({"targets": ["tiktok"], "options": {"tiktok": {"postMode": "LIVE"}}}, "options.tiktok.postMode"),
        ({"targets": ["youtube"], "options": {"youtube": {"tags": ["x" * 501]}}}, "options.youtube.tags"),
        ({"targets": [{"platform": "facebook", "account": "x"}]}, "targets"),
        ({"targets": ["facebook"], "idempotencyKey": ""}, "idempotencyKey"),
    ],
)
def test_body_validation_400(client, owner, sandbox, body, field):
    r = post(client, owner, 400, **body)
    assert r.json()["error"] == "validation_error"
    assert any(d["field"].startswith(field) for d in r.json()["details"]), r.json()["details"]


def test_twenty_targets_accepted(settings, client, owner, subscribed):
    for i in range(4):
        accounts_service.connect_sandbox(settings, owner.workspace_id, "facebook", f"Page {i}")
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))
    ids = [
        accounts_service.connect_sandbox(settings, owner.workspace_id, p, f"{p} {i}").id
        for p in ("linkedin", "facebook")
        for i in range(8)
    ]
    targets = [{"platform": "linkedin" if i < 8 else "facebook", "channelId": a} for i, a in enumerate(ids)]
    targets += ["facebook"] * 0
    targets += [
        {"platform": "facebook", "channelId": a.id}
        for a in accounts_service.active_accounts(owner.workspace_id)
        if a.platform == "facebook" and a.id not in ids
    ][:4]
    assert len(targets) == 20
    r = post(client, owner, 202, targets=targets)
    assert len(r.json()["targets"]) == 20


def test_tiktok_and_youtube_options_stored_and_echoed(client, owner, sandbox):
    opts = {
        "tiktok": {"postMode": "MEDIA_UPLOAD", "privacyLevel": "SELF_ONLY", "disableComment": True},
        "youtube": {
            "privacyStatus": "unlisted",
            "madeForKids": False,
            "title": "My short",
            "tags": ["a", "b c"],
            "containsSyntheticMedia": True,
        },
    }
    r = post(client, owner, 202, targets=["tiktok", "youtube"], mediaUrls=[VID.format(1)], options=opts)
    got = r.json()["options"]
    assert got["tiktok"]["postMode"] == "MEDIA_UPLOAD" and got["tiktok"]["privacyLevel"] == "SELF_ONLY"
    assert got["youtube"]["title"] == "My short" and got["youtube"]["containsSyntheticMedia"] is True
    r = client.get(f"/v1/posts/{r.json()['id']}", headers=key_headers(owner.api_key))
    assert r.json()["options"] == got


def test_youtube_title_option_over_100(client, owner, sandbox):
    r = post(
        client,
        owner,
        400,
        targets=["youtube"],
        mediaUrls=[VID.format(1)],
        options={"youtube": {"title": "t" * 101}},
    )
    assert details(r) == [("youtube", "title_too_long_for_target")]


def test_tiktok_rejects_png_photos(client, owner, sandbox):
    r = post(
        client, owner, 400, targets=["tiktok"], content="short", mediaUrls=[PNG.format(1), PNG.format(2)]
    )
    assert details(r) == [("tiktok", "media_unsupported_for_target")]


def test_remote_media_probed_once_each(client, owner, sandbox, remote_media):
    urls = [IMG.format(i) for i in range(3)]
    post(client, owner, 202, targets=["facebook", "instagram", "linkedin"], mediaUrls=urls)
    assert sorted(remote_media) == sorted(urls)


# ------------------------------------------------------------------------------------------- idempotency


def test_same_idempotency_key_returns_existing_with_200(settings, client, owner, sandbox):
    first = post(client, owner, 202, targets=["facebook"], idempotencyKey="launch-42").json()
    again = post(client, owner, 200, targets=["facebook"], idempotencyKey="launch-42").json()
    assert again == first
    assert Post.select().count() == 1 and Job.select().count() == 1
    # another workspace may use the same key
    other = make_owner(client.app.state.settings, "Third", "third@test.local")
    accounts_service.connect_sandbox(settings, other.workspace_id, "facebook", "Theirs")
    assert (
        post(client, other, 202, targets=["facebook"], idempotencyKey="launch-42").json()["id"] != first["id"]
    )


@pytest.mark.parametrize("n", [8])
def test_idempotency_under_concurrent_requests(client, owner, sandbox, n):
    barrier = threading.Barrier(n)
    results: list[tuple[int, str]] = []
    lock = threading.Lock()

    def run() -> None:
        barrier.wait()
        r = client.post(
            "/v1/posts",
            headers=key_headers(owner.api_key),
            json={"targets": ["facebook", "linkedin"], "content": "race", "idempotencyKey": "same-key"},
        )
        with lock:
            results.append((r.status_code, r.json().get("id", r.text)))

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(c for c, _ in results)
    assert codes == [200] * (n - 1) + [202], results
    assert len({i for _, i in results}) == 1
    assert Post.select().count() == 1 and PostTarget.select().count() == 2 and Job.select().count() == 1
    assert Workspace.get_by_id(owner.workspace_id).free_posts_used == 1


def test_the_same_key_with_another_body_is_409_idempotency_key_reused(client, owner, sandbox):
    """Issue 30 item 9: a key reused with a different body returned the first post silently (Stripe answers an
    error). The same request (whatever the spelling of the same values) replays; another one is 409."""
    first = post(
        client,
        owner,
        202,
        targets=["facebook", {"platform": "linkedin"}],
        content="Launch",
        scheduledAt="2099-01-01T10:00:00+01:00",
        options=None,
        idempotencyKey="launch-43",
    ).json()
    same = post(
        client,
        owner,
        200,
        targets=[{"platform": "facebook"}, "linkedin"],
        content="Launch",
        scheduledAt="2099-01-01T09:00:00Z",
        mediaUrls=[],
        idempotencyKey="launch-43",
    ).json()
    assert same["id"] == first["id"]
    for change in (
        {"content": "Launch!"},
        {"targets": ["facebook"]},
        {"scheduledAt": "2099-01-01T11:00:00Z"},
        {"labels": {"team": "brand"}},
    ):
        body = {
            "targets": ["facebook", "linkedin"],
            "content": "Launch",
            "scheduledAt": "2099-01-01T09:00:00Z",
            "idempotencyKey": "launch-43",
        } | change
        r = client.post("/v1/posts", json=body, headers=key_headers(owner.api_key))
        assert r.status_code == 409, (change, r.text)
        assert r.json()["error"] == "idempotency_key_reused"
        assert r.json()["details"] == [{"field": "idempotencyKey", "postId": first["id"]}]
    assert Post.select().count() == 1


def test_racing_requests_with_one_key_and_different_bodies_create_one_post(client, owner, sandbox):
    barrier = threading.Barrier(6)
    results: list[int] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        barrier.wait()
        r = client.post(
            "/v1/posts",
            headers=key_headers(owner.api_key),
            json={"targets": ["facebook"], "content": f"race {i % 2}", "idempotencyKey": "raced-key"},
        )
        with lock:
            results.append(r.status_code)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [200, 200, 202, 409, 409, 409]
    assert Post.select().count() == 1


# ------------------------------------------------------------------------------------------- free publications


def test_three_free_publications_then_402(client, owner, sandbox):
    for i in range(plans.FREE_PUBLICATIONS):
        post(client, owner, 202, targets=["facebook"], idempotencyKey=f"k{i}")
    r = post(client, owner, 402, targets=["facebook"])
    assert r.json()["error"] == "subscription_required"
    assert Post.select().count() == plans.FREE_PUBLICATIONS
    # a replay of an accepted post is not a new publication
    post(client, owner, 200, targets=["facebook"], idempotencyKey="k0")
    ws = client.get("/v1/workspace", headers=key_headers(owner.api_key)).json()
    assert ws["freePublicationsLeft"] == 0
    # a current subscription publishes without limit
    ws_service.set_plan(owner.workspace_id, "STARTER", "active", clock.now() + timedelta(days=30))
    post(client, owner, 202, targets=["facebook"])
    assert Workspace.get_by_id(owner.workspace_id).free_posts_used == plans.FREE_PUBLICATIONS
    # lapsed: back to 402
    ws_service.set_plan(owner.workspace_id, "STARTER", "past_due", clock.now() + timedelta(days=30))
    post(client, owner, 402, targets=["facebook"])


def test_invalid_posts_do_not_use_free_publications(client, owner, sandbox):
    post(client, owner, 400, targets=["youtube"])
    assert Workspace.get_by_id(owner.workspace_id).free_posts_used == 0


def test_cancelled_post_gives_its_free_publication_back(client, owner, sandbox):
    ids = [
        post(client, owner, 202, targets=["facebook"], scheduledAt=future(days=1)).json()["id"]
        for _ in range(plans.FREE_PUBLICATIONS)
    ]
    post(client, owner, 402, targets=["facebook"])
    assert client.delete(f"/v1/posts/{ids[0]}", headers=key_headers(owner.api_key)).status_code == 204
    post(client, owner, 202, targets=["facebook"])
    post(client, owner, 402, targets=["facebook"])


def test_free_publications_hold_under_concurrency(client, owner, sandbox):
    n = 8
    barrier = threading.Barrier(n)
    codes: list[int] = []

    def run(i: int) -> None:
        barrier.wait()
        r = client.post(
            "/v1/posts",
            headers=key_headers(owner.api_key),
            json={"targets": ["facebook"], "content": f"post {i}"},
        )
        codes.append(r.status_code)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [202] * plans.FREE_PUBLICATIONS + [402] * (n - plans.FREE_PUBLICATIONS)
    assert Post.select().count() == plans.FREE_PUBLICATIONS
    assert Workspace.get_by_id(owner.workspace_id).free_posts_used == plans.FREE_PUBLICATIONS


def test_scope_and_auth(client, owner, sandbox):
    from tests.conftest import session_headers

    key = client.post(
        "/v1/api-keys",
        json={"name": "media only", "scopes": ["media:write"]},
        headers=session_headers(owner.session_token),
    ).json()["key"]
    r = client.post("/v1/posts", headers=key_headers(key), json={"targets": ["facebook"], "content": "x"})
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"
    r = client.post("/v1/posts", json={"targets": ["facebook"], "content": "x"})
    assert r.status_code == 401

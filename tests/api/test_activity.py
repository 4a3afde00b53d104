"""GET /v1/activity (extension): outcomes per local day (DST days of 23 and 25 hours), totals and success rate,
the latest failures newest first; scope, validation, workspace isolation; the real engine's outcomes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from backend import clock
from backend.ids import new_id
from backend.jobs.worker import Worker
from backend.services import accounts, keys
from backend.services import workspace as ws_service
from backend.store.models import Post, PostTarget
from tests.conftest import key_headers, session_headers

PARIS = "Europe/Paris"


@pytest.fixture
def fast(settings, owner):  # type: ignore[no-untyped-def]
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    return settings


def finished(
    workspace_id: str,
    at: datetime,
    targets: list[tuple[str, str]],
    *,
    reason: str = "refused by the network",
    fail_type: str = "permanent",
) -> str:
    """A post that finished at `at`, with targets [(platform, final status)]; its overall status as the engine
    settles it."""
    statuses = [s for _, s in targets]
    ok = [s for s in statuses if s != "failed"]
    overall = "completed" if len(ok) == len(statuses) else "failed" if not ok else "partial"
    post_id = new_id("post")
    Post.create(
        id=post_id,
        workspace=workspace_id,
        status=overall,
        content="x",
        created_at=at - timedelta(minutes=5),
        updated_at=at,
        sent_at=at - timedelta(minutes=1),
        completed_at=at,
    )
    for i, (platform, status) in enumerate(targets):
        failed = status == "failed"
        PostTarget.create(
            id=new_id("tgt"),
            post=post_id,
            position=i,
            platform=platform,
            account=None,
            account_name=f"{platform} account",
            status=status,
            fail_reason=reason if failed else None,
            fail_type=fail_type if failed else None,
            idempotency_token=uuid.uuid4().hex,
            updated_at=at,
            completed_at=at - timedelta(seconds=len(targets) - i),
        )
    return post_id


def get(client, owner, expect: int = 200, **params):  # type: ignore[no-untyped-def]
    r = client.get("/v1/activity", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == expect, r.text
    return r.json()


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


def test_counts_per_local_day_totals_and_success_rate(client, owner, fast):
    now = utc(2027, 1, 15, 8, 0)  # 09:00 in Paris
    ws = owner.workspace_id
    with time_machine.travel(now, tick=False):
        finished(ws, utc(2027, 1, 15, 7, 0), [("facebook", "succeeded"), ("linkedin", "succeeded")])
        finished(
            ws, utc(2027, 1, 14, 23, 30), [("facebook", "succeeded"), ("tiktok", "inbox_delivered")]
        )  # 00:30 Paris
        finished(
            ws, utc(2027, 1, 14, 22, 30), [("facebook", "succeeded"), ("linkedin", "failed")]
        )  # 23:30 the 14th
        finished(ws, utc(2027, 1, 10, 12, 0), [("youtube", "failed")])
        finished(ws, utc(2026, 12, 1, 12, 0), [("facebook", "succeeded")])  # before the 30 days
        out = get(client, owner, days=30, tz=PARIS)
    assert out["days"] == 30 and out["timezone"] == PARIS
    assert out["start"] == "2026-12-16T23:00:00.000Z" and out["end"] == "2027-01-15T23:00:00.000Z"
    days = {d["date"]: d for d in out["perDay"]}
    assert (
        len(out["perDay"]) == 30
        and out["perDay"][0]["date"] == "2026-12-17"
        and out["perDay"][-1]["date"] == "2027-01-15"
    )
    assert days["2027-01-15"]["posts"] == {"completed": 2, "partial": 0, "failed": 0}
    assert days["2027-01-15"]["targets"] == {"succeeded": 3, "inboxDelivered": 1, "failed": 0}
    assert days["2027-01-14"]["posts"] == {"completed": 0, "partial": 1, "failed": 0}
    assert days["2027-01-14"]["targets"] == {"succeeded": 1, "inboxDelivered": 0, "failed": 1}
    assert days["2027-01-10"]["posts"]["failed"] == 1
    assert sum(sum(d["posts"].values()) for d in out["perDay"]) == 4
    assert out["totals"]["posts"] == {"completed": 2, "partial": 1, "failed": 1}
    assert out["totals"]["targets"] == {"succeeded": 4, "inboxDelivered": 1, "failed": 2}
    assert out["totals"]["successRate"] == pytest.approx(5 / 7)
    # in UTC the 00:30 Paris post is on the 14th
    with time_machine.travel(now, tick=False):
        utc_days = {d["date"]: d for d in get(client, owner, days=30)["perDay"]}
    assert utc_days["2027-01-14"]["posts"] == {"completed": 1, "partial": 1, "failed": 0}


def test_dst_days_last_23_and_25_hours_and_count_by_local_midnight(client, owner, fast):
    ws = owner.workspace_id
    with time_machine.travel(utc(2027, 3, 30, 12, 0), tick=False):
        finished(ws, utc(2027, 3, 27, 23, 30), [("facebook", "succeeded")])  # 00:30 CET on the 28th
        finished(ws, utc(2027, 3, 28, 21, 59), [("facebook", "succeeded")])  # 23:59 CEST on the 28th
        finished(ws, utc(2027, 3, 28, 22, 0), [("facebook", "failed")])  # 00:00 CEST on the 29th
        out = get(client, owner, days=5, tz=PARIS)
    days = {d["date"]: d for d in out["perDay"]}
    spring = days["2027-03-28"]
    assert (spring["start"], spring["end"]) == (
        "2027-03-27T23:00:00.000Z",
        "2027-03-28T22:00:00.000Z",
    )  # 23 h
    assert spring["posts"]["completed"] == 2 and days["2027-03-29"]["posts"]["failed"] == 1
    with time_machine.travel(utc(2027, 11, 1, 12, 0), tick=False):
        finished(ws, utc(2027, 10, 31, 22, 30), [("linkedin", "succeeded")])  # 23:30 CET on the 31st
        out = get(client, owner, days=3, tz=PARIS)
    autumn = {d["date"]: d for d in out["perDay"]}["2027-10-31"]
    assert (autumn["start"], autumn["end"]) == (
        "2027-10-30T22:00:00.000Z",
        "2027-10-31T23:00:00.000Z",
    )  # 25 h
    assert autumn["posts"]["completed"] == 1


def test_one_day_is_today(client, owner, fast):
    with time_machine.travel(utc(2027, 1, 15, 8, 0), tick=False):
        finished(owner.workspace_id, utc(2027, 1, 15, 7, 0), [("facebook", "succeeded")])
        finished(
            owner.workspace_id, utc(2027, 1, 14, 22, 59), [("facebook", "succeeded")]
        )  # yesterday in Paris
        out = get(client, owner, days=1, tz=PARIS)
    assert [d["date"] for d in out["perDay"]] == ["2027-01-15"] and out["totals"]["posts"]["completed"] == 1


def test_half_hour_zone(client, owner, fast):
    with time_machine.travel(utc(2027, 1, 15, 12, 0), tick=False):
        finished(
            owner.workspace_id, utc(2027, 1, 14, 18, 45), [("facebook", "succeeded")]
        )  # 00:15 in Kolkata
        out = get(client, owner, days=2, tz="Asia/Kolkata")
    assert [sum(d["posts"].values()) for d in out["perDay"]] == [0, 1]


def test_latest_failures_newest_first_with_reason_and_type(client, owner, fast):
    ws = owner.workspace_id
    with time_machine.travel(utc(2027, 1, 15, 8, 0), tick=False):
        old = finished(ws, utc(2027, 1, 12, 9, 0), [("youtube", "failed")], reason="video refused")
        new = finished(
            ws,
            utc(2027, 1, 14, 9, 0),
            [("facebook", "succeeded"), ("linkedin", "failed")],
            reason="rate limited, retried 3 times",
            fail_type="retriable",
        )
        finished(ws, utc(2027, 1, 13, 9, 0), [("facebook", "succeeded")])
        out = get(client, owner, tz=PARIS)
        assert get(client, owner, failures=1)["failures"][0]["postId"] == new
        assert get(client, owner, failures=0)["failures"] == []
    assert [(f["postId"], f["platform"], f["failType"], f["failReason"]) for f in out["failures"]] == [
        (new, "linkedin", "retriable", "rate limited, retried 3 times"),
        (old, "youtube", "permanent", "video refused"),
    ]
    assert out["failures"][0]["accountName"] == "linkedin account" and out["failures"][0]["completedAt"]


def test_outcomes_of_the_real_engine(settings, client, owner, fast):
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    r = client.post(
        "/v1/accounts",
        json={"platform": "linkedin", "name": "LinkedIn broken", "behaviour": "fail-permanent"},
        headers=session_headers(owner.session_token),
    )
    bad = r.json()["id"]
    body = {"targets": ["facebook", {"platform": "linkedin", "channelId": bad}], "content": "Hello"}
    post = client.post("/v1/posts", json=body, headers=key_headers(owner.api_key)).json()
    client.post(
        "/v1/posts",
        json={
            "targets": ["facebook"],
            "content": "Later",
            "scheduledAt": clock.iso(clock.now() + timedelta(days=2)),
        },
        headers=key_headers(owner.api_key),
    )
    assert get(client, owner)["totals"]["posts"] == {"completed": 0, "partial": 0, "failed": 0}
    Worker(fast, concurrency=1).run_until_idle(max_seconds=20, settle_s=2)
    out = get(client, owner)
    assert out["totals"]["posts"] == {"completed": 0, "partial": 1, "failed": 0}  # the scheduled one: not yet
    assert out["perDay"][-1]["targets"] == {"succeeded": 1, "inboxDelivered": 0, "failed": 1}
    [failure] = out["failures"]
    assert (failure["postId"], failure["accountId"], failure["accountName"]) == (
        post["id"],
        bad,
        "LinkedIn broken",
    )
    assert failure["failType"] == "permanent" and failure["failReason"]


def test_workspaces_are_isolated(client, owner, other_owner, fast):
    with time_machine.travel(utc(2027, 1, 15, 8, 0), tick=False):
        finished(owner.workspace_id, utc(2027, 1, 15, 7, 0), [("facebook", "failed")])
        mine, theirs = get(client, owner), get(client, other_owner)
    assert mine["totals"]["posts"]["failed"] == 1 and len(mine["failures"]) == 1
    assert (
        theirs["totals"]["posts"] == {"completed": 0, "partial": 0, "failed": 0} and theirs["failures"] == []
    )
    assert theirs["totals"]["successRate"] is None


@pytest.mark.parametrize(
    "scopes,status",
    [
        (["workspace:read"], 200),
        (["publish:posts"], 200),
        (["media:write"], 200),
        (["accounts:read"], 403),
        (["publish:tiktok", "generations:write", "videos:read"], 403),
    ],
)
def test_scope(client, owner, scopes, status):
    _, key = keys.create(owner.workspace_id, "k", None, scopes)
    r = client.get("/v1/activity", headers=key_headers(key))
    assert r.status_code == status, r.text
    if status == 403:
        assert r.json()["error"] == "insufficient_scope"


def test_session_and_no_credential(client, owner):
    assert client.get("/v1/activity", headers=session_headers(owner.session_token)).status_code == 200
    r = client.get("/v1/activity")
    assert r.status_code == 401 and r.json()["error"] == "invalid_api_key"


@pytest.mark.parametrize(
    "params,code",
    [
        ({"tz": "Mars/Olympus"}, "invalid_timezone"),
        ({"tz": "../etc/passwd"}, "invalid_timezone"),
        ({"tz": "Europe/Paris\x00"}, "validation_error"),  # a NUL in any query value (ApiMiddleware)
        ({"tz": ""}, "validation_error"),
        ({"days": 0}, "validation_error"),
        ({"days": 91}, "validation_error"),
        ({"failures": 101}, "validation_error"),
    ],
)
def test_bad_parameters_400(client, owner, params, code):
    r = client.get("/v1/activity", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == code, r.text


def test_the_document_states_every_zone_tz_takes(client, owner):
    """Issue 30 item 9: `tz` was any string in the document; it is the zone database's names (an enum), exactly
    what the API takes: a name of the enum is answered, a name outside it (even one a zone file exists for) is
    400 invalid_timezone."""
    from zoneinfo import available_timezones

    doc = client.get("/openapi.json").json()
    tz = next(p for p in doc["paths"]["/v1/activity"]["get"]["parameters"] if p["name"] == "tz")
    assert set(tz["schema"]["enum"]) == available_timezones()
    h = key_headers(owner.api_key)
    for name in ("Pacific/Chatham", "Etc/GMT+12", "UTC"):
        assert client.get("/v1/activity", params={"tz": name}, headers=h).status_code == 200
    for name in ("posix/Europe/Paris", "utc", "Europe/../Europe/Paris"):
        r = client.get("/v1/activity", params={"tz": name}, headers=h)
        assert r.status_code == 400 and r.json()["error"] == "invalid_timezone", name

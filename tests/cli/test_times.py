"""Times for people: tables show times in the user's zone with the zone named; --utc and --tz ZONE change it;
--json keeps the API's ISO 8601 UTC; a target's nextAttemptAt shows as "next attempt in 4 min"."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import click
import httpx
import pytest
import time_machine
from click.testing import CliRunner

from socialpub_tui import times as _time
from socialpub_tui.cli.main import cli

# Europe/Paris changes to summer time on 2027-03-28 (02:00 CET -> 03:00 CEST).
BEFORE_DST = "2027-03-27T08:00:00Z"  # 09:00 CET
AFTER_DST = "2027-03-29T07:00:00Z"  # 09:00 CEST


def target(**extra: Any) -> dict[str, Any]:
    return {
        "platform": "linkedin",
        "accountId": "acc_1",
        "accountName": "Acme page",
        "status": "pending",
        "externalPostId": None,
        "postUrl": None,
        "failReason": None,
        "failType": None,
        "completedAt": None,
        **extra,
    }


def post(pid: str, scheduled_at: str | None, **target_extra: Any) -> dict[str, Any]:
    return {
        "id": pid,
        "status": "scheduled" if scheduled_at else "processing",
        "scheduledAt": scheduled_at,
        "createdAt": "2027-01-15T08:00:00.000Z",
        "updatedAt": "2027-01-15T08:00:00.000Z",
        "content": "hello",
        "mediaUrls": [],
        "options": {},
        "idempotencyKey": None,
        "targets": [target(**target_extra)],
    }


POSTS = {"post_a": post("post_a", BEFORE_DST), "post_b": post("post_b", AFTER_DST)}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[dict[str, Any]]:
    """The CLI talking to a fake /v1 server (httpx.MockTransport) serving POSTS; config in tmp_path."""
    import socialpub_tui.client as client_pkg
    from socialpub_tui.client.sync import Client

    served: dict[str, Any] = dict(POSTS)
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        path = request.url.path
        if path == "/v1/posts":
            items = [v for k, v in served.items() if not k.startswith("_")]
            return httpx.Response(200, json={"items": items, "nextCursor": None})
        if path.startswith("/v1/posts/"):
            return httpx.Response(200, json=served[path.rsplit("/", 1)[1]])
        return httpx.Response(404, json={"error": "not_found", "message": path, "details": []})

    def connect(profile: Any = None, **_: Any) -> Client:
        return Client("http://api.test", api_key="k", transport=httpx.MockTransport(handler))

    served["_requests"] = requests
    monkeypatch.setattr(client_pkg, "connect", connect)
    monkeypatch.setenv("SOCIALPUB_CONFIG", str(tmp_path / "config.yaml"))
    for name in ("SOCIALPUB_PROFILE", "SOCIALPUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    yield served


@pytest.fixture
def local_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set the process's local zone (TZ) for a test, restored afterwards."""

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.delenv("TZ", raising=False)
    time.tzset()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# ---- formatting ------------------------------------------------------------------------------------------


def test_display_zone_names_the_zone_across_a_dst_change() -> None:
    paris = _time.DisplayZone("Europe/Paris")
    assert paris.format(BEFORE_DST) == "2027-03-27 09:00 CET"
    assert paris.format(AFTER_DST) == "2027-03-29 09:00 CEST"
    assert _time.DisplayZone("UTC").format(AFTER_DST) == "2027-03-29 07:00 UTC"
    assert _time.DisplayZone("Asia/Kolkata").format("2027-01-15T08:00:00.000Z") == "2027-01-15 13:30 IST"
    assert paris.format(None) == "-" and paris.format("not a time") == "not a time"


def test_relative() -> None:
    now = datetime(2027, 1, 15, 8, 0, tzinfo=UTC)

    def at(seconds: float) -> datetime:
        return now + timedelta(seconds=seconds)

    assert _time.relative(at(10), now) == "now"
    assert _time.relative(at(240), now) == "in 4 min"
    assert _time.relative(at(2 * 3600 + 300), now) == "in 2 h 5 min"
    assert _time.relative(at(3 * 86400), now) == "in 3 days"
    assert _time.relative(at(-120), now) == "2 min ago"


def test_relative_says_the_two_largest_units() -> None:
    now = datetime(2027, 1, 15, 8, 0, tzinfo=UTC)

    def at(seconds: float) -> datetime:
        return now + timedelta(seconds=seconds)

    assert _time.relative(at(31 * 3600), now) == "in 1 day 7 h"  # not "in 1 day"
    assert _time.relative(at(3 * 3600 + 20 * 60), now) == "in 3 h 20 min"
    assert _time.relative(at(45 * 60), now) == "in 45 min"
    assert (
        _time.relative(at(2 * 86400 + 5 * 3600 + 40 * 60), now) == "in 2 days 6 h"
    )  # the smaller unit rounded
    assert _time.relative(at(86400 + 23 * 3600 + 45 * 60), now) == "in 2 days"  # …carried into the larger one
    assert _time.relative(at(86400 + 10 * 60), now) == "in 1 day"  # a zero smaller unit is left out
    assert _time.relative(at(-(26 * 3600)), now) == "1 day 2 h ago"
    assert _time.relative(at(40), now) == "in 1 min"  # never "in 0 min"


# ---- the commands ----------------------------------------------------------------------------------------


def test_tz_shows_wall_time_with_zone_across_dst(api: Any) -> None:
    r = run("posts", "list", "--tz", "Europe/Paris")
    assert r.exit_code == 0, r.output
    assert "2027-03-27 09:00 CET" in r.output and "2027-03-29 09:00 CEST" in r.output


def test_utc(api: Any) -> None:
    r = run("posts", "list", "--utc")
    assert r.exit_code == 0, r.output
    assert "2027-03-27 08:00 UTC" in r.output and "2027-03-29 07:00 UTC" in r.output
    r = run("posts", "show", "post_a", "--utc")
    assert r.exit_code == 0 and "scheduled 2027-03-27 08:00 UTC (2027-03-27T08:00:00Z)" in r.output


def test_default_is_the_system_zone(api: Any, local_zone: Any) -> None:
    local_zone("America/New_York")
    r = run("posts", "show", "post_a")
    assert r.exit_code == 0, r.output
    assert "scheduled 2027-03-27 04:00 EDT" in r.output  # New York is on summer time from 2027-03-14


def test_config_timezone_then_profile_timezone(api: Any, tmp_path: Any, local_zone: Any) -> None:
    local_zone("UTC")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("timezone: Asia/Tokyo\n")
    assert "2027-03-27 17:00 JST" in run("posts", "show", "post_a").output
    cfg.write_text(
        "timezone: Asia/Tokyo\ndefault: work\nprofiles:\n  work:\n    url: http://api.test\n"
        "    timezone: Europe/Paris\n"
    )
    assert "2027-03-27 09:00 CET" in run("posts", "show", "post_a").output
    assert "2027-03-27 08:00 UTC" in run("posts", "show", "post_a", "--utc").output  # the flag wins
    cfg.write_text("timezone: Mars/Olympus\n")
    r = run("posts", "show", "post_a")
    assert r.exit_code == 2 and "Mars/Olympus" in r.output


def test_json_stays_iso_utc(api: Any) -> None:
    r = run("posts", "show", "post_a", "--tz", "Asia/Tokyo", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["scheduledAt"] == BEFORE_DST


@pytest.mark.parametrize(
    "args",
    [
        ("posts", "list", "--tz", "Mars/Olympus"),
        ("posts", "show", "post_a", "--tz", "Mars/Olympus"),
        ("accounts", "list", "--tz", "Not/AZone"),
        ("media", "list", "--tz", "nowhere"),
        (
            "posts",
            "list",
            "--tz",
            "",
        ),  # not "the system's zone": a usage error like any other name that is not one
        ("posts", "list", "--tz", "Europe"),  # a folder of the zone database, not a zone (was a traceback)
        ("posts", "create", "x", "--to", "facebook", "--at", "09:00", "--tz", "America"),
    ],
)
def test_bad_zone_is_a_usage_error(api: Any, args: tuple[str, ...]) -> None:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--tz'" in r.output and "IANA name" in r.output


def test_bad_zone_with_json_is_a_json_usage_error(api: Any) -> None:
    r = CliRunner().invoke(cli, ["posts", "show", "post_a", "--tz", "Mars/Olympus", "--json"])
    assert r.exit_code == 2
    body = json.loads(r.stderr.strip().splitlines()[-1])
    assert body["error"] == "usage_error" and "Mars/Olympus" in body["message"]


def test_utc_and_tz_exclude_each_other(api: Any) -> None:
    r = CliRunner().invoke(cli, ["posts", "show", "post_a", "--utc", "--tz", "Europe/Paris"])
    assert r.exit_code == 2 and "not both" in r.output


def test_every_command_that_prints_times_has_utc_and_tz() -> None:
    ctx = click.Context(cli, info_name="socialpub")
    for path in [
        ("accounts", "list"),
        ("keys", "create"),
        ("keys", "list"),
        ("media", "list"),
        ("sandbox", "published"),
        ("workspace", "show"),
        ("workspace", "edit"),
        ("posts", "create"),
        ("posts", "list"),
        ("posts", "show"),
        ("posts", "edit"),
        ("posts", "retry"),
        ("login",),
        ("recipes", "plan"),
        ("recipes", "apply"),
        ("recipes", "watch"),
    ]:
        cmd: Any = cli.get_command(ctx, path[0])
        if len(path) > 1:
            cmd = cmd.get_command(ctx, path[1])
        opts = {o for p in cmd.params for o in p.opts}
        assert {"--utc", "--tz"} <= opts, path


@pytest.mark.parametrize(
    ("flags", "since"),
    [
        (("--utc",), "2027-03-27T00:00:00Z"),
        (("--tz", "Europe/Paris"), "2027-03-26T23:00:00Z"),
    ],
)
def test_wall_times_given_are_read_in_the_same_zone(api: Any, flags: tuple[str, ...], since: str) -> None:
    r = run("posts", "list", "--from", "2027-03-27 00:00", *flags)
    assert r.exit_code == 0, r.output
    assert api["_requests"][-1].url.params["from"] == since


# ---- next attempt ------------------------------------------------------------------------------------------


def test_next_attempt_shown_in_posts_show(capsys: pytest.CaptureFixture[str]) -> None:
    """A pending target with nextAttemptAt reads "next attempt in 4 min, at <time in the user's zone>"."""
    from backend.schemas.posts import PostOut, TargetOut
    from socialpub_tui.cli._common import Output
    from socialpub_tui.cli.posts import show_post

    class Target(TargetOut):  # the API's target with the field it gains in this redesign
        next_attempt_at: str | None = None

    class Post(PostOut):
        targets: list[Target]  # type: ignore[assignment]

    shown = Post.model_validate(
        post("post_w", None, nextAttemptAt="2027-01-15T08:04:00Z", failReason="rate limited by linkedin")
    )
    with (
        time_machine.travel(datetime(2027, 1, 15, 8, 0, tzinfo=UTC), tick=False),
        click.Context(click.Command("show")) as ctx,
    ):
        ctx.meta["socialpub.tz"] = "Europe/Paris"
        show_post(Output(False), shown)
    printed = capsys.readouterr().out
    assert "next attempt in 4 min: rate limited" in printed  # the table's cell
    assert "linkedin (Acme page) pending: next attempt in 4 min, at 2027-01-15 09:04 CET" in printed


def test_next_attempt_from_the_api(api: Any) -> None:
    """End to end through the client: the API's target carries nextAttemptAt."""
    api["post_w"] = post("post_w", None, nextAttemptAt="2027-01-15T08:04:00Z")
    with time_machine.travel(datetime(2027, 1, 15, 8, 0, tzinfo=UTC), tick=False):
        r = run("posts", "show", "post_w", "--tz", "Europe/Paris")
    assert r.exit_code == 0, r.output
    assert "next attempt in 4 min, at 2027-01-15 09:04 CET" in r.output
    with time_machine.travel(datetime(2027, 1, 15, 8, 0, tzinfo=UTC), tick=False):
        r = run("posts", "show", "post_w", "--json")
    assert json.loads(r.stdout)["targets"][0]["nextAttemptAt"] == "2027-01-15T08:04:00Z"


def test_embedded_scheduled_post_read_and_shown_in_the_zone(embedded: Any) -> None:
    from tests.cli.conftest import invoke

    r = invoke(
        "posts",
        "create",
        "summer",
        "--to",
        "facebook",
        "--at",
        "2099-07-01 09:00",
        "--tz",
        "Europe/Paris",
        "--json",
    )
    assert r.code == 0, r.err
    assert r.json()["scheduledAt"].startswith("2099-07-01T07:00:00")
    assert (
        "scheduled 2099-07-01 09:00 CEST"
        in invoke("posts", "show", r.json()["id"], "--tz", "Europe/Paris").out
    )
    listed = invoke("posts", "list", "--utc")
    assert listed.code == 0 and "2099-07-01 07:00 UTC" in listed.out
    assert invoke("accounts", "list", "--utc").out.count(" UTC") >= 5  # CONNECTED, one per sandbox account


def test_watch_logs_its_times_in_the_chosen_zone() -> None:
    from zoneinfo import ZoneInfo

    from recipes.watch import now_local

    assert now_local(ZoneInfo("Asia/Tokyo")).endswith("+09:00") and now_local(ZoneInfo("UTC")).endswith(
        "+00:00"
    )

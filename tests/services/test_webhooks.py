"""Webhook delivery (docs/webhooks.md) by the real worker to a real receiver on loopback: signatures checked with
the reference `standardwebhooks` library, rotation, retries (500, 429 + Retry-After, timeouts, 3xx), 410, a
receiver down for an hour then back (the clock moved), the order of a post's publish events, generation bodies."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
import time_machine
from standardwebhooks import Webhook

from backend import clock
from backend.jobs.worker import Worker
from backend.services import accounts
from backend.store.models import Event, WebhookDelivery, WebhookEndpoint
from tests.conftest import key_headers
from tests.support.receiver import Answer, Receiver


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture
def fast(settings, owner):  # type: ignore[no-untyped-def]
    from backend.services import workspace

    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    settings.allow_private_urls = True
    settings.webhook_retry_schedule = "0,0,0"
    settings.webhook_timeout_s = 2.0
    return settings


def run(settings, seconds: float = 20.0) -> int:  # type: ignore[no-untyped-def]
    return Worker(settings, concurrency=4).run_until_idle(max_seconds=seconds, settle_s=0.5)


def add(client, owner, url, **body):  # type: ignore[no-untyped-def]
    r = client.post("/v1/webhooks", json={"url": url, **body}, headers=key_headers(owner.api_key))
    assert r.status_code == 201, r.text
    return r.json()


def endpoint(client, owner, ep_id):  # type: ignore[no-untyped-def]
    return client.get(f"/v1/webhooks/{ep_id}", headers=key_headers(owner.api_key)).json()


def deliveries(client, owner, ep_id, **params):  # type: ignore[no-untyped-def]
    r = client.get(f"/v1/webhooks/{ep_id}/deliveries", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    return r.json()["items"]


def post_to(client, owner, targets, content="Hello webhooks"):  # type: ignore[no-untyped-def]
    r = client.post(
        "/v1/posts", json={"targets": targets, "content": content}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 202, r.text
    return r.json()


def test_publish_events_arrive_signed_one_per_network(settings, client, owner, fast):
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    with Receiver() as rx:
        ep = add(client, owner, rx.url)
        post = post_to(client, owner, ["facebook", "linkedin"])
        run(fast)
        got = rx.wait_for(2)
    assert len(got) == 2
    seen = {}
    for req in got:
        event = Webhook(ep["secret"]).verify(req.body, req.headers)
        assert req.headers["socialpub-event-type"] == event["type"] == "publish.completed"
        assert req.headers["webhook-id"] == event["id"]
        seen[event["data"]["platform"]] = event["data"]
    assert set(seen) == {"facebook", "linkedin"}
    for data in seen.values():
        assert data["postId"] == post["id"] and data["postUrl"].startswith("http") and data["accountId"]
        assert data["status"] == "succeeded"
    log = deliveries(client, owner, ep["id"])
    assert {d["status"] for d in log} == {"succeeded"}
    assert all(d["attempts"] == 1 and d["attemptLog"][0]["statusCode"] == 200 for d in log)
    assert endpoint(client, owner, ep["id"])["lastStatusCode"] == 200


def test_type_filter_and_failed_events(settings, client, owner, fast):
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    bad = client.post(
        "/v1/accounts",
        json={"platform": "linkedin", "name": "broken", "behaviour": "fail-permanent"},
        headers={"Authorization": f"Bearer {owner.session_token}"},
    ).json()["id"]
    with Receiver() as rx:
        add(client, owner, rx.url, events=["publish.failed"])
        post_to(client, owner, ["facebook", {"platform": "linkedin", "channelId": bad}])
        run(fast)
        got = rx.wait_for(1)
    assert len(got) == 1
    event = json.loads(got[0].body)
    assert event["type"] == "publish.failed" and event["data"]["platform"] == "linkedin"
    assert event["data"]["failReason"] and event["data"]["failType"] == "permanent"


def test_generation_event_body_is_exactly_the_generation(client, owner, fast):
    with Receiver() as rx:
        ep = add(client, owner, rx.url, events=["generation.completed", "generation.failed"])
        r = client.post(
            "/v1/generations",
            json={"type": "image", "prompt": "a cup of coffee on a table"},
            headers=key_headers(owner.api_key),
        )
        assert r.status_code == 202, r.text
        run(fast, 60)
        got = rx.wait_for(1)
    assert len(got) == 1
    body = Webhook(ep["secret"]).verify(got[0].body, got[0].headers)
    assert got[0].headers["socialpub-event-type"] == "generation.completed"
    now = client.get(f"/v1/generations/{r.json()['id']}", headers=key_headers(owner.api_key)).json()
    assert body == now


def test_rotation_signs_with_both_secrets(client, owner, fast):
    with Receiver() as rx:
        ep = add(client, owner, rx.url)
        rotated = client.post(f"/v1/webhooks/{ep['id']}/rotate", headers=key_headers(owner.api_key)).json()
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        run(fast)
        [req] = rx.wait_for(1)
    assert Webhook(rotated["secret"]).verify(req.body, req.headers)["type"] == "webhook.test"
    assert Webhook(ep["secret"]).verify(req.body, req.headers)["type"] == "webhook.test"
    # after the 24 h grace only the new secret signs
    with Receiver() as rx, time_machine.travel(clock.now() + timedelta(hours=25), tick=False):
        client.patch(f"/v1/webhooks/{ep['id']}", json={"url": rx.url}, headers=key_headers(owner.api_key))
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        run(fast)
        [req] = rx.wait_for(1)
        assert req.headers["webhook-signature"].count("v1,") == 1
        Webhook(rotated["secret"]).verify(req.body, req.headers)


@pytest.mark.parametrize(
    "answer, expect_error",
    [
        (Answer(500), "HTTP 500"),
        (Answer(302, {"location": "/elsewhere"}), "redirects are not followed"),
        (Answer(200, sleep_s=4.0), "timed out"),
    ],
)
def test_failures_are_retried_then_succeed(client, owner, fast, answer, expect_error):
    calls = []

    def script(req):  # type: ignore[no-untyped-def]
        calls.append(req.path)
        return answer if len(calls) == 1 else Answer(200)

    with Receiver(script) as rx:
        ep = add(client, owner, rx.url)
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        run(fast)
        rx.wait_for(2)
    assert calls == ["/hook", "/hook"]  # a redirect is never followed
    [d] = deliveries(client, owner, ep["id"])
    assert d["status"] == "succeeded" and d["attempts"] == 2
    assert expect_error in d["attemptLog"][0]["error"] and d["attemptLog"][1]["statusCode"] == 200
    assert d["attemptLog"][0]["statusCode"] == (None if expect_error == "timed out" else answer.status)


def test_429_retry_after_is_honoured(client, owner, fast):
    fast.webhook_retry_schedule = "0,1,1"
    answers = iter([Answer(429, {"retry-after": "120"}), Answer(200)])
    with Receiver(lambda req: next(answers)) as rx, time_machine.travel(clock.now(), tick=False) as traveller:
        ep = add(client, owner, rx.url)
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        run(fast, 5)
        [d] = deliveries(client, owner, ep["id"])
        assert d["status"] == "pending" and d["attempts"] == 1 and d["lastStatusCode"] == 429
        wait = (parse(d["nextAttemptAt"]) - parse(d["attemptLog"][0]["at"])).total_seconds()
        assert 120 <= wait < 121
        traveller.shift(60)
        run(fast, 2)
        assert len(rx.requests) == 1  # not before Retry-After
        traveller.shift(61)
        run(fast, 5)
        rx.wait_for(2)
    [d] = deliveries(client, owner, ep["id"])
    assert d["status"] == "succeeded" and d["attempts"] == 2


def test_last_attempt_fails_the_delivery_and_flags_the_endpoint(client, owner, fast):
    with Receiver(lambda req: Answer(503)) as rx:
        ep = add(client, owner, rx.url)
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        run(fast)
        assert len(rx.wait_for(3)) == 3
    [d] = deliveries(client, owner, ep["id"])
    assert (
        d["status"] == "failed"
        and d["attempts"] == 3
        and [a["statusCode"] for a in d["attemptLog"]] == [503] * 3
    )
    out = endpoint(client, owner, ep["id"])
    assert out["failing"] and out["failingSince"] and out["enabled"]
    assert deliveries(client, owner, ep["id"], status="failed")[0]["id"] == d["id"]
    # replay: the same webhook-id again, and a success clears the flag
    with Receiver() as rx:
        client.patch(f"/v1/webhooks/{ep['id']}", json={"url": rx.url}, headers=key_headers(owner.api_key))
        r = client.post(f"/v1/events/{d['eventId']}/redeliver", headers=key_headers(owner.api_key))
        assert r.status_code == 202
        run(fast)
        [req] = rx.wait_for(1)
    assert req.headers["webhook-id"] == d["eventId"]
    assert not endpoint(client, owner, ep["id"])["failing"]


def test_410_disables_the_endpoint(settings, client, owner, fast):
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    with Receiver(lambda req: Answer(410)) as rx:
        ep = add(client, owner, rx.url)
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        run(fast)
        assert len(rx.wait_for(1)) == 1
        out = endpoint(client, owner, ep["id"])
        assert out["enabled"] is False and "410" in out["disabledReason"]
        post_to(client, owner, ["facebook"])  # no delivery for a disabled endpoint
        run(fast)
        assert len(rx.requests) == 1
    [d] = deliveries(client, owner, ep["id"])
    assert d["status"] == "failed" and d["attempts"] == 1
    # redelivering to it says that it is disabled and how to re-enable it (API and CLI), whichever form is used
    h = key_headers(owner.api_key)
    every = client.post(f"/v1/events/{d['eventId']}/redeliver", headers=h)
    one = client.post(f"/v1/events/{d['eventId']}/redeliver", json={"endpointId": ep["id"]}, headers=h)
    assert (every.status_code, every.json()["error"]) == (409, "no_webhook_endpoint")
    assert (one.status_code, one.json()["error"]) == (409, "webhook_disabled")
    for r in (every, one):
        assert f'PATCH /v1/webhooks/{ep["id"]} {{"enabled": true}}' in r.json()["message"]
        assert f"socialpub webhooks enable {ep['id']}" in r.json()["message"]
    with Receiver() as rx:
        client.patch(f"/v1/webhooks/{ep['id']}", json={"url": rx.url, "enabled": True}, headers=h)
        assert client.post(f"/v1/events/{d['eventId']}/redeliver", headers=h).status_code == 202
        run(fast)
        [req] = rx.wait_for(1)
    assert req.headers["webhook-id"] == d["eventId"]


def test_redelivering_with_no_endpoint_at_all_says_to_add_one(client, owner, fast):
    ep = add(client, owner, "http://127.0.0.1:9/hook")
    test = client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key)).json()
    client.delete(f"/v1/webhooks/{ep['id']}", headers=key_headers(owner.api_key))
    r = client.post(f"/v1/events/{test['eventId']}/redeliver", headers=key_headers(owner.api_key))
    assert (r.status_code, r.json()["error"]) == (409, "no_webhook_endpoint")
    assert "add one (POST /v1/webhooks, `socialpub webhooks add URL`)" in r.json()["message"]


def test_receiver_down_for_an_hour_loses_nothing(client, owner, fast):
    """The default schedule; the receiver refuses connections for an hour, then comes back on the same port:
    every event arrives, each once."""
    fast.webhook_retry_schedule = "0,5,300,1800,7200,18000,36000,50400,72000,86400"
    probe = Receiver()
    port = probe.port
    probe.server.server_close()  # nothing listens there now: connections are refused
    start = clock.now()
    with time_machine.travel(start, tick=False) as traveller:
        ep = add(client, owner, f"http://127.0.0.1:{port}/hook")
        sent = [
            client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key)).json()["eventId"]
            for _ in range(3)
        ]
        run(fast, 5)
        rx = None
        try:
            for _ in range(12):
                pending = [d for d in deliveries(client, owner, ep["id"]) if d["status"] == "pending"]
                if not pending:
                    break
                nxt = max(parse(d["nextAttemptAt"]) for d in pending)
                traveller.move_to(nxt + timedelta(seconds=1))
                if rx is None and clock.now() - start >= timedelta(hours=1):
                    rx = Receiver(port=port).__enter__()
                run(fast, 5)
            assert rx is not None
            got = rx.wait_for(3)
            assert all(Webhook(ep["secret"]).verify(r.body, r.headers) for r in got)  # on the moved clock
        finally:
            if rx is not None:
                rx.close()
    log = deliveries(client, owner, ep["id"])
    assert {d["status"] for d in log} == {"succeeded"}
    assert sorted(r.headers["webhook-id"] for r in got) == sorted(sent)  # each event once
    assert all(d["attempts"] >= 5 for d in log)  # 0, 5 s, 5 min, 30 min failed; 2 h later it was back


def test_publish_events_of_a_post_arrive_in_order(settings, client, owner, fast):
    fast.sandbox_network_delay_s = {"facebook": 0.0, "linkedin": 0.3}
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    extra = client.post(
        "/v1/accounts",
        json={"platform": "facebook", "name": "slow page", "behaviour": "ok"},
        headers={"Authorization": f"Bearer {owner.session_token}"},
    )
    assert extra.status_code == 201, extra.text
    with Receiver(lambda req: Answer(200, sleep_s=0.05)) as rx:
        add(client, owner, rx.url)
        post = post_to(
            client, owner, ["facebook", "linkedin", {"platform": "facebook", "channelId": extra.json()["id"]}]
        )
        Worker(fast, concurrency=8).run_until_idle(max_seconds=20, settle_s=0.5)
        got = rx.wait_for(3)
    received = [json.loads(r.body)["id"] for r in got]
    recorded = [
        e.id
        for e in Event.select().where(Event.subject_id == post["id"]).order_by(Event.created_at, Event.id)
    ]
    assert received == recorded and len(received) == 3


def test_deleting_an_endpoint_drops_its_deliveries(client, owner, fast):
    with Receiver() as rx:
        ep = add(client, owner, rx.url)
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        client.delete(f"/v1/webhooks/{ep['id']}", headers=key_headers(owner.api_key))
        run(fast)
        assert rx.requests == []
    assert WebhookDelivery.select().count() == 0 and WebhookEndpoint.select().count() == 0


def test_settled_deliveries_are_forgotten_after_30_days(client, owner, fast):
    from backend.services import webhooks

    with Receiver() as rx:
        ep = add(client, owner, rx.url)
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
        run(fast)
        rx.wait_for(1)
    assert webhooks.prune(clock.now() + timedelta(days=29)) == 0
    assert len(deliveries(client, owner, ep["id"])) == 1
    assert webhooks.prune(clock.now() + timedelta(days=31)) == 1
    assert deliveries(client, owner, ep["id"]) == [] and Event.select().count() == 1


def test_a_slow_endpoint_holds_up_no_other(client, owner, fast):
    """A receiver that never answers in time occupies its own lane only: the other endpoint's events arrive while
    the slow one's first attempt is still waiting for its timeout."""
    import threading
    import time

    fast.webhook_retry_schedule = "0"  # one attempt each: the test waits for no retry
    with Receiver(lambda req: Answer(200, sleep_s=3.0)) as slow, Receiver() as quick:
        slow_ep = add(client, owner, slow.url)
        quick_ep = add(client, owner, quick.url)
        for _ in range(3):
            client.post(f"/v1/webhooks/{slow_ep['id']}/test", headers=key_headers(owner.api_key))
        for _ in range(3):
            client.post(f"/v1/webhooks/{quick_ep['id']}/test", headers=key_headers(owner.api_key))
        started = time.monotonic()
        worker = threading.Thread(target=run, args=(fast, 30), daemon=True)
        worker.start()
        assert len(quick.wait_for(3, timeout=10)) == 3
        quick_done = time.monotonic() - started
        worker.join(60)
    assert quick_done < 1.5  # the slow endpoint's first request alone takes its 2 s timeout
    assert {d["status"] for d in deliveries(client, owner, quick_ep["id"])} == {"succeeded"}


def test_the_address_rule_is_checked_again_at_delivery(client, owner, fast, monkeypatch):
    """DNS can change after the endpoint was accepted: a name now resolving to a private address is refused at
    the attempt (no request sent: the resolver is stubbed, nothing leaves the machine), and not retried."""
    from backend.outbound import guard

    fast.allow_private_urls = False
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["93.184.216.34"])
    ep = add(client, owner, "https://hooks.example.com/socialpub")
    client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key))
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["10.9.8.7"])
    run(fast)
    [d] = deliveries(client, owner, ep["id"])
    assert d["status"] == "failed" and d["attempts"] == 1
    assert "refused" in d["lastError"] and "10.9.8.7" in d["lastError"] and d["lastStatusCode"] is None
    # a setting decides it: the delivery says which, and the endpoint is not blamed (not flagged failing)
    assert d["refusedBy"] == "private-urls" and "SOCIALPUB_ALLOW_PRIVATE_URLS=0" in d["lastError"]
    assert (
        client.get(f"/v1/webhooks/{ep['id']}", headers=key_headers(owner.api_key)).json()["failing"] is False
    )


def test_a_delivery_the_data_dir_refuses_says_which_setting_and_the_endpoint_is_not_blamed(
    client, owner, fast
):
    """Issue 33: with the variable set in one process only, another process's worker refused a delivery, which
    failed after one attempt and marked the endpoint failing without saying why. Now the rule is the data dir's;
    a refused delivery names the setting (`refusedBy`), the endpoint stays healthy, and once the setting allows it a
    redelivery goes through."""
    from backend.store.instance import set_private_urls

    fast.allow_private_urls = None  # the data dir decides, in every process
    set_private_urls(True)
    with Receiver() as receiver:
        ep = add(client, owner, receiver.url)
        set_private_urls(False)
        accounts.connect_sandbox_defaults(fast, owner.workspace_id)
        post_to(client, owner, ["facebook"])
        run(fast)
        [d] = deliveries(client, owner, ep["id"])
        assert d["status"] == "failed" and d["refusedBy"] == "private-urls" and d["attempts"] == 1, d
        assert "`socialpub admin private-urls on`" in d["lastError"] and d["lastStatusCode"] is None
        assert endpoint(client, owner, ep["id"])["failing"] is False and receiver.requests == []

        set_private_urls(True)
        r = client.post(f"/v1/events/{d['eventId']}/redeliver", headers=key_headers(owner.api_key))
        assert r.status_code == 202, r.text
        run(fast)
        assert len(receiver.wait_for(1)) == 1
        assert deliveries(client, owner, ep["id"])[0]["status"] == "succeeded"

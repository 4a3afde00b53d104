"""Bluesky's adapter and emulator, the parts the shared suite does not cover: refusals and their classification,
blob and video limits, the TID keys, the address rule for servers named by DID documents."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import time_machine

from backend.config import Settings
from backend.networks.base import MediaRef, NetworkError
from backend.networks.bluesky import identity, tid
from backend.networks.bluesky.adapter import BlueskyAdapter
from backend.networks.bluesky.session import login
from backend.networks.bluesky.xrpc import classify
from backend.networks.oauth import OAuthError
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
from backend.networks.sandbox.core import set_behaviour
from backend.networks.sandbox.store import SandboxAccount
from backend.services.adapters import sandbox_emulators
from tests.networks.bluesky.conftest import Server
from tests.networks.bluesky.test_pds_suite import adapter, pub


@pytest.fixture
def emu(tmp_path) -> Server:  # type: ignore[no-untyped-def]
    from tests.networks.bluesky.conftest import _emulator

    yield from _emulator(tmp_path)


def _emu_with(tmp_path, **options) -> Server:  # type: ignore[no-untyped-def]
    sb = Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            processing_s=0,
            options=tuple((f"bluesky.{k}", v) for k, v in options.items()),
        )
    )
    from backend.networks.bluesky.emulator import BlueskyEmulator

    return Server("emulator", httpx.Client(transport=sb.transport("bluesky")), dict(BlueskyEmulator.HOSTS))


def _connect(server: Server):  # type: ignore[no-untyped-def]
    handle, _did, _pw, app_pw = server.new_account()
    return login(Settings(), server.client, handle, app_pw, hosts=server.hosts)


def test_tids_are_valid_stable_and_distinct() -> None:
    from backend.ids import new_id

    # one process's ids: those of one millisecond differ in their low bits (the TID's clock id), fewer than 1024
    tokens = [new_id("pub") for _ in range(1000)]
    keys = [tid.from_token(t) for t in tokens]
    assert all(tid.valid(k) for k in keys)
    assert len(set(keys)) == len(keys)
    assert [tid.from_token(t) for t in tokens] == keys  # stable
    assert tid.valid(tid.from_token("tgt_1"))  # any token: from its hash


def test_a_handle_that_does_not_point_back_is_refused(emu: Server) -> None:
    handle, did, _pw, app_pw = emu.new_account()
    other, _d, _p, _a = emu.new_account()
    real = emu.client

    def lying(request: httpx.Request) -> httpx.Response:  # resolveHandle of `other` says `did`
        if request.url.path.endswith("resolveHandle") and request.url.params.get("handle") == other:
            return httpx.Response(200, json={"did": did})
        return real.send(request)

    liar = Server("emulator", httpx.Client(transport=httpx.MockTransport(lying)), emu.hosts)
    with pytest.raises(OAuthError) as exc:
        login(Settings(), liar.client, other, app_pw, hosts=emu.hosts)
    assert exc.value.code == "handle_mismatch" and "does not point back" in exc.value.message


def test_an_expired_access_token_is_refused_as_the_pds_does(emu: Server) -> None:
    cand = _connect(emu)
    with time_machine.travel(cand.expires_at + timedelta(seconds=1)):
        r = emu.xrpc("GET", "com.atproto.server.getSession", cand.access_token)
        assert (r.status_code, r.json()) == (400, {"error": "ExpiredToken", "message": "Token has expired"})
        err = classify(r)
        assert err.auth_refused and err.fail_type == "permanent"
        out = adapter(emu).publish(pub(cand, "late"))
        assert out.state == "failed" and out.auth_refused
    r = emu.xrpc("POST", "com.atproto.server.refreshSession", cand.access_token)
    assert (r.status_code, r.json()["error"]) == (400, "InvalidToken")
    r = emu.xrpc("GET", "com.atproto.server.getSession")
    assert (r.status_code, r.json()["error"]) == (401, "AuthMissing")


def test_refresh_rotates_and_a_revoked_one_is_dead(emu: Server) -> None:
    cand = _connect(emu)
    r = emu.xrpc("POST", "com.atproto.server.refreshSession", cand.refresh_token)
    assert r.status_code == 200 and r.json()["refreshJwt"] != cand.refresh_token
    with time_machine.travel(datetime.now(UTC) + timedelta(hours=2, minutes=1)):  # past the 2 h grace
        again = emu.xrpc("POST", "com.atproto.server.refreshSession", cand.refresh_token)
    assert (again.status_code, again.json()) == (
        400,
        {"error": "ExpiredToken", "message": "Token has been revoked"},
    )


def test_delete_session_leaves_the_access_jwt_until_it_expires(emu: Server) -> None:
    """As the reference PDS (deleteSession.ts: `revokeRefreshToken` only): the access JWT of a closed session is
    taken until its expiry, then refused as expired; the refresh JWT is dead at once; an expired refresh JWT may
    still close its session (`refresh({ allowExpired: true })`)."""
    cand = _connect(emu)
    assert emu.xrpc("POST", "com.atproto.server.deleteSession", cand.refresh_token).status_code == 200
    r = emu.xrpc("GET", "com.atproto.server.getSession", cand.access_token)
    assert r.status_code == 200 and r.json()["did"] == cand.external_id
    r = emu.xrpc("POST", "com.atproto.server.refreshSession", cand.refresh_token)
    assert (r.status_code, r.json()["message"]) == (400, "Token has been revoked")
    with time_machine.travel(cand.expires_at + timedelta(seconds=1)):
        r = emu.xrpc("GET", "com.atproto.server.getSession", cand.access_token)
    assert (r.status_code, r.json()) == (400, {"error": "ExpiredToken", "message": "Token has expired"})
    other = _connect(emu)
    assert other.refresh_expires_at is not None
    with time_machine.travel(other.refresh_expires_at + timedelta(seconds=1)):
        assert emu.xrpc("POST", "com.atproto.server.deleteSession", other.refresh_token).status_code == 200


def test_rate_limit_and_takedown_are_classified(emu: Server) -> None:
    cand = _connect(emu)
    acc = SandboxAccount.get(SandboxAccount.external_id == cand.external_id)
    set_behaviour(acc.id, "rate-limited")
    out = adapter(emu).publish(pub(cand, "throttled"))
    assert out.state == "failed" and out.fail_type == "retriable" and out.wait
    assert out.network_code == "RateLimitExceeded" and out.retry_after_s and out.retry_after_s > 3000
    set_behaviour(acc.id, "fail-permanent")
    out = adapter(emu).publish(pub(cand, "taken down"))
    assert (out.state, out.fail_type, out.network_code) == ("failed", "permanent", "AccountTakedown")
    assert "check the account" in (out.fail_reason or "") and not out.auth_refused


def test_a_blob_over_the_pds_limit_is_413(tmp_path) -> None:  # type: ignore[no-untyped-def]
    server = _emu_with(tmp_path, blob_limit=1000)
    cand = _connect(server)
    r = server.xrpc(
        "POST",
        "com.atproto.repo.uploadBlob",
        cand.access_token,
        content=b"x" * 1001,
        headers={"Content-Type": "image/png"},
    )
    assert (r.status_code, r.json()) == (
        413,
        {"error": "PayloadTooLarge", "message": "request entity too large"},
    )
    assert server.xrpc("GET", "com.atproto.server.describeServer").json()["blobUploadLimit"] == 1000


def test_video_over_the_pds_limit_is_refused_with_the_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    server = _emu_with(tmp_path, blob_limit=2_000_000)
    cand = _connect(server)
    mp4 = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 100
    small = MediaRef("https://media.test/v.mp4", "video", "video/mp4", 1080, 1920)
    out = adapter(server, {small.url: mp4}).publish(pub(cand, "a video", [small]))
    assert out.state == "published", out
    big = MediaRef("https://media.test/big.mp4", "video", "video/mp4")
    out = adapter(server, {big.url: mp4 + b"\x00" * 2_000_000}).publish(
        pub(cand, "a big video", [big], token="pub_01kb4x0q9m3n7y2z8w5v6t1r0t")
    )
    assert (out.state, out.fail_type, out.network_code) == ("failed", "permanent", "video_too_large_for_pds")
    assert "2.0 MB" in (out.fail_reason or "")


def test_validate_false_is_never_sent(emu: Server) -> None:
    cand = _connect(emu)
    sent: list[dict] = []  # type: ignore[type-arg]
    real = emu.client

    def spy(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith(("putRecord", "createRecord")):
            sent.append(json.loads(request.content))
        return real.send(request)

    spied = Server("emulator", httpx.Client(transport=httpx.MockTransport(spy)), emu.hosts)
    assert adapter(spied).publish(pub(cand, "checked")).state == "published"
    assert sent and all("validate" not in body for body in sent)
    assert sent[0]["swapRecord"] is None and tid.valid(sent[0]["rkey"])


def test_a_pds_on_a_private_address_is_not_called() -> None:
    hosts = {"api": "https://bsky.social", "plc": "https://plc.directory"}
    assert identity.permitted("https://pds.example.com", hosts) is None
    assert "private" in (identity.permitted("https://10.0.0.5", hosts) or "")
    assert "private" in (identity.permitted("https://localhost:2583", hosts) or "")
    assert "https" in (identity.permitted("http://pds.example.com", hosts) or "")
    assert identity.permitted("http://localhost:2583", {**hosts, "api": "http://localhost:2583"}) is None
    calls: list[str] = []

    def doc(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(
            200,
            json={
                "id": "did:plc:x",
                "service": [
                    {
                        "id": "#atproto_pds",
                        "type": "AtprotoPersonalDataServer",
                        "serviceEndpoint": "http://192.168.1.9",
                    }
                ],
            },
        )

    a = BlueskyAdapter(httpx.Client(transport=httpx.MockTransport(doc)), hosts)
    with pytest.raises(NetworkError) as exc:
        a.pds("did:plc:x")
    assert exc.value.code == "pds_not_allowed" and calls == ["https://plc.directory/did:plc:x"]


def test_another_post_at_our_key_is_never_taken_for_ours(emu: Server) -> None:
    cand = _connect(emu)
    a = adapter(emu)
    assert a.publish(pub(cand, "the first post")).state == "published"
    other = pub(cand, "another post, same key")  # the same token: keys that met
    out = a.publish(other)
    assert (out.state, out.fail_type, out.network_code) == ("failed", "permanent", "rkey_taken")
    found = a.find_existing(other)
    assert found is not None and found.state == "failed" and found.network_code == "rkey_taken"


def test_a_video_over_the_pds_limit_is_refused_at_creation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.base import TargetDraft
    from backend.networks.bluesky.rules import target_problems

    server = _emu_with(tmp_path, blob_limit=2_000_000)
    cand = _connect(server)
    calls: list[str] = []
    real = server.client

    def spy(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("describeServer"):
            calls.append(request.url.host)
        return real.send(request)

    spied = adapter(Server("emulator", httpx.Client(transport=httpx.MockTransport(spy)), server.hosts))
    small = MediaRef("https://media.test/v.mp4", "video", "video/mp4", bytes=2_000_000)
    big = MediaRef("https://media.test/big.mp4", "video", "video/mp4", bytes=2_000_001)
    assert target_problems(spied, cand.access_token, TargetDraft(cand.external_id, "ok", (small,))) == []
    ((code, reason, extra),) = target_problems(
        spied, cand.access_token, TargetDraft(cand.external_id, "x", (big,))
    )
    assert code == "video_out_of_range_for_target"
    assert extra == {"mediaUrl": big.url, "rule": "max_bytes", "limit": 2_000_000, "server": extra["server"]}
    assert f"Bluesky server ({extra['server']}) takes files up to 2.0 MB and the video is 2.0 MB" in reason
    assert len(calls) == 1  # the server's facts are kept for the checks at creation (an hour)
    # a video of unknown size, or no video: nothing to ask the server
    unknown = MediaRef("https://media.test/u.mp4", "video", "video/mp4")
    assert target_problems(spied, cand.access_token, TargetDraft(cand.external_id, "x", (unknown,))) == []
    assert target_problems(spied, cand.access_token, TargetDraft(cand.external_id, "text")) == []
    assert len(calls) == 1
    # the publication reads the limit again (max_age 0): one more call
    assert spied.blob_limit(spied.pds(cand.external_id)) == 2_000_000 and len(calls) == 2

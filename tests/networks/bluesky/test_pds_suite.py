"""One suite, two servers: our emulator and Bluesky's reference PDS (conftest `server`), so the two agree. Every
test publishes through socialpub's own code (session.login, the adapter) and reads the result back with the
server's own getRecord / listRecords."""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image

from backend.config import Settings
from backend.networks.base import AccountCredentials, MediaRef, Publication
from backend.networks.bluesky import tid
from backend.networks.bluesky.adapter import COLLECTION, BlueskyAdapter, rkey_of
from backend.networks.bluesky.session import login
from backend.networks.oauth import OAuthError
from backend.networks.rules import build_payload
from tests.networks.bluesky.conftest import Server


def _png(w: int, h: int, noise: bool = False) -> bytes:
    img = Image.effect_noise((w, h), 80).convert("RGB") if noise else Image.new("RGB", (w, h), (20, 120, 200))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def connect(server: Server):  # type: ignore[no-untyped-def]
    handle, did, _pw, app_pw = server.new_account()
    cand = login(Settings(), server.client, handle, app_pw, hosts=server.hosts)
    return handle, cand


def adapter(
    server: Server, media: dict[str, bytes] | None = None, pages: dict[str, bytes] | None = None
) -> BlueskyAdapter:
    def load(m: MediaRef) -> bytes:
        return (media or {})[m.url]

    def page(url: str, max_bytes: int) -> bytes:
        from backend.networks.base import NetworkError

        if url not in (pages or {}):
            raise NetworkError("permanent", "unreachable", code="page_fetch_failed")
        return (pages or {})[url]

    return BlueskyAdapter(server.client, server.hosts, load, page)


def pub(
    cand, text: str, media: list[MediaRef] = (), options=None, token: str = "pub_01kb4x0q9m3n7y2z8w5v6t1r0s"
):  # type: ignore[no-untyped-def]
    payload = build_payload("bluesky", text, list(media), options)
    return Publication(payload, AccountCredentials(cand.external_id, cand.access_token, cand.username), token)


def record(server: Server, did: str, rkey: str) -> dict:  # type: ignore[type-arg]
    r = server.xrpc(
        "GET", "com.atproto.repo.getRecord", params={"repo": did, "collection": COLLECTION, "rkey": rkey}
    )
    assert r.status_code == 200, r.text
    return r.json()["value"]


def count(server: Server, did: str) -> int:
    r = server.xrpc("GET", "com.atproto.repo.listRecords", params={"repo": did, "collection": COLLECTION})
    assert r.status_code == 200, r.text
    return len(r.json()["records"])


def test_connect_with_an_app_password(server: Server) -> None:
    handle, did, _pw, app_pw = server.new_account()
    cand = login(Settings(), server.client, "@" + handle.upper(), app_pw, hosts=server.hosts)
    assert (cand.external_id, cand.username) == (did, handle)
    assert cand.granted_scopes == ("com.atproto.appPass",)
    assert cand.refresh_token and cand.expires_at and cand.refresh_expires_at
    life = (cand.expires_at - cand.refresh_expires_at).total_seconds()
    assert life < 0


def test_connect_refuses_the_account_password_and_a_wrong_one(server: Server) -> None:
    handle, _did, pw, _app_pw = server.new_account()
    with pytest.raises(OAuthError) as full:
        login(Settings(), server.client, handle, pw, hosts=server.hosts)
    assert full.value.code == "app_password_required"
    with pytest.raises(OAuthError) as wrong:
        login(Settings(), server.client, handle, "aaaa-bbbb-cccc-dddd", hosts=server.hosts)
    assert (wrong.value.kind, wrong.value.code) == ("dead", "AuthenticationRequired")
    assert "Invalid identifier or password" in wrong.value.message


def test_sessions_refresh_rotate_and_die_with_delete_session(server: Server) -> None:
    from datetime import UTC, datetime

    from backend.networks import registry
    from backend.networks.bluesky.session import refresh
    from backend.networks.bluesky.xrpc import jwt_claims
    from backend.networks.tokens import GrantDead

    _h, cand = connect(server)
    settings = Settings()
    own = registry.get("bluesky").settings_of(settings)
    own.api_base, own.plc_url = server.hosts["api"], server.hosts["plc"]  # type: ignore[union-attr]
    now = datetime.now(UTC)
    new = refresh(settings, server.client, str(cand.refresh_token), now)
    assert new.refresh_token != cand.refresh_token  # rotated (an access JWT of the same second may be equal)
    time.sleep(
        1.1
    )  # into the next second, as a busy machine may be (CI once was): the text of the pair changes
    again = refresh(
        settings, server.client, str(cand.refresh_token), now
    )  # a reuse within the grace: the same refresh token (its id), signed again — its text changes with the second
    assert jwt_claims(str(again.refresh_token))["jti"] == jwt_claims(str(new.refresh_token))["jti"]
    r = server.xrpc("GET", "com.atproto.server.getSession", new.access_token)
    assert r.status_code == 200 and r.json()["did"] == cand.external_id
    assert server.xrpc("POST", "com.atproto.server.deleteSession", new.refresh_token).status_code == 200
    with pytest.raises(GrantDead) as dead:
        refresh(settings, server.client, str(new.refresh_token), now)
    assert dead.value.code == "ExpiredToken" and "revoked" in dead.value.detail


def test_disconnecting_closes_the_session_at_the_pds(server: Server) -> None:
    from backend.networks import registry
    from backend.networks.bluesky.app import revoke
    from backend.networks.oauth import OAuthError

    _h, cand = connect(server)
    settings = Settings()
    own = registry.get("bluesky").settings_of(settings)
    own.api_base, own.plc_url = server.hosts["api"], server.hosts["plc"]  # type: ignore[union-attr]
    said = revoke(settings, server.client, cand.external_id, cand.access_token, cand.refresh_token)
    assert said is not None and "the session was closed at" in said
    r = server.xrpc("POST", "com.atproto.server.refreshSession", cand.refresh_token)
    assert (r.status_code, r.json()) == (400, {"error": "ExpiredToken", "message": "Token has been revoked"})
    # closed already: the reference PDS answers 200 again (a no-op)
    assert revoke(settings, server.client, cand.external_id, cand.access_token, cand.refresh_token)
    # the access JWT: taken until its expiry (≤ 2 hours) — deleteSession revokes the refresh token only
    got = server.xrpc("GET", "com.atproto.server.getSession", cand.access_token)
    assert got.status_code == 200 and got.json()["did"] == cand.external_id, got.text
    with pytest.raises(OAuthError) as exc:  # a token that is no session's: refused, said
        revoke(settings, server.client, cand.external_id, cand.access_token, cand.access_token)
    assert exc.value.code == "InvalidToken"
    assert revoke(settings, server.client, cand.external_id, cand.access_token, None) is None


def test_text_with_facets_on_utf8_byte_offsets(server: Server) -> None:
    handle, cand = connect(server)
    text = f"héllo 🌍 https://example.com/a. #socialpub @{handle} @nobody-here.test"
    out = adapter(server).publish(pub(cand, text))
    assert out.state == "published", out
    value = record(server, cand.external_id, out.external_post_id)
    raw = value["text"].encode()
    got = {
        f["features"][0]["$type"].split("#")[1]: (
            raw[f["index"]["byteStart"] : f["index"]["byteEnd"]].decode(),
            f["features"][0],
        )
        for f in value["facets"]
    }
    assert got["link"][0] == "https://example.com/a" and got["link"][1]["uri"] == "https://example.com/a"
    assert got["tag"][0] == "#socialpub" and got["tag"][1]["tag"] == "socialpub"
    assert got["mention"][0] == f"@{handle}" and got["mention"][1]["did"] == cand.external_id
    assert len(value["facets"]) == 3  # the unresolvable mention is left plain


def test_four_images_with_alt_text_and_aspect_ratio(server: Server) -> None:
    _h, cand = connect(server)
    media = [MediaRef(f"https://media.test/{i}.png", "image", "image/png", 40 + i, 30) for i in range(4)]
    data = {m.url: _png(m.width or 1, 30) for m in media}
    big = MediaRef("https://media.test/big.png", "image", "image/png", 900, 900)
    data[big.url] = _png(900, 900, noise=True)  # about 2.4 MB: recompressed under 1,000,000 bytes
    media[3] = big
    alts = ["one", "two", "three", "four"]
    out = adapter(server, data).publish(pub(cand, "four pictures", media, {"bluesky": {"alt": alts}}))
    assert out.state == "published", out
    images = record(server, cand.external_id, out.external_post_id)["embed"]["images"]
    assert [i["alt"] for i in images] == alts
    assert images[0]["aspectRatio"] == {"width": 40, "height": 30}
    assert images[3]["image"]["size"] <= 1_000_000 and images[3]["aspectRatio"]["width"] >= 1


def test_link_card_for_a_text_post(server: Server) -> None:
    _h, cand = connect(server)
    page = b'<html><head><title>x</title><meta property="og:title" content="The title"><meta property="og:description" content="What it says"><meta property="og:image" content="/pic.png"></head></html>'
    pages = {"https://example.com/article": page, "https://example.com/pic.png": _png(60, 40)}
    out = adapter(server, pages=pages).publish(pub(cand, "read https://example.com/article"))
    assert out.state == "published", out
    ext = record(server, cand.external_id, out.external_post_id)["embed"]["external"]
    assert (ext["uri"], ext["title"], ext["description"]) == (
        "https://example.com/article",
        "The title",
        "What it says",
    )
    assert ext["thumb"]["mimeType"] == "image/png"
    # a page that cannot be fetched: no card, the post still goes
    out2 = adapter(server).publish(
        pub(cand, "see https://unreachable.example/x", token="pub_01kb4x0q9m3n7y2z8w5v6t1r0t")
    )
    assert out2.state == "published" and "embed" not in record(
        server, cand.external_id, out2.external_post_id
    )


def test_a_retry_meets_its_own_record(server: Server) -> None:
    _h, cand = connect(server)
    a = adapter(server)
    p = pub(cand, "once only")
    assert a.find_existing(p) is None  # nothing yet: absent at once
    first = a.publish(p)
    again = a.publish(p)  # an attempt whose outcome was lost, made again
    assert first.state == again.state == "published"
    assert first.external_post_id == again.external_post_id == rkey_of(p)
    assert count(server, cand.external_id) == 1
    found = a.find_existing(p)
    assert found is not None and found.external_post_id == rkey_of(p)


def test_a_second_create_at_one_key_is_an_error_not_a_duplicate(server: Server) -> None:
    _h, cand = connect(server)
    rkey = tid.from_token("pub_01kb4x0q9m3n7y2z8w5v6t1r0s")
    body = {
        "repo": cand.external_id,
        "collection": COLLECTION,
        "rkey": rkey,
        "record": {"$type": COLLECTION, "text": "x", "createdAt": "2026-11-28T10:00:00.000Z"},
    }
    assert (
        server.xrpc("POST", "com.atproto.repo.createRecord", cand.access_token, json=body).status_code == 200
    )
    r = server.xrpc("POST", "com.atproto.repo.createRecord", cand.access_token, json=body)
    assert r.status_code == 500 and r.json() == {
        "error": "InternalServerError",
        "message": "Internal Server Error",
    }
    assert count(server, cand.external_id) == 1


@pytest.mark.parametrize(
    ("change", "status", "error", "message"),
    [
        (
            {"rkey": "pub_01hzzzzzzzzzzzzzzzzzzzzz"},
            400,
            "InvalidRequest",
            'Invalid record key for app.bsky.feed.post: Invalid TID string (got "pub_01hzzzzzzzzzzzzzzzzzzzzz")',
        ),
        (
            {"text": "a" * 301},
            400,
            "InvalidRequest",
            "grapheme too big (maximum 300, got 301) at $.record.text",
        ),
        (
            {"text": "👨‍👩‍👧‍👦" * 121},
            400,
            "InvalidRequest",
            "string too big (maximum 3000, got 3025) at $.record.text",
        ),
        ({"createdAt": None}, 400, "InvalidRequest", 'Missing required key "createdAt" at $.record'),
        (
            {"langs": ["en", "fr", "de", "es"]},
            400,
            "InvalidRequest",
            "array too big (maximum 3, got 4) at $.record.langs",
        ),
    ],
)
def test_the_record_rules(server: Server, change: dict, status: int, error: str, message: str) -> None:  # type: ignore[type-arg]
    _h, cand = connect(server)
    rec = {"$type": COLLECTION, "text": "ok", "createdAt": "2026-11-28T10:00:00.000Z"}
    change = dict(change)  # the parameters are shared by both servers' runs
    rkey = change.pop("rkey", tid.from_token("pub_01kb4x0q9m3n7y2z8w5v6t1r0s"))
    for k, v in change.items():
        if v is None:
            rec.pop(k)
        else:
            rec[k] = v
    r = server.xrpc(
        "POST",
        "com.atproto.repo.createRecord",
        cand.access_token,
        json={"repo": cand.external_id, "collection": COLLECTION, "rkey": rkey, "record": rec},
    )
    assert (r.status_code, r.json()["error"]) == (status, error)
    assert message in r.json()["message"]

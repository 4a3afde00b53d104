"""The sandbox's shortcut constructors build the same httpx objects as httpx's own, and step aside otherwise."""

from __future__ import annotations

import json
import random

import httpx
import pytest

from backend.networks.sandbox import wire

TOKEN = "EAAG" + "abcXYZ019" * 14

REQUESTS = [
    # the adapters' own shapes
    ("POST", "https://open.tiktokapis.sandbox.invalid/v2/post/publish/video/init/",
     {"json": {"post_info": {"title": "é 🎉 \u2028 \"q\"", "is_aigc": True, "n": 1.5, "none": None},
               "source_info": {"source": "PULL_FROM_URL", "video_url": "https://m/v.mp4"}},
      "headers": {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json; charset=UTF-8"}}),
    ("POST", "https://open.tiktokapis.sandbox.invalid/v2/video/list/",
     {"json": {"max_count": 20}, "params": {"fields": "id,title,create_time"}, "headers": {"Authorization": "x"}}),
    ("POST", "https://graph-video.facebook.sandbox.invalid/v21.0/1234/videos",
     {"data": {"file_url": "https://m/v.mp4?a=1&b=2", "description": "hé llo & = + %", "access_token": TOKEN}}),
    ("GET", "https://graph.facebook.sandbox.invalid/v21.0/1234_5678",
     {"params": {"fields": "permalink_url", "access_token": TOKEN}}),
    ("POST", "https://api.linkedin.sandbox.invalid/rest/videos?action=initializeUpload",
     {"json": {"initializeUploadRequest": {"owner": "urn:li:person:abc-_"}},
      "headers": {"Authorization": "Bearer t", "LinkedIn-Version": "202506", "X-Restli-Protocol-Version": "2.0.0",
                  "Content-Type": "application/json"}}),
    ("PUT", "https://www.linkedin.sandbox.invalid/dms-uploads/aB-_09xyz", {"content": b"\x00\xff" * 100,
                                                                             "headers": {"Authorization": "B t"}}),
    ("GET", "https://api.linkedin.sandbox.invalid/rest/videos/urn%3Ali%3Avideo%3AC5605AQabc", {"headers": {"A": "b"}}),
    ("GET", "https://api.linkedin.sandbox.invalid/rest/posts?author=urn%3Ali%3Aperson%3Ax&q=author&count=20", {}),
    ("POST", "https://www.googleapis.sandbox.invalid/upload/youtube/v3/videos",
     {"params": {"uploadType": "resumable", "part": "snippet,status"}, "json": {"snippet": {"title": "t"}},
      "headers": {"Authorization": "Bearer t", "X-Upload-Content-Length": "10", "X-Upload-Content-Type": "video/mp4"}}),
    ("PUT", "https://www.googleapis.sandbox.invalid/upload/youtube/v3/videos?uploadType=resumable&upload_id=aZ-_",
     {"content": b"", "headers": {"Content-Range": "bytes */10"}}),
    # edges: query replaced / dropped by params, dot segments, odd characters, caller's own defaults
    ("GET", "https://h.invalid/p?x=1", {"params": {}}),
    ("GET", "https://h.invalid/p?x=1", {"params": {"y": ["1", "2"], "b": True, "n": None, "i": 3}}),
    ("GET", "https://h.invalid/a/./b/../c", {}),
    ("GET", "https://h.invalid/a.b/c.d?e.f", {}),
    ("GET", "https://h.invalid/%zz/%41?%zz", {}),
    ("GET", "https://h.invalid/a b", {}),
    ("GET", "https://h.invalid/{x}|^`", {}),
    ("GET", "https://h.invalid?", {}),
    ("GET", "https://h.invalid#frag", {}),
    ("GET", "https://H.Invalid/Path", {}),
    ("GET", "HTTPS://h.invalid/", {}),
    ("GET", "https://h.invalid:443/", {}),
    ("GET", "https://h.invalid:8443/", {}),
    ("GET", "https://user:pw@h.invalid/", {}),
    ("GET", "https://127.0.0.1/x", {}),
    ("GET", "http://[::1]/x", {}),
    ("GET", "https://bücher.invalid/", {}),
    ("GET", "/relative/path", {}),
    ("post", "https://h.invalid/x", {}),
    ("PATCH", "https://h.invalid/x", {"headers": {"Content-Length": "0"}}),
    ("PUT", "https://h.invalid/x", {"headers": {"Transfer-Encoding": "chunked"}}),
    ("POST", "https://h.invalid/x", {"content": "text body é", "headers": {"content-type": "text/plain"}}),
    ("POST", "https://h.invalid/x", {"data": {"a": "1"}, "headers": {"Content-Type": "application/x-custom",
                                                                      "host": "other.invalid"}}),
    ("POST", "https://h.invalid/x", {"data": {"a": 1, "b": True, "c": None, "d": ["x", "y"]}}),
    ("POST", "https://h.invalid/x", {"data": {}, "json": {"a": 1}}),
    ("POST", "https://h.invalid/x", {"json": []}),
    ("POST", "https://h.invalid/x", {"json": "str"}),
    ("POST", "https://h.invalid/x", {"content": b"raw", "json": {"ignored": True}}),
    ("POST", "https://h.invalid/x", {"files": {"f": ("a.txt", b"abc")},
                                     "headers": {"Content-Type": "multipart/form-data; boundary=fixed"}}),
    ("POST", "https://h.invalid/x", {"headers": [("X-A", "1"), ("X-A", "2")]}),
    ("POST", "https://h.invalid/x", {"headers": {b"X-Bytes": b"v"}}),
    ("POST", httpx.URL("https://h.invalid/x"), {"params": {"a": "b"}}),
]


def _built(method, url, kw):  # type: ignore[no-untyped-def]
    try:
        return "ok", wire.request(method, url, **kw)
    except Exception as exc:  # noqa: BLE001
        return "raised", type(exc)


def _httpx(method, url, kw):  # type: ignore[no-untyped-def]
    try:
        return "ok", httpx.Request(method, url, **kw)
    except Exception as exc:  # noqa: BLE001
        return "raised", type(exc)


@pytest.mark.parametrize("method,url,kw", REQUESTS)
def test_request_is_httpx_request(method, url, kw) -> None:  # type: ignore[no-untyped-def]
    assert wire._fast_ok("request")
    ours, theirs = _built(method, url, kw), _httpx(method, url, kw)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert type(ours[1]) is httpx.Request
        assert wire._same_state(ours[1], theirs[1]), (ours[1].headers.raw, theirs[1].headers.raw)
    else:
        assert ours[1] is theirs[1]


def test_request_shortcut_taken_for_the_adapters_shapes() -> None:
    assert wire._fast_ok("request")
    for method, url, kw in REQUESTS[:10]:
        assert wire._build_request(method, url, **kw) is not None, url


def test_request_fuzz_against_httpx() -> None:
    rng = random.Random(5)
    alphabet = "abcXYZ019-._~!$&'()*+,;=:@/%?#[]\\^`{}| \"<>\té"
    for _ in range(3000):
        path = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        url = "https://h" + rng.choice(["", ".invalid", "-x.y"]) + rng.choice(["", "/"]) + path
        kw: dict = {}
        if rng.random() < 0.3:
            kw["params"] = {"".join(rng.choice(alphabet) for _ in range(3)): "".join(rng.choice(alphabet) for _ in
                                                                                        range(4))}
        if rng.random() < 0.3:
            kw["json"] = {"k": path}
        ours, theirs = _built("GET", url, kw), _httpx("GET", url, kw)
        assert ours[0] == theirs[0], url
        if ours[0] == "ok":
            assert wire._same_state(ours[1], theirs[1]), url


@pytest.mark.parametrize("status,body,headers", [
    (200, {"data": {"publish_id": "v_pub_url~v2.1"}, "error": {"code": "ok", "message": "", "log_id": "2025"}}, None),
    (400, {"error": {"message": "é 🎉 \u2028", "code": 100, "is_transient": False, "x": 1.5, "n": None}},
     {"X-Business-Use-Case-Usage": json.dumps({"1": [{"type": "pages"}]})}),
    (201, {}, {"x-restli-id": "urn:li:share:1", "x-linkedin-id": "urn:li:share:1"}),
    (200, [], {"Content-Type": "text/plain"}),
    (200, {"a": 1}, {"content-length": "999"}),
    (200, {"a": 1}, {"Content-Encoding": "gzip"}),
    (200, {"a": 1}, {"X-Non-Ascii": "é"}),
])
def test_json_response_is_httpx_response(status, body, headers) -> None:  # type: ignore[no-untyped-def]
    assert wire._fast_ok("response")
    try:
        theirs = httpx.Response(status, json=body, headers=headers)
    except Exception as exc:  # noqa: BLE001
        with pytest.raises(type(exc)):
            wire.json_response(status, body, headers)
        return
    ours = wire.json_response(status, body, headers)
    assert type(ours) is httpx.Response and wire._same_state(ours, theirs)
    assert ours.json() == theirs.json() and ours.read() == theirs.read()


def test_a_different_httpx_turns_the_shortcuts_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """If the installed httpx built anything differently (here: JSON encoded another way), the check made on
    first use fails and every call goes through httpx's own constructors."""
    monkeypatch.setattr(wire, "_CHECKED", {})
    monkeypatch.setattr(wire, "_dumps", json.dumps)
    assert not wire._fast_ok("request") and not wire._fast_ok("response")
    body = {"é": [1, 2]}
    assert wire.json_response(200, body).content == httpx.Response(200, json=body).content
    req = wire.request("POST", "https://h.invalid/x", json=body)
    assert wire._same_state(req, httpx.Request("POST", "https://h.invalid/x", json=body))


@pytest.mark.parametrize("headers", [None, {}, {"Location": "https://h.invalid/u?upload_id=x"}, {"Range": "bytes=0-9"},
                                     {"Content-Encoding": "gzip"}, {"x-restli-id": "urn:li:share:1"}])
def test_empty_response_is_httpx_response(headers) -> None:  # type: ignore[no-untyped-def]
    assert wire._fast_ok("response")
    ours, theirs = wire.empty_response(308, headers), httpx.Response(308, headers=headers)
    assert type(ours) is httpx.Response and wire._same_state(ours, theirs)

"""Every error in the envelope {error, message, details}, with a stable code; nothing a client sends is a 500."""

from __future__ import annotations

import pytest

from tests.api.posts_support import sandbox  # noqa: F401  (a fixture: sandbox accounts connected)
from tests.conftest import key_headers, session_headers


def assert_envelope(r, status, code=None):
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "message", "details"}
    assert isinstance(body["details"], list) and body["message"]
    if code:
        assert body["error"] == code
    return body


def test_malformed_json(client, owner):
    r = client.post(
        "/v1/api-keys",
        content=b'{"name": ',
        headers={**session_headers(owner.session_token), "content-type": "application/json"},
    )
    body = assert_envelope(r, 400, "invalid_json")
    assert [d["field"] for d in body["details"]] == [
        "body"
    ]  # not the character offset pydantic puts in its loc
    assert "at character" in body["details"][0]["message"]


@pytest.mark.usefixtures("sandbox")
def test_a_detail_names_the_request_field_not_the_union_branch_pydantic_tried(client, owner):
    r = client.post(
        "/v1/posts",
        json={"targets": [5, {"platform": 7}], "content": "x"},
        headers=key_headers(owner.api_key),
    )
    body = assert_envelope(r, 400, "validation_error")
    assert {d["field"] for d in body["details"]} == {"targets.0", "targets.1", "targets.1.platform"}, body
    assert not any("TargetRef" in d["message"] for d in body["details"])


def test_wrong_types_and_missing_fields_name_each_field(client, owner):
    r = client.post(
        "/v1/api-keys",
        json={"name": 12, "expiresInDays": "soon", "scopes": "all"},
        headers=session_headers(owner.session_token),
    )
    body = assert_envelope(r, 400, "validation_error")
    fields = {d["field"].split(".")[0] for d in body["details"]}
    assert {"name", "expiresInDays", "scopes"} <= fields
    r = client.post("/v1/auth/login", json={"email": "a@b.c"})
    body = assert_envelope(r, 400, "validation_error")
    assert any(d["field"] == "password" and d["error"] == "missing" for d in body["details"])


VIDEO = {"type": "video", "prompt": "Slow pan over roasted beans"}


@pytest.mark.parametrize(
    ("path", "body", "field", "error"),
    [
        ("/v1/generations", {**VIDEO, "durationSec": "10"}, "durationSec", "int_type"),  # no str -> int
        ("/v1/generations", {**VIDEO, "durationSec": 10.0}, "durationSec", "int_type"),  # no float -> int
        ("/v1/generations", {**VIDEO, "durationSec": True}, "durationSec", "int_type"),  # no bool -> int
        ("/v1/generations", {**VIDEO, "prompt": 12345}, "prompt", "string_type"),  # no number -> str
        ("/v1/posts", {"targets": ["facebook"], "content": 5}, "content", "string_type"),
        (
            "/v1/posts",
            {"targets": [{"platform": "facebook", "channelId": 7}], "content": "x"},
            "targets.0.channelId",
            "string_type",
        ),
        (
            "/v1/accounts/connect/token",
            {"platform": "tiktok", "accessToken": "act.x", "expiresIn": "3600"},
            "expiresIn",
            "int_type",
        ),
        (
            "/v1/webhooks",
            {"url": "https://example.com/hook", "description": False},
            "description",
            "string_type",
        ),
    ],
)
def test_json_bodies_take_each_field_in_its_own_type(client, owner, path, body, field, error):
    """pydantic's lax mode turned `"durationSec": "10"` into 10: JSON request bodies are strict, a value of another
    JSON type is 400 `validation_error` naming the field (query parameters, strings on the wire, stay lax)."""
    r = client.post(path, json=body, headers=session_headers(owner.session_token))
    details = assert_envelope(r, 400, "validation_error")["details"]
    assert (field, error) in [(d["field"], d["error"]) for d in details], details
    assert {d["field"] for d in details} <= {field, field.rpartition(".")[0]}, (
        details
    )  # (a union's other branch)


def test_strict_bodies_still_take_timestamps_as_iso_strings_and_lax_queries(client, owner):
    r = client.post(
        "/v1/generations",
        params={"dryRun": "true"},
        json={**VIDEO, "durationSec": 10},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code in (200, 402), (
        r.text
    )  # dryRun read from its query string (402: no subscription here)
    r = client.patch(
        "/v1/posts/pst_nope",
        json={"scheduledAt": "2099-01-01T09:00:00+02:00"},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 404, r.text  # the timestamp passed validation


def test_unknown_fields_refused(client, owner):
    r = client.post(
        "/v1/api-keys", json={"name": "x", "admin": True}, headers=session_headers(owner.session_token)
    )
    body = assert_envelope(r, 400, "validation_error")
    assert body["details"][0]["field"] == "admin"


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"null", b"123", b"\xff\xfe"])
def test_non_object_bodies(client, owner, body):
    r = client.post(
        "/v1/api-keys",
        content=body,
        headers={**session_headers(owner.session_token), "content-type": "application/json"},
    )
    assert r.status_code == 400
    assert r.json()["error"] in ("validation_error", "invalid_json", "invalid_body")


def test_unknown_route_and_wrong_method(client, owner):
    assert_envelope(client.get("/v1/nothing-here"), 404, "not_found")
    assert_envelope(client.get("/nothing"), 404, "not_found")
    assert_envelope(
        client.put("/v1/workspace", headers=key_headers(owner.api_key)), 405, "method_not_allowed"
    )
    assert_envelope(client.delete("/v1/auth/login"), 405, "method_not_allowed")


def test_oversized_body_is_413_before_being_read(client, owner):
    big = b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    r = client.post(
        "/v1/api-keys",
        content=big,
        headers={**session_headers(owner.session_token), "content-type": "application/json"},
    )
    assert_envelope(r, 413, "payload_too_large")


def test_oversized_chunked_body_is_413(client, owner):
    def gen():
        for _ in range(40):
            yield b"x" * 65536

    r = client.post(
        "/v1/api-keys",
        content=gen(),
        headers={**session_headers(owner.session_token), "content-type": "application/json"},
    )
    assert_envelope(r, 413, "payload_too_large")


def test_missing_key(client):
    assert_envelope(client.get("/v1/workspace"), 401, "invalid_api_key")


def test_openapi_and_docs(client):
    doc = client.get("/openapi.json").json()
    # every API path is under /v1; the media host ({media_url}) serves files at /media/
    assert all(p.startswith(("/v1/", "/media/")) for p in doc["paths"])
    assert client.get("/docs").status_code == 200


def test_openapi_declares_400_not_422(client):
    doc = client.get("/openapi.json").json()
    for path, item in doc["paths"].items():
        for method, op in item.items():
            assert "422" not in op["responses"], (method, path)
    assert "HTTPValidationError" not in str(doc)


# A lone UTF-16 surrogate ("\ud800") is valid JSON text but no string the store (UTF-8) can hold: it is refused
# where the request is read, for every field, before anything runs.
SURROGATE_BODY = b'{"targets": ["facebook"], "content": "hello \\ud800 world"}'


@pytest.mark.parametrize(
    "path,body",
    [
        ("/v1/posts", SURROGATE_BODY),
        ("/v1/generations", b'{"type": "image", "prompt": "a cat \\udfff on a mat"}'),
        ("/v1/posts", b'{"targets": ["facebook"], "content": "ok", "labels": {"team": "\\ud83d"}}'),
        ("/v1/webhooks", b'{"url": "https://hooks.example.com/x", "description": "\\udc00"}'),
    ],
)
@pytest.mark.usefixtures("sandbox")
def test_a_lone_surrogate_is_400_in_every_field(client, owner, path, body):
    r = client.post(
        path, content=body, headers={**key_headers(owner.api_key), "content-type": "application/json"}
    )
    body_out = assert_envelope(r, 400, "validation_error")
    assert any("surrogate" in d["message"] for d in body_out["details"]), body_out
    assert client.get("/v1/posts", headers=key_headers(owner.api_key)).json()["items"] == []


@pytest.mark.usefixtures("sandbox")
def test_a_paired_surrogate_escape_is_the_character_it_encodes(client, owner):
    r = client.post(
        "/v1/posts",
        content=b'{"targets": ["facebook"], "content": "hi \\ud83d\\ude00"}',
        headers={**key_headers(owner.api_key), "content-type": "application/json"},
    )
    assert r.status_code == 202, r.text
    assert r.json()["content"] == "hi \U0001f600"


def test_an_unexpected_error_is_a_500_envelope_that_closes_its_connection(client, owner, monkeypatch):
    from backend.services import workspace

    def broken(workspace_id):
        raise RuntimeError("a bug")

    monkeypatch.setattr(workspace, "get", broken)
    r = client.get("/v1/workspace", headers=key_headers(owner.api_key))
    assert_envelope(r, 500, "internal_error")
    assert "a bug" not in r.text
    assert r.headers["connection"] == "close"  # the server closes it: the client must not send on it again


def test_head_is_the_get_without_its_body(client, owner):
    h = key_headers(owner.api_key)
    get = client.get("/v1/workspace", headers=h)
    head = client.head("/v1/workspace", headers=h)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == get.headers["content-type"]
    assert head.headers["content-length"] == get.headers["content-length"]
    assert client.head("/v1/health").status_code == 200
    assert client.head("/v1/posts/post_nothing", headers=h).status_code == 404
    assert client.head("/v1/workspace").status_code == 401  # authenticated like the GET
    r = client.head("/v1/auth/login")  # no GET there: 405, and its Allow does not offer HEAD
    assert r.status_code == 405 and r.content == b"" and "HEAD" not in r.headers["allow"]
    assert "HEAD" in client.put("/v1/posts", headers=h).headers["allow"]


@pytest.mark.parametrize(
    ("method", "path", "location"),
    [
        ("GET", "/v1/posts/", "/v1/posts"),
        ("GET", "/v1/posts/?limit=3&q=a%20b", "/v1/posts?limit=3&q=a%20b"),
        ("GET", "/v1/health/", "/v1/health"),
        ("POST", "/v1/posts/", "/v1/posts"),
        ("GET", "/v1/accounts//", "/v1/accounts"),
    ],
)
def test_the_trailing_slash_redirect_never_takes_its_address_from_host(client, owner, method, path, location):
    """Issue 30 item 9: the redirect of `/v1/posts/` built its Location from the Host header (a client-chosen
    address: `Host: evil.example` → `http://evil.example/v1/posts`); it is now a relative reference."""
    r = client.request(
        method, path, headers={"Host": "evil.example", **key_headers(owner.api_key)}, follow_redirects=False
    )
    assert r.status_code == 307
    assert r.headers["location"] == location
    assert "evil" not in r.text


def test_a_path_no_route_takes_with_or_without_its_slash_is_404(client, owner):
    r = client.get("/v1/nothing-here/", headers=key_headers(owner.api_key), follow_redirects=False)
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    assert client.get("/v1/posts", headers=key_headers(owner.api_key)).status_code == 200


@pytest.mark.parametrize(
    "path",
    ["/v1/sandbox/published?accountId=a%00b", "/v1/posts/post_a%00b", "/v1/media?type=image&sha256=%00"],
)
def test_a_nul_in_a_path_or_a_query_is_400(client, owner, path):
    """Issue 30 item 9: the document states that no string holds NUL; a path or query value with `%00` was
    answered as any other (the fuzz found it accepted)."""
    r = client.get(path, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == "validation_error", r.text


@pytest.mark.parametrize("path", ["/v1/media", "/v1/generations", "/v1/credits", "/v1/posts"])
def test_an_empty_cursor_is_not_a_cursor(client, owner, path):
    r = client.get(f"{path}?cursor=", headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == "invalid_cursor", r.text

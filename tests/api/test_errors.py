"""Every error in the envelope {error, message, details}, with a stable code; nothing a client sends is a 500."""

from __future__ import annotations

import pytest

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
    r = client.post("/v1/api-keys", content=b'{"name": ', headers={**session_headers(owner.session_token),
                                                                    "content-type": "application/json"})
    assert_envelope(r, 400, "invalid_json")


def test_wrong_types_and_missing_fields_name_each_field(client, owner):
    r = client.post("/v1/api-keys", json={"name": 12, "expiresInDays": "soon", "scopes": "all"},
                    headers=session_headers(owner.session_token))
    body = assert_envelope(r, 400, "validation_error")
    fields = {d["field"].split(".")[0] for d in body["details"]}
    assert {"name", "expiresInDays", "scopes"} <= fields
    r = client.post("/v1/auth/login", json={"email": "a@b.c"})
    body = assert_envelope(r, 400, "validation_error")
    assert any(d["field"] == "password" and d["error"] == "missing" for d in body["details"])


def test_unknown_fields_refused(client, owner):
    r = client.post("/v1/api-keys", json={"name": "x", "admin": True}, headers=session_headers(owner.session_token))
    body = assert_envelope(r, 400, "validation_error")
    assert body["details"][0]["field"] == "admin"


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"null", b"123", b"\xff\xfe"])
def test_non_object_bodies(client, owner, body):
    r = client.post("/v1/api-keys", content=body, headers={**session_headers(owner.session_token),
                                                            "content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"] in ("validation_error", "invalid_json", "invalid_body")


def test_unknown_route_and_wrong_method(client, owner):
    assert_envelope(client.get("/v1/nothing-here"), 404, "not_found")
    assert_envelope(client.get("/nothing"), 404, "not_found")
    assert_envelope(client.put("/v1/workspace", headers=key_headers(owner.api_key)), 405, "method_not_allowed")
    assert_envelope(client.delete("/v1/auth/login"), 405, "method_not_allowed")


def test_oversized_body_is_413_before_being_read(client, owner):
    big = b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    r = client.post("/v1/api-keys", content=big, headers={**session_headers(owner.session_token),
                                                           "content-type": "application/json"})
    assert_envelope(r, 413, "payload_too_large")


def test_oversized_chunked_body_is_413(client, owner):
    def gen():
        for _ in range(40):
            yield b"x" * 65536

    r = client.post("/v1/api-keys", content=gen(), headers={**session_headers(owner.session_token),
                                                             "content-type": "application/json"})
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

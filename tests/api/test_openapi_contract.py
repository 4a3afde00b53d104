"""The OpenAPI document is the contract: it validates, every operation has a short camelCase operationId and a
tag (a generated client reads naturally), it states the real constraints, and every path answers a method it
does not declare with 405 and an `Allow` header listing exactly the declared ones."""

from __future__ import annotations

import re

import pytest
from openapi_spec_validator import validate

from backend.networks.registry import names
from tests.conftest import key_headers

NETWORKS = names()

CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@pytest.fixture
def doc(client):  # type: ignore[no-untyped-def]
    r = client.get("/openapi.json")
    assert r.status_code == 200
    return r.json()


def _operations(doc):  # type: ignore[no-untyped-def]
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def test_the_document_validates(doc):
    validate(doc)  # raises on any error of OpenAPI 3.1


def test_every_operation_has_a_camel_case_operation_id_and_a_tag(doc):
    ids = []
    for path, method, op in _operations(doc):
        assert CAMEL.match(op.get("operationId", "")), f"{method.upper()} {path}: {op.get('operationId')!r}"
        assert op.get("tags"), f"{method.upper()} {path} has no tag"
        ids.append(op["operationId"])
    assert len(ids) == len(set(ids)), "operationIds must be unique"
    for name in (
        "createPost",
        "getPost",
        "listPosts",
        "updatePost",
        "deletePost",
        "uploadMedia",
        "listMedia",
        "createKey",
        "listKeys",
        "deleteKey",
        "getWorkspace",
        "listAccounts",
        "login",
        "getActivity",
        "createGeneration",
        "getGeneration",
        "listGenerations",
        "deleteGeneration",
    ):
        assert name in ids


def _schema(doc, name):  # type: ignore[no-untyped-def]
    return doc["components"]["schemas"][name]


def test_the_document_states_the_constraints(doc):
    media = _schema(doc, "MediaCreate")
    assert media["oneOf"] == [{"required": ["url"]}, {"required": ["base64"]}]
    assert media["properties"]["url"]["format"] == "uri"
    post = _schema(doc, "PostCreate")
    targets = post["properties"]["targets"]
    assert (targets["minItems"], targets["maxItems"]) == (1, 20)
    names = [s for s in targets["items"]["anyOf"] if s.get("type") == "string"][0]
    assert names["enum"] == list(NETWORKS)
    assert _schema(doc, "TargetRef")["properties"]["platform"]["enum"] == list(NETWORKS)
    assert post["properties"]["content"]["maxLength"] == 63206
    assert post["properties"]["mediaUrls"]["maxItems"] == 10
    assert post["properties"]["mediaUrls"]["items"]["format"] == "uri"
    assert {"type": "string", "format": "date-time"}.items() <= post["properties"]["scheduledAt"]["anyOf"][
        0
    ].items()
    target = _schema(doc, "TargetOut")["properties"]
    assert target["status"]["enum"] == ["pending", "publishing", "succeeded", "failed", "inbox_delivered"]
    assert target["nextAttemptAt"]["anyOf"][0]["format"] == "date-time"
    assert _schema(doc, "PostOut")["properties"]["status"]["enum"] == [
        "scheduled",
        "processing",
        "completed",
        "partial",
        "failed",
        "cancelled",
    ]
    tiktok = _schema(doc, "TikTokOptions")["properties"]
    assert tiktok["postMode"]["enum"] == ["DIRECT_POST", "MEDIA_UPLOAD"]
    assert "PUBLIC_TO_EVERYONE" in tiktok["privacyLevel"]["anyOf"][0]["enum"]
    listing = {p["name"]: p for p in doc["paths"]["/v1/posts"]["get"]["parameters"]}
    assert listing["cursor"]["schema"]["pattern"] == r"^p1\.[sr]\.-?[0-9]{1,18}\.post_[0-9a-z]{26}$"
    assert listing["platform"]["schema"]["anyOf"][0]["enum"] == list(NETWORKS)
    links = doc["paths"]["/v1/posts"]["post"]["responses"]["202"]["links"]
    assert {name: link["parameters"] for name, link in links.items()} == {
        op: {"post_id": "$response.body#/id"} for op in ("getPost", "updatePost", "deletePost")
    }


def test_the_generation_operations_state_their_rules(doc):
    ops = {op["operationId"]: (path, method, op) for path, method, op in _operations(doc)}
    for name, (method, path) in {
        "createGeneration": ("post", "/v1/generations"),
        "listGenerations": ("get", "/v1/generations"),
        "getGeneration": ("get", "/v1/generations/{generation_id}"),
        "deleteGeneration": ("delete", "/v1/generations/{generation_id}"),
    }.items():
        assert ops[name][:2] == (path, method) and ops[name][2]["tags"] == ["generations"]
    create = _schema(doc, "GenerationCreate")
    props = create["properties"]
    assert create["required"] == ["type", "prompt"] and create["additionalProperties"] is False
    assert props["type"]["enum"] == ["image", "video"]
    assert (props["prompt"]["minLength"], props["prompt"]["maxLength"]) == (3, 1800)
    assert props["aspectRatio"]["anyOf"][0]["enum"] == ["9:16", "1:1", "16:9"]
    assert props["durationSec"]["anyOf"][0]["enum"] == [5, 10, 15]
    assert props["sourceUrls"]["anyOf"][0]["maxItems"] == 2
    out = _schema(doc, "GenerationOut")["properties"]
    assert out["status"]["enum"] == ["pending", "processing", "completed", "failed"]
    assert out["aspectRatio"]["enum"] == ["9:16", "1:1", "16:9"]
    post = doc["paths"]["/v1/generations"]["post"]
    assert {"200", "202", "400", "402"} <= set(post["responses"])
    assert post["responses"]["200"]["content"]["application/json"]["schema"][
        "anyOf"
    ] == [  # dryRun, or a replay
        {"$ref": "#/components/schemas/GenerationQuote"},
        {"$ref": "#/components/schemas/GenerationOut"},
    ]
    assert props["idempotencyKey"]["anyOf"][0]["maxLength"] == 200
    assert [p["name"] for p in post["parameters"]] == ["dryRun"]
    assert set(_schema(doc, "GenerationList")["properties"]) == {"items", "nextCursor", "credits"}
    assert {"404", "409"} <= set(doc["paths"]["/v1/generations/{generation_id}"]["delete"]["responses"])


def test_no_422_is_declared(doc):
    for path, method, op in _operations(doc):
        assert "422" not in op["responses"], f"{method.upper()} {path}"


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def test_every_wrong_method_is_405_with_allow(client, doc, owner):
    checked = 0
    for path, item in doc["paths"].items():
        declared = {m.upper() for m in item if m in METHODS}
        expected = declared | ({"HEAD"} if "GET" in declared else set())
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            if method in declared:
                continue
            r = client.request(method, _concrete(path), headers=key_headers(owner.api_key))
            assert r.status_code == 405, f"{method} {path}: {r.status_code}"
            assert r.json()["error"] == "method_not_allowed"
            allow = {m.strip() for m in r.headers["allow"].split(",")}
            assert allow == expected, (
                f"{method} {path}: Allow {r.headers['allow']!r}, declared {sorted(expected)}"
            )
            checked += 1
    assert checked >= 30


def test_every_rule_a_schema_can_state_is_stated(doc):
    """Issue 30 item 9: `make fuzz` found schema-valid requests refused (`tz` any string, a cursor of "0", durationSec
    on an image, NUL in names and passwords, TikTok URLs off the media host). The document states them now."""
    activity = {p["name"]: p for p in doc["paths"]["/v1/activity"]["get"]["parameters"]}
    assert "Europe/Paris" in activity["tz"]["schema"]["enum"]
    for path, name, pattern in (
        ("/v1/media", "cursor", r"^m1\.med_[0-9a-z]{26}$"),
        ("/v1/generations", "cursor", r"^g1\.gen_[0-9a-z]{26}$"),
        ("/v1/credits", "cursor", r"^c1\.cre_[0-9a-z]{26}$"),
        ("/v1/webhooks/{webhook_id}/deliveries", "cursor", r"^d1\.whd_[0-9a-z]{26}$"),
    ):
        params = {p["name"]: p for p in doc["paths"][path]["get"]["parameters"]}
        assert params[name]["schema"]["pattern"] == pattern, path
    posts = {p["name"]: p for p in doc["paths"]["/v1/posts"]["get"]["parameters"]}
    assert posts["label"]["schema"]["items"]["pattern"].startswith("^[a-z0-9]")
    create = _schema(doc, "GenerationCreate")
    image, video = create["oneOf"]
    assert image["properties"]["type"] == {"const": "image"} and image["properties"]["durationSec"] == {
        "type": "null"
    }
    assert video["properties"]["type"] == {"const": "video"}
    assert create["properties"]["prompt"]["pattern"].startswith("^\\s*")
    assert _schema(doc, "LoginRequest")["properties"]["password"]["pattern"] == "^[^\\u0000]*$"
    assert _schema(doc, "OAuthStart")["properties"]["redirectUri"]["pattern"].startswith("^https?://")


def test_what_no_schema_can_state_is_named_and_excluded_by_name(doc):
    """The operations `make fuzz` excludes from "every request the schema allows is accepted" are exactly those
    whose description names the rules no JSON Schema can state (backend.api.app.UNSTATED_RULES)."""
    import tomllib
    from pathlib import Path

    from backend.api.app import UNSTATED_RULES

    config = tomllib.loads((Path(__file__).with_name("schemathesis.toml")).read_text())
    excluded = {op["include-operation-id"] for op in config["operations"]}
    assert excluded == set(UNSTATED_RULES)
    described = {
        op["operationId"]
        for _, _, op in _operations(doc)
        if "Not stated by the schema" in op.get("description", "")
    }
    assert described == excluded

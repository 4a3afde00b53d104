"""Instagram's error table (IG error codes reference): every documented error is answered with HTTP 400, the server
error -1/2207001 too ("Instagram server error. Try again.", is_transient) — issue 29, research finding IG-4."""

from __future__ import annotations

import httpx

from backend.networks.sandbox import errors
from backend.services.adapters import sandbox
from tests.networks.conftest import IMG


def create(settings, ident) -> httpx.Response:  # type: ignore[no-untyped-def]
    handler = sandbox(settings).handler("instagram")
    url = f"https://graph.facebook.sandbox.invalid/v26.0/{ident.external_account_id}/media"
    return handler(
        httpx.Request("POST", url, data={"image_url": IMG[0].url, "access_token": ident.access_token})
    )


def test_the_server_error_is_a_400_with_is_transient(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("instagram", behaviour="fail-retriable")
    cid = create(settings, ident).json()["id"]
    handler = sandbox(settings).handler("instagram")
    url = f"https://graph.facebook.sandbox.invalid/v26.0/{ident.external_account_id}/media_publish"
    r = handler(httpx.Request("POST", url, data={"creation_id": cid, "access_token": ident.access_token}))
    err = r.json()["error"]
    assert r.status_code == 400 and err["error_subcode"] == 2207001 and err["is_transient"] is True


def test_the_server_error_switch_is_a_400(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("instagram")
    errors.configure_errors("instagram", "-1/2207001", times=1)
    r = create(settings, ident)
    assert r.status_code == 400 and r.json()["error"]["is_transient"] is True

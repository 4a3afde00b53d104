"""368, "temporarily blocked for policies violations — wait and retry the operation" (Graph's error handling
guide): a wait with a sourced delay, never an immediate retry (issue 29)."""

from __future__ import annotations

import httpx

from backend.networks.facebook.graph import POLICY_BLOCK_WAIT_S, classify
from backend.networks.sandbox import errors
from backend.services.adapters import make_adapter
from tests.networks.conftest import publication

META_368 = (
    "We limit how often you can post, comment or do other things in a given amount of time in order to help "
    "protect the community from spam. You can try again later."
)


def test_the_emulator_answers_368_in_metas_words(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")
    ad = make_adapter("facebook", settings)
    errors.configure_errors("facebook", "368/1390008", times=2)
    out = ad.publish(publication(ident, "facebook", "blocked", []))
    again = ad.publish(publication(ident, "facebook", "blocked", []))  # the block lasts while armed
    for o in (out, again):
        assert o.state == "failed" and o.fail_type == "retriable" and o.network_code == "368/1390008"
        assert o.retry_after_s is not None and o.retry_after_s >= POLICY_BLOCK_WAIT_S >= 3600
        assert "temporarily blocked" in str(o.fail_reason) and "try again later" in str(o.fail_reason)


def test_368_waits_an_hour_and_says_what_to_check() -> None:
    def body(message: str) -> httpx.Response:
        err = {"message": message, "type": "OAuthException", "code": 368, "error_subcode": 1390008}
        return httpx.Response(400, json={"error": err}, request=httpx.Request("POST", "https://x.test/"))

    plain = classify("Facebook", body(META_368))
    assert plain.fail_type == "retriable" and plain.retry_after_s == POLICY_BLOCK_WAIT_S
    assert "Meta Business Suite" in plain.reason

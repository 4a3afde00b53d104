"""Signing: what backend.webhooks.signing produces verifies with the reference `standardwebhooks` library."""

from __future__ import annotations

import json
import time

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from backend.webhooks import signing


def test_secret_shape() -> None:
    secret = signing.new_secret()
    assert secret.startswith("whsec_") and len(secret) > 30 and secret != signing.new_secret()


def test_signature_verifies_with_the_reference_library() -> None:
    secret = signing.new_secret()
    body = json.dumps({"type": "publish.completed", "data": {"platform": "facebook"}}).encode()
    headers = signing.headers([secret], "evt_1", int(time.time()), body)
    assert Webhook(secret).verify(body, headers)["data"]["platform"] == "facebook"
    with pytest.raises(WebhookVerificationError):
        Webhook(signing.new_secret()).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body + b" ", headers)


def test_two_secrets_both_verify() -> None:
    old, new = signing.new_secret(), signing.new_secret()
    body = b'{"a":1}'
    headers = signing.headers([new, old], "evt_2", int(time.time()), body)
    assert headers["webhook-signature"].count("v1,") == 2
    assert Webhook(new).verify(body, headers) == {"a": 1}
    assert Webhook(old).verify(body, headers) == {"a": 1}


def test_an_old_timestamp_is_refused_by_receivers() -> None:
    secret = signing.new_secret()
    headers = signing.headers([secret], "evt_3", int(time.time()) - 3600, b"{}")
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(b"{}", headers)

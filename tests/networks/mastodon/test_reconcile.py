"""Never publish twice: the Idempotency-Key and the listing match past its hour (research B.1b M18, B.1d; B.3 F4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from backend.networks.mastodon.options import MastodonOptions
from backend.networks.mastodon.reconcile import idempotency_key, is_ours, key_still_protects

T0 = datetime(2026, 11, 28, 15, 0, tzinfo=UTC)
STATUS = {"id": "1", "created_at": "2026-11-28T15:00:05.000Z", "application": {"name": "socialpub"}}
SOURCE = {"id": "1", "text": "hello #fediverse", "spoiler_text": ""}


def test_the_key_is_the_targets_and_stable() -> None:
    assert idempotency_key("tgt_01J") == idempotency_key("tgt_01J") == "socialpub-tgt_01J"
    assert idempotency_key("tgt_01J") != idempotency_key("tgt_01K")
    with pytest.raises(ValueError):
        idempotency_key("")


def test_past_the_keys_hour_a_retry_reconciles_first() -> None:
    assert key_still_protects(T0, T0 + timedelta(minutes=30))
    assert not key_still_protects(T0, T0 + timedelta(minutes=56))  # retention is 1 h; margin for the clocks
    assert not key_still_protects(T0, T0 + timedelta(minutes=61))


def test_ours_is_same_source_same_cw_our_app_and_not_older_than_the_attempt() -> None:
    kw = {"text": "hello #fediverse", "spoiler_text": "", "app_name": "socialpub", "attempted_at": T0}
    assert is_ours(STATUS, SOURCE, **kw)  # type: ignore[arg-type]
    by_hand = STATUS | {"application": {"name": "Web"}}
    assert not is_ours(by_hand, SOURCE, **kw)  # type: ignore[arg-type]
    older = STATUS | {"created_at": "2026-11-28T14:00:00.000Z"}
    assert not is_ours(older, SOURCE, **kw)  # type: ignore[arg-type]
    assert not is_ours(STATUS, SOURCE | {"spoiler_text": "cw"}, **kw)  # type: ignore[arg-type]
    assert not is_ours(STATUS, SOURCE | {"text": "hello"}, **kw)  # type: ignore[arg-type]
    assert not is_ours(STATUS | {"created_at": None}, SOURCE, **kw)  # type: ignore[arg-type]
    assert not is_ours(STATUS | {"application": None}, SOURCE, **kw)  # type: ignore[arg-type]  # a remote view


def test_options_refuse_what_the_api_would() -> None:
    assert MastodonOptions(visibility="unlisted", language="en").visibility == "unlisted"
    with pytest.raises(ValidationError):
        MastodonOptions(visibility="followers")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        MastodonOptions(language="english")

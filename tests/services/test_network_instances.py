"""The apps registered per server and the servers' cached limits (backend/services/network_instances.py)."""

from __future__ import annotations

from datetime import timedelta

import time_machine

from backend import clock
from backend.services import network_instances as ni
from backend.store.db import database

NET = "fediverse_test"  # a network of many servers; the service names none


def test_one_app_per_server_reused_and_replaced_when_registered_again(settings) -> None:  # type: ignore[no-untyped-def]
    assert ni.app_of(NET, "social.example") is None
    ni.save_app(NET, "social.example", "cid1", "secret1", ("write:statuses",), ("http://127.0.0.1/callback",))
    ni.save_app(NET, "other.example", "cid2", "secret2", ("write:statuses",), ("http://127.0.0.1/callback",))
    app = ni.app_of(NET, "social.example")
    assert app is not None and app.client_id == "cid1" and app.client_secret == "secret1"
    assert app.scopes == ("write:statuses",) and "secret1" not in repr(app)
    ni.save_app(
        NET,
        "social.example",
        "cid3",
        "secret3",
        ("write:statuses", "profile"),
        ("http://127.0.0.1/callback",),
    )
    again = ni.app_of(NET, "social.example")
    assert again is not None and again.client_id == "cid3" and again.scopes == ("write:statuses", "profile")
    assert database.execute_sql("SELECT COUNT(*) FROM network_instance").fetchone()[0] == 2
    stored = [r[0] for r in database.execute_sql("SELECT client_secret FROM network_instance").fetchall()]
    assert all(s.startswith("enc:v1:") for s in stored)


def test_limits_are_cached_until_their_age_then_read_again(settings) -> None:  # type: ignore[no-untyped-def]
    assert ni.fresh_limits(NET, "social.example", 3600) is None
    ni.save_limits(NET, "social.example", {"max_characters": 1000})
    assert ni.fresh_limits(NET, "social.example", 3600) == {"max_characters": 1000}
    with time_machine.travel(clock.now() + timedelta(hours=2), tick=False):
        assert ni.fresh_limits(NET, "social.example", 3600) is None
    # saving limits keeps the app, saving the app keeps the limits
    ni.save_app(NET, "social.example", "cid", "sec", (), ())
    assert ni.fresh_limits(NET, "social.example", 3600) == {"max_characters": 1000}
    ni.save_limits(NET, "social.example", {"max_characters": 500})
    app = ni.app_of(NET, "social.example")
    assert app is not None and app.client_id == "cid"

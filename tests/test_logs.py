"""backend/logs.py: tokens and app secrets are never logged. `socialpub serve` configures the root logger at INFO
(backend/operator/cli.py _logging); httpx logs each request's URL at INFO, and Graph calls carry client_secret,
the code, fb_exchange_token and access_token in the query string: the `httpx` logger keeps the URL without its
query, in any process that imported the backend. That per-request line is off by default (issue 34); a process
that sets the `httpx` logger's level gets it, redacted. Lateness under a burst is a summary line a minute."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json, logging
    import httpx
    logging.basicConfig(level=logging.INFO)  # what `socialpub serve` does (backend/operator/cli.py _logging)
    import backend.api.app, backend.jobs.worker  # what a served process has imported
    from backend.config import Settings
    from backend.networks import oauth, oauth_apps
    from backend.networks.facebook.settings import FacebookSettings
    from backend.networks.factory import http_client

    def handler(request):
        if request.url.path.endswith("/oauth/access_token"):
            return httpx.Response(200, json={"access_token": "USERTOKEN-SECRET-123", "expires_in": 5000})
        if request.url.path.endswith("/me/accounts"):
            return httpx.Response(200, json={"data": [{"id": "1", "name": "P", "access_token": "PAGETOKEN-SECRET"}]})
        return httpx.Response(404)

    settings = Settings()
    mine = settings.network_settings(FacebookSettings)
    mine.client_id, mine.client_secret = "app", "APPSECRET-XYZ"
    app = oauth_apps.app("facebook", settings)
    with http_client(httpx.MockTransport(handler), 5) as client:
        tokens = oauth.exchange_code(app, client, "AUTHCODE-SECRET", "http://127.0.0.1:1/callback", None)
        oauth.discover("facebook", settings, client, tokens)
    import sys
    print("---- httpx at INFO ----", file=sys.stderr, flush=True)
    logging.getLogger("httpx").setLevel(logging.INFO)  # a process that wants the per-request lines
    with http_client(httpx.MockTransport(handler), 5) as client:
        tokens = oauth.exchange_code(app, client, "AUTHCODE-SECRET", "http://127.0.0.1:1/callback", None)
""")


def test_graph_oauth_calls_log_no_secret_in_a_served_process(tmp_path):  # type: ignore[no-untyped-def]
    env = dict(os.environ, SOCIALPUB_DATA_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120, cwd=os.getcwd()
    )
    assert out.returncode == 0, out.stderr[-2000:]
    for secret in ("APPSECRET-XYZ", "AUTHCODE-SECRET", "USERTOKEN-SECRET-123"):
        assert secret not in out.stderr, [line for line in out.stderr.splitlines() if secret in line][:2]
    default, _, at_info = out.stderr.partition("---- httpx at INFO ----")
    assert at_info, out.stderr[-2000:]
    assert "HTTP Request" not in default, default  # off by default (issue 34)
    # logged when asked for, without the query
    assert "HTTP Request: GET https://graph.facebook.com/v26.0/oauth/access_token?… " in at_info, at_info


def test_redaction_keeps_other_arguments() -> None:
    import logging

    from backend.logs import RedactQuery

    rec = logging.LogRecord(
        "httpx",
        logging.INFO,
        __file__,
        1,
        'HTTP Request: %s %s "%s %d %s"',
        ("GET", "https://h.example/p?access_token=T", "HTTP/1.1", 200, "OK"),
        None,
    )
    assert RedactQuery().filter(rec)
    assert rec.getMessage() == 'HTTP Request: GET https://h.example/p?… "HTTP/1.1 200 OK"'
    plain = logging.LogRecord("x", logging.INFO, __file__, 1, "%s", ("https://h.example/p",), None)
    RedactQuery().filter(plain)
    assert plain.getMessage() == "https://h.example/p"


def test_lateness_is_a_summary_a_minute_not_a_line_per_post(caplog) -> None:  # type: ignore[no-untyped-def]
    import logging

    from backend.logs import LatenessLog

    now = [1000.0]
    summary = LatenessLog(every_s=60.0, monotonic=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="socialpub.publishing"):
        summary.note("post_on_time", 0.8)  # not late (<= 1 s): nothing
        summary.flush_due()
        assert caplog.records == []
        summary.note("post_a", 3.0)  # the first late post after a quiet minute: at once
        assert [r.getMessage() for r in caplog.records] == ["post post_a sent 3.0 s after its scheduled time"]
        for i in range(1, 2000):  # a burst: counted, no line per post
            now[0] += 0.01
            summary.note(f"post_{i}", 2.0 + i / 100)
        assert len(caplog.records) == 1
        summary.flush_due()  # the heartbeat, before the minute is over: nothing yet
        assert len(caplog.records) == 1
        now[0] = 1060.0
        summary.flush_due()  # a minute after the last line: one line, how many and the worst
        assert len(caplog.records) == 2
        assert caplog.records[1].getMessage() == (
            "1999 posts sent more than 1 s after their scheduled time since the last report; the worst 22.0 s "
            "late (post post_1999)"
        )
        now[0] = 1200.0
        summary.flush_due()  # nothing counted since: no line
        assert len(caplog.records) == 2


def test_httpx_and_httpcore_per_request_lines_are_off_by_default() -> None:
    import logging

    import backend  # noqa: F401  (installs the rules)

    for name in ("httpx", "httpcore"):
        assert not logging.getLogger(name).isEnabledFor(logging.INFO), name

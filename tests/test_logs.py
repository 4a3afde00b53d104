"""backend/logs.py: tokens and app secrets are never logged. `socialpub serve` configures the root logger at INFO
(backend/operator/cli.py _logging); httpx logs each request's URL at INFO, and Graph calls carry client_secret,
the code, fb_exchange_token and access_token in the query string: the `httpx` logger keeps the URL without its
query, in any process that imported the backend."""

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
""")


def test_graph_oauth_calls_log_no_secret_in_a_served_process(tmp_path):  # type: ignore[no-untyped-def]
    env = dict(os.environ, SOCIALPUB_DATA_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120, cwd=os.getcwd()
    )
    assert out.returncode == 0, out.stderr[-2000:]
    for secret in ("APPSECRET-XYZ", "AUTHCODE-SECRET", "USERTOKEN-SECRET-123"):
        assert secret not in out.stderr, [line for line in out.stderr.splitlines() if secret in line][:2]
    # still logged, without the query
    assert "HTTP Request: GET https://graph.facebook.com/v26.0/oauth/access_token?… " in out.stderr, (
        out.stderr
    )


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

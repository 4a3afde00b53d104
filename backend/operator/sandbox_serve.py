"""`socialpub sandbox serve NETWORK --port P`: one network's emulator as a standalone HTTP server (uvicorn) on
loopback, so a connect flow (OAuth) and publishing can be tried against it over real HTTP by pointing
socialpub at it with SOCIALPUB_<NETWORK>_BASE_URL. Mounted in the front end's `sandbox` group
(socialpub_tui/cli/sandbox.py). docs/sandbox.md lists the endpoints and the switches.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from pathlib import Path

import click

from backend.outbound.guard import host_is_local

NETWORKS = ("tiktok", "facebook", "instagram", "linkedin", "youtube")
# the path under the server's origin of each setting a user points at the emulator (see backend/config.py)
BASE_PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "tiktok": (("SOCIALPUB_TIKTOK_BASE_URL", ""),),
    "facebook": (("SOCIALPUB_FACEBOOK_BASE_URL", "/v21.0"),),
    "instagram": (("SOCIALPUB_INSTAGRAM_BASE_URL", "/v21.0"),),
    "linkedin": (("SOCIALPUB_LINKEDIN_BASE_URL", "/rest"),),
    "youtube": (("SOCIALPUB_YOUTUBE_BASE_URL", "/youtube/v3"),),
}
# the OAuth endpoints, at the real networks' paths
OAUTH_PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "tiktok": (
        ("authorize", "/v2/auth/authorize/"),
        ("token", "/v2/oauth/token/"),
        ("revoke", "/v2/oauth/revoke/"),
    ),
    "facebook": (
        ("authorize", "/v21.0/dialog/oauth"),
        ("token", "/v21.0/oauth/access_token"),
        ("pages", "/v21.0/me/accounts"),
        ("revoke", "DELETE /v21.0/me/permissions"),
    ),
    "instagram": (
        ("authorize", "/v21.0/dialog/oauth"),
        ("token", "/v21.0/oauth/access_token"),
        ("pages", "/v21.0/me/accounts?fields=instagram_business_account"),
        ("revoke", "DELETE /v21.0/me/permissions"),
    ),
    "linkedin": (
        ("authorize", "/oauth/v2/authorization"),
        ("token", "/oauth/v2/accessToken"),
        ("revoke", "/oauth/v2/revoke"),
    ),
    "youtube": (("authorize", "/o/oauth2/v2/auth"), ("token", "/token"), ("revoke", "/revoke")),
}


# the sandbox's own control endpoints (docs/sandbox.md "Switches")
SWITCHES = {
    "oauth": "token lifetimes, dead grant, consent…",
    "errors": 'an error code of NETWORKS.md for the next calls: {"code": …, "times": 1, "path": "publish"}',
}


@click.command("serve")
@click.argument("network", type=click.Choice(NETWORKS))
@click.option("--port", type=click.IntRange(1, 65535), required=True, help="Port to listen on.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the emulator's state in D/sandbox.db (default: the configured data dir's sandbox).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON line {network, baseUrl, env, oauth, switches} before serving.",
)
def sandbox_serve_cmd(network: str, port: int, host: str, data_dir: Path | None, as_json: bool) -> None:
    """Run one network's emulator as a standalone HTTP server, until Ctrl+C.

    It serves the network's API, uploads and OAuth endpoints (authorize with a scripted consent, token,
    refresh, revoke) at the real paths; point socialpub at it with the printed SOCIALPUB_<NETWORK>_BASE_URL.
    POST /_sandbox/errors {"code": …} makes it answer the next call with one of the network's error codes.

    \b
    Example:
      socialpub sandbox serve tiktok --port 8401
    """
    import uvicorn

    from backend.config import Settings
    from backend.networks.sandbox import Sandbox
    from backend.networks.sandbox.server import asgi_app
    from backend.services.adapters import sandbox_config

    if not host_is_local(host):
        click.echo(
            f"Warning: {host} is not a loopback address; the emulator has no authentication of its own.",
            err=True,
        )
    settings = Settings(data_dir=data_dir, database_url=None) if data_dir is not None else Settings()
    config = sandbox_config(settings)
    try:
        sandbox = Sandbox(config)
    except Exception as exc:  # an unusable data dir or database
        raise click.ClickException(f"cannot open the sandbox database ({config.location!r}): {exc}") from exc
    app = asgi_app(sandbox.handler(network))
    shown = f"[{host}]" if ":" in host else host
    origin = f"http://{shown}:{port}"
    endpoints = {}
    for name, path in OAUTH_PATHS[network]:
        method, _sp, p = path.rpartition(" ")
        endpoints[name] = f"{(method + ' ') if method else ''}{origin}{p}"
    env = {name: origin + path for name, path in BASE_PATHS[network]}
    switches = {name: f"{origin}/_sandbox/{name}" for name in SWITCHES}
    if as_json:
        click.echo(
            json.dumps(
                {"network": network, "baseUrl": origin, "env": env, "oauth": endpoints, "switches": switches}
            )
        )
    else:
        click.echo(
            f"socialpub sandbox: the {network} emulator at {origin} (state: {config.location}); "
            "Ctrl+C stops it."
        )
        for name, url in endpoints.items():
            click.echo(f"  {name + ':':<10} {url}")
        click.echo("Switches (GET lists, POST sets; not a real network path; docs/sandbox.md):")
        for name, url in switches.items():
            click.echo(f"  {name + ':':<10} {url}  {SWITCHES[name]}")
        click.echo("Point socialpub at it:")
        for name, value in env.items():
            click.echo(f"{name}={value}")
    sys.stdout.flush()
    server = uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off", access_log=False)
    )
    # uvicorn handles SIGINT / SIGTERM (finishes the requests under way), then raises the signal again once
    # stopped: Ctrl+C's KeyboardInterrupt and a quiet SIGTERM here end the command normally
    signal.signal(signal.SIGTERM, lambda *_: None)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        raise click.ClickException(f"could not listen on {host}:{port}")
    if not as_json:
        click.echo("socialpub sandbox: stopped.")

"""`socialpub sandbox serve NETWORK --port P`: one network's emulator as a standalone HTTP server (uvicorn) on
loopback, so a connect flow (OAuth) and publishing can be tried against it over real HTTP by pointing
socialpub at it with SOCIALPUB_<NETWORK>_BASE_URL. Mounted in the front end's `sandbox` group
(socialpub_tui/cli/sandbox.py). docs/sandbox.md lists the endpoints and the switches.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import signal
import sys
from pathlib import Path

import click

from backend.networks import registry
from backend.outbound.guard import host_is_local


def _sandbox_networks() -> list[str]:
    """The registered networks that have an emulator (the registry: plugins' too)."""
    return [n.name for n in registry.networks() if n.emulator]


class NetworkChoice(click.Choice):  # type: ignore[type-arg]  # click.Choice is generic in click's newer stubs only
    """click.Choice over the registry's networks, read when a value is checked or help is shown."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(_sandbox_networks())

    @choices.setter
    def choices(self, value: object) -> None:  # click.Choice.__init__ assigns (); the registry is the source
        pass


# the sandbox's own control endpoints (docs/sandbox.md "Switches")
SWITCHES = {
    "oauth": "token lifetimes, dead grant, consent…",
    "errors": 'an error code of NETWORKS.md for the next calls: {"code": …, "times": 1, "path": "publish"}',
}


@click.command("serve")
@click.argument("network", type=NetworkChoice())
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
@click.option(
    "--product",
    "products",
    multiple=True,
    metavar="NAME",
    help="A product (or permission) the emulated app holds; repeatable (default: a new app's self-serve ones).",
)
@click.option(
    "--audited", is_flag=True, help="The emulated app passed the network's review of apps (an audit)."
)
@click.option(
    "--verified", is_flag=True, help="The emulated app is verified (the network's verification of apps)."
)
@click.option(
    "--app-kind", default=None, metavar="KIND", help='The emulated app\'s kind ("web", "desktop"…).'
)
def sandbox_serve_cmd(
    network: str,
    port: int,
    host: str,
    data_dir: Path | None,
    as_json: bool,
    products: tuple[str, ...],
    audited: bool,
    verified: bool,
    app_kind: str | None,
) -> None:
    """Run one network's emulator as a standalone HTTP server, until Ctrl+C.

    It serves the network's API, uploads and OAuth endpoints (authorize with a scripted consent, token,
    refresh, revoke) at the real paths; point socialpub at it with the printed SOCIALPUB_<NETWORK>_BASE_URL.
    POST /_sandbox/errors {"code": …} makes it answer the next call with one of the network's error codes.

    \b
    Example:
      socialpub sandbox serve tiktok --port 8401
    """
    import uvicorn

    # deferred: backend.config costs ~31 ms of start-up, paid only by the commands that use it
    from backend.config import Settings

    # deferred: backend.networks.sandbox costs ~144 ms of start-up, paid only by the commands that use it
    from backend.networks.sandbox import Sandbox, emulator_class

    # deferred: backend.networks.sandbox.server costs ~147 ms of start-up, paid only by the commands that use it
    from backend.networks.sandbox.server import asgi_app

    # deferred: backend.services.adapters costs ~196 ms of start-up, paid only by the commands that use it
    from backend.services.adapters import sandbox_config

    if not host_is_local(host):
        click.echo(
            f"Warning: {host} is not a loopback address; the emulator has no authentication of its own.",
            err=True,
        )
    settings = Settings(data_dir=data_dir, database_url=None) if data_dir is not None else Settings()
    try:
        config = sandbox_config(settings, served=True)  # as strict as the network (no in-process leniency)
    except ValueError as exc:  # SOCIALPUB_SANDBOX_APPS of the wrong shape
        raise click.ClickException(str(exc)) from exc
    if products or audited or verified or app_kind:  # the options win over SOCIALPUB_SANDBOX_APPS
        app = config.app(network)
        app = dataclasses.replace(
            app,
            products=frozenset(products) or app.products,
            audited=audited or app.audited,
            verified=verified or app.verified,
            kind=app_kind or app.kind,
        )
        config = dataclasses.replace(
            config, apps=tuple((n, a) for n, a in config.apps if n != network) + ((network, app),)
        )
    try:
        sandbox = Sandbox(config)
    except Exception as exc:  # an unusable data dir or database
        raise click.ClickException(f"cannot open the sandbox database ({config.location!r}): {exc}") from exc
    emulator = emulator_class(network)
    served = asgi_app(
        sandbox.handler(network, latency=False), emulator.served_hosts(), delay_s=sandbox.delay_for(network)
    )
    shown = f"[{host}]" if ":" in host else host
    origin = f"http://{shown}:{port}"
    endpoints = {}
    for name, path in emulator.SERVE_ENDPOINTS:  # the OAuth endpoints, at the real network's paths
        method, _sp, p = path.rpartition(" ")
        endpoints[name] = f"{(method + ' ') if method else ''}{origin}{p}"
    # the setting a user points at the emulator (the network's SOCIALPUB_<NETWORK>_BASE_URL)
    env = {f"SOCIALPUB_{network.upper()}_BASE_URL": origin + emulator.SERVE_BASE_PATH}
    env.update({name: origin for name in emulator.SERVE_SETTINGS})
    switches = {name: f"{origin}/_sandbox/{name}" for name in SWITCHES}
    dev_app = config.app(network)
    app_view = {
        "products": sorted(dev_app.products),
        "audited": dev_app.audited,
        "verified": dev_app.verified,
        "kind": dev_app.kind,
    }
    if as_json:
        click.echo(
            json.dumps(
                {
                    "network": network,
                    "baseUrl": origin,
                    "env": env,
                    "oauth": endpoints,
                    "switches": switches,
                    "app": app_view,
                }
            )
        )
    else:
        click.echo(
            f"socialpub sandbox: the {network} emulator at {origin} (state: {config.location}); "
            "Ctrl+C stops it."
        )
        click.echo(
            "Emulated app: "
            + (", ".join(sorted(dev_app.products)) or "a new app's self-serve products")
            + ("; audited" if dev_app.audited else "; not audited")
            + ("; verified" if dev_app.verified else "; not verified")
            + (f"; kind {dev_app.kind}" if dev_app.kind else "")
        )
        for name, url in endpoints.items():
            click.echo(f"  {name + ':':<10} {url}")
        click.echo("Switches (GET lists, POST sets; not a real network path; docs/sandbox.md):")
        for name, url in switches.items():
            click.echo(f"  {name + ':':<10} {url}  {SWITCHES[name]}")
        if emulator.SERVE_HINT:
            click.echo(emulator.SERVE_HINT.format(origin=origin, host=f"{shown}:{port}"))
        else:
            click.echo("Point socialpub at it:")
            for name, value in env.items():
                click.echo(f"{name}={value}")
    sys.stdout.flush()
    server = uvicorn.Server(
        uvicorn.Config(served, host=host, port=port, log_level="warning", lifespan="off", access_log=False)
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

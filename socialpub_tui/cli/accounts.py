"""`socialpub accounts`: connected accounts (their ids are the `channelId` of post targets)."""

from __future__ import annotations

import html
import sys
import webbrowser
from collections.abc import Callable
from typing import Any

import click

from socialpub_tui.cli._common import (
    Output,
    api_command,
    get_client,
    platform_choice,
    short_time,
    time_options,
)
from socialpub_tui.client.errors import ApiError
from socialpub_tui.look import inert

BEHAVIOURS = ["ok", "fail-permanent", "fail-retriable", "rate-limited", "slow", "flaky"]


@click.group("accounts")
def accounts_group() -> None:
    """Connected network accounts. An id here is the `channelId` in `posts create --to NETWORK:ID`.

    \b
    Examples:
      socialpub accounts list
      socialpub accounts add-sandbox linkedin --name "Acme Corp page" --behaviour fail-retriable
    """


@accounts_group.command("list")
@click.option("--platform", type=platform_choice(), default=None, help="Only this network.")
@time_options
@api_command
def accounts_list(platform: str | None, out: Output) -> None:
    """List connected accounts, each network's default marked.

    \b
    Example:
      socialpub accounts list --json | jq -r '.items[] | select(.platform=="linkedin") | .id'
    """
    listing = get_client(worker=False).list_accounts()
    if platform:
        listing.items = [a for a in listing.items if a.platform == platform]

    def human() -> None:
        out.table(
            [
                (
                    a.id,
                    a.platform,
                    a.name,
                    a.kind,
                    out.status(a.status),
                    "*" if a.is_default else "",
                    a.behaviour or "-",
                    short_time(a.connected_at),
                    token_cell(a, out),
                )
                for a in listing.items
            ],
            ["ID", "NETWORK", "NAME", "KIND", "STATUS", "DEFAULT", "BEHAVIOUR", "CONNECTED", "TOKEN"],
            empty="(no connected account: `socialpub accounts add-sandbox NETWORK --name NAME`)",
        )
        for a in listing.items:
            if a.token_warning:
                out.line(
                    out.style(
                        f"⚠ {a.id} ({a.platform}, {inert(a.name)}): {inert(a.token_warning)}",
                        fg="yellow",
                        bold=True,
                    )
                )
        for line in version_lines(get_client(worker=False), listing.items):
            out.line(out.style(line, fg="yellow" if line.startswith("⚠") else "red", bold=True))
        out.line(f"{listing.used} of {listing.limit} account slots used by the plan.")

    out.emit(listing, human)


def version_findings(client: Any, accounts: list[Any]) -> list[Any]:
    """The API version findings (`api_version_ending` 30 days before its sunset, `_sunset`, `_unknown`) of the
    networks of the live accounts given (`accounts list`'s accounts, `accounts check`'s results), from the
    doctor. A server without the doctor extension: none."""

    live = sorted({a.platform for a in accounts if a.kind == "live" and a.status != "disconnected"})
    if not live:
        return []
    try:
        report = client.accounts_doctor()
    except ApiError as err:
        if err.code in ("not_found", "method_not_allowed"):
            return []
        raise
    return [
        f
        for n in report.networks
        if n.platform in live
        for f in n.findings
        if f.code.startswith("api_version_")
    ]


def version_lines(client: Any, accounts: list[Any], findings: list[Any] | None = None) -> list[str]:
    """version_findings as lines, each with what to set: `⚠` a version ending, `✗` one ended or unknown."""
    found = version_findings(client, accounts) if findings is None else findings
    return [f"{MARKS[f.severity][0]} {inert(f.message)}: {inert(f.fix)}" for f in found]


def token_cell(account: Any, out: Output) -> str:
    """The TOKEN column: `⚠ reconnect` / `⚠ expires in 3 days` when the server warns (tokenWarning, its whole
    line is printed under the table), else when the token expires (`-`: never)."""
    if account.token_warning:
        head = "reconnect" if account.status == "needs_reauth" else account.token_warning.split(":")[0]
        return out.style(f"⚠ {inert(head.removeprefix('token '))}", fg="yellow", bold=True)
    return short_time(account.token_expires_at) if account.token_expires_at else "-"


@accounts_group.command("add-sandbox")
@click.argument("network", type=platform_choice(sandbox=True))
@click.option("--name", required=True, help="Display name of the account.")
@click.option(
    "--behaviour",
    type=click.Choice(BEHAVIOURS),
    default="ok",
    show_default=True,
    help="How the emulated network answers.",
)
@api_command
def accounts_add_sandbox(network: str, name: str, behaviour: str, out: Output) -> None:
    """Connect a sandbox account: an emulated network, for trying things out and tests.

    \b
    Example:
      socialpub accounts add-sandbox tiktok --name "Acme TikTok" --behaviour rate-limited --json | jq -r .id
    """
    acc = get_client(worker=False).add_sandbox_account(network, name, behaviour)
    out.emit(
        acc,
        f"Connected sandbox {acc.platform} account {acc.id} ({inert(acc.name)}, behaviour {acc.behaviour})"
        + (", the network's default." if acc.is_default else "."),
    )


@accounts_group.command("remove")
@click.argument("account_id")
@api_command
def accounts_remove(account_id: str, out: Output) -> None:
    """Disconnect an account (frees a plan slot; posts keep its name) and revoke its token at the network where it
    offers that, best effort: the account is disconnected even when the network is down.

    \b
    Example:
      socialpub accounts remove acc_01j9…
    """
    acc = get_client(worker=False).remove_account(account_id)
    revocation = acc.token_revocation
    said = f" Token at the network: {revocation.status} — {inert(revocation.message)}." if revocation else ""
    out.emit(acc, f"Disconnected {acc.platform} account {acc.id} ({inert(acc.name)}).{said}")


# ---- accounts doctor -------------------------------------------------------------------------------------------
MARKS = {"error": ("✗", "red"), "warning": ("⚠", "yellow")}


def finding_lines(out: Output, findings: list[Any], indent: str = "  ") -> list[str]:
    """A finding per two lines: `✗ code: message` (red for an error, yellow for a warning), then its fix."""
    lines = []
    for f in findings:
        mark, colour = MARKS[f.severity]
        lines.append(
            indent
            + out.style(f"{mark} {f.severity} {f.code}", fg=colour, bold=True)
            + f": {inert(f.message)}"
        )
        lines.append(f"{indent}  fix: {inert(f.fix)}")
    return lines


def _worst(findings: list[Any]) -> int:
    """0: an error among them, 1: warnings only, 2: nothing (the order of the report's groups)."""
    severities = {f.severity for f in findings}
    return 0 if "error" in severities else 1 if severities else 2


def print_doctor(out: Output, report: Any, label: Callable[[str], str]) -> None:
    """The doctor's report for people: the networks, then the accounts, those with an error first, each with its
    findings (errors first) and their fixes; the ones without a finding on one line each group."""
    networks = sorted(report.networks, key=lambda n: _worst(n.findings))
    fine = [n.platform for n in networks if not n.findings]
    out.line(out.style("Networks (their configured app)", bold=True))
    for n in networks:
        if n.findings:
            out.line(f"  {label(n.platform)} ({n.platform})")
            for text in finding_lines(out, n.findings, "    "):
                out.line(text)
    if fine:
        out.line("  " + out.style("✓ ok", fg="green") + ": " + ", ".join(fine))
    out.line(out.style("Accounts", bold=True))
    accounts = sorted(report.accounts, key=lambda a: _worst(a.findings))
    for a in accounts:
        head = f"  {a.id} ({a.platform}, {inert(a.name)})"
        if not a.findings:
            out.line(head + ": " + out.style("✓ ok", fg="green"))
            continue
        out.line(head)
        for text in finding_lines(out, a.findings, "    "):
            out.line(text)
    if not accounts:
        out.line("  (no connected account)")
    every = [f for entry in [*report.networks, *report.accounts] for f in entry.findings]
    errors = sum(1 for f in every if f.severity == "error")
    warnings = len(every) - errors
    summary = f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
    if errors:
        out.line(out.style(summary + ": fix the errors above before connecting or publishing.", fg="red"))
    else:
        out.line(out.style(summary + ": ready.", fg="green" if not warnings else "yellow"))


@accounts_group.command("doctor")
@click.argument("network", type=platform_choice(), required=False)
@api_command
def accounts_doctor(network: str | None, out: Output) -> None:
    """Check what stands between this installation and publishing, before any browser step: each network's
    configured app (OAuth credentials, the API version and its sunset, the scopes connect will ask and whether
    the app's products grant them, its review status) and each connected account (its token, the scopes it
    granted against what publishing and reconciliation need). Each problem says what to do. Exit 1 when there
    is an error (warnings alone: 0).

    \b
    Examples:
      socialpub accounts doctor
      socialpub accounts doctor linkedin --json | jq '.networks[0].findings'
    """
    client = get_client(worker=False)
    report = client.accounts_doctor(network)
    out.emit(report, lambda: print_doctor(out, report, client.networks().label))
    if not report.ok:
        raise SystemExit(1)


def _port_of(registered: str | None) -> int:
    """The port of the registered loopback redirect URI (0: none registered, a free one)."""
    from urllib.parse import urlsplit

    if not registered:
        return 0
    try:
        return urlsplit(registered).port or 0
    except ValueError:
        return 0


def _app_warnings(client: Any, out: Output, network: str, redirect_given: bool = False) -> str | None:
    """`accounts connect`'s first step: the doctor's checks of the network's app; its warnings are printed (with
    their fixes) and connecting goes on. Its errors stop the connection at the server's start, before any
    browser step (400 `oauth_not_configured`, or `app_not_ready` with each error and its fix in the details:
    printed, exit 1). A server without the doctor extension: nothing to print. With a redirect URI of the user's
    (`--redirect-uri`), the findings about the loopback redirect are left out. Returns the loopback redirect URI the
    network's app registers, when the server says one."""

    try:
        report = client.accounts_doctor(network)
    except ApiError as err:
        if err.code in ("not_found", "method_not_allowed"):
            return None
        raise
    warnings = [
        f
        for n in report.networks
        for f in n.findings
        if f.severity == "warning" and not (redirect_given and "redirect" in f.code)
    ]
    for text in finding_lines(out, warnings, ""):
        out.note(text)
    return next((n.redirect_uri for n in report.networks if n.platform == network), None)


# ---- live accounts: OAuth, tokens from elsewhere, health -------------------------------------------------------
class _Callback:
    """The loopback redirect listener: one GET on 127.0.0.1 carrying the network's `code` and the connection's
    `state` (`expect`). A callback with another state (a stray request, another tab, a page probing loopback) is
    answered 400 and the listener keeps waiting for the real redirect.

    The browser's page tells what became of the connection, not only that the network answered: the redirect's
    answer waits (OUTCOME_WAIT_S at most) for the command to `report` it — the accounts connected, or that
    connecting failed with the API's error code and message (e.g. 402 `channel_limit_exceeded` after the user
    consented)."""

    OUTCOME_WAIT_S = 120.0

    def __init__(self, port: int) -> None:
        import http.server
        import threading
        from urllib.parse import parse_qs, urlsplit

        self.params: dict[str, str] | None = None
        self.state: str | None = None  # the connection's, once the server gave it (expect)
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.outcome: tuple[str, str] | None = None  # (title, text) of the page, once reported
        self.reported = threading.Event()
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                parts = urlsplit(self.path)
                if parts.path != "/callback":
                    self.send_error(404)
                    return
                got = {k: v[0] for k, v in parse_qs(parts.query).items()}
                with listener.lock:
                    mine = (
                        listener.state is not None
                        and got.get("state") == listener.state
                        and listener.params is None
                    )
                    if mine:
                        listener.params = got
                if not mine:
                    self.send_error(400, "not the redirect of this connection")
                    return
                listener.done.set()
                listener.reported.wait(listener.OUTCOME_WAIT_S)
                page = listener.page().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(
                self, format: str, *args: object
            ) -> None:  # the query holds the code: never logged
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="oauth-callback", daemon=True)
        self.thread.start()

    def expect(self, state: str) -> None:
        self.state = state

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    def wait(self, timeout_s: float) -> dict[str, str] | None:
        self.done.wait(timeout_s)
        return self.params

    def report(self, title: str, text: str) -> None:
        """What the browser's page says (the first report counts)."""
        with self.lock:
            if self.outcome is None:
                self.outcome = (title, text)
        self.reported.set()

    def failed(self, text: str, code: str | None = None) -> None:
        self.report("socialpub: connecting failed", f"{code}: {text}" if code else text)

    def page(self) -> str:
        import html

        title, text = self.outcome or ("socialpub: still connecting", "The terminal has the outcome.")
        return (
            f"<!doctype html><title>{html.escape(title)}</title><h1>{html.escape(title)}</h1>"
            f"<p>{html.escape(text)}</p><p>Return to the terminal.</p>"
        )

    def close(self) -> None:
        self.report("socialpub: connecting stopped", "Nothing more was done here.")  # unless reported already
        self.server.shutdown()
        self.server.server_close()


def _pick(out: Output, candidates: list, pick: tuple[str, ...], take_all: bool) -> list[str]:  # type: ignore[type-arg]  # candidates: the API's connect candidates (dicts of several shapes)
    ids = [c.external_id for c in candidates]
    if take_all:
        return ids
    if pick:
        unknown = [p for p in pick if p not in ids]
        if unknown:
            raise click.UsageError(
                f"--pick {', '.join(unknown)}: not reached by this grant (one of {', '.join(ids)})"
            )
        return list(pick)
    if len(ids) == 1:
        return ids
    if out.json or not sys.stdin.isatty():
        raise click.UsageError(
            "the grant reaches several accounts: choose with --pick EXTERNAL_ID … or --all ("
            + ", ".join(inert(i) for i in ids)
            + ")"
        )
    for i, c in enumerate(candidates, 1):
        click.echo(
            f"  {i}. {inert(c.name)}"
            + (f" (@{inert(c.username)})" if c.username else "")
            + f"  [{inert(c.type)} {inert(c.external_id)}]",
            err=True,
        )
    while True:
        answer = (
            click.prompt("Connect which? numbers separated by commas, or 'all'", err=True).strip().lower()
        )
        if answer == "all":
            return ids
        try:
            chosen = [ids[int(x) - 1] for x in answer.replace(" ", ",").split(",") if x]
        except (ValueError, IndexError):
            click.echo(f"  numbers from 1 to {len(ids)}, or 'all'", err=True)
            continue
        if chosen and all(int(x) >= 1 for x in answer.replace(" ", ",").split(",") if x):
            return list(dict.fromkeys(chosen))


@accounts_group.command("connect")
@click.argument("network", type=platform_choice())
@click.option("--name", default=None, help="Display name of the account (when one is connected).")
@click.option("--no-browser", is_flag=True, help="Print the authorization URL instead of opening a browser.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Port of the loopback redirect listener on 127.0.0.1. The network's app must allow the redirect URI "
    "http://127.0.0.1:PORT/callback. Default: the port registered for the network (SOCIALPUB_<NETWORK>_REDIRECT_PORT "
    "on the server, as `accounts doctor` reports it), else a free one.",
)
@click.option(
    "--redirect-uri",
    default=None,
    metavar="URL",
    help="The redirect URI registered on the network's app, when it is not the loopback listener (a network "
    "that takes HTTPS ones only): no listener runs; after consent, paste the address the browser was sent to (or give it on "
    "stdin).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(1, 3600),
    default=300,
    show_default=True,
    help="Seconds to wait for the browser's redirect.",
)
@click.option(
    "--pick", multiple=True, metavar="EXTERNAL_ID", help="Connect this account of the grant (repeat)."
)
@click.option("--all", "take_all", is_flag=True, help="Connect every account the grant reaches.")
@click.option(
    "--access-token",
    default=None,
    envvar="SOCIALPUB_CONNECT_ACCESS_TOKEN",
    help="Connect with a token obtained elsewhere (no browser). '-' reads it from stdin (a second line: the "
    "refresh token), keeping tokens out of `ps` and shell history; also $SOCIALPUB_CONNECT_ACCESS_TOKEN.",
)
@click.option(
    "--refresh-token",
    default=None,
    envvar="SOCIALPUB_CONNECT_REFRESH_TOKEN",
    help="With --access-token: its refresh token (also $SOCIALPUB_CONNECT_REFRESH_TOKEN).",
)
@click.option(
    "--expires-in", type=click.IntRange(1), default=None, help="With --access-token: its life in seconds."
)
@click.option(
    "--external-id", default=None, help="With --access-token: the account, when the token reaches several."
)
@click.option(
    "--handle",
    default=None,
    help="Networks that take a login instead of OAuth: the account's handle (or DID). Its app password is read from "
    "$SOCIALPUB_CONNECT_PASSWORD, else from stdin when it is not a terminal, else asked for (never a flag).",
)
@click.option(
    "--pds",
    default=None,
    metavar="URL",
    help="With --handle: the server that resolves the handle (the account's PDS), when not the network's default.",
)
@click.option(
    "--instance",
    default=None,
    metavar="HOST",
    help="Networks made of many servers: the server the account is on (e.g. social.example). socialpub registers "
    "its app there on first use and keeps it for the next connections.",
)
@api_command
def accounts_connect(
    network: str,
    name: str | None,
    no_browser: bool,
    port: int | None,
    redirect_uri: str | None,
    timeout_s: float,
    pick: tuple[str, ...],
    take_all: bool,
    access_token: str | None,
    refresh_token: str | None,
    expires_in: int | None,
    external_id: str | None,
    handle: str | None,
    pds: str | None,
    instance: str | None,
    out: Output,
) -> None:
    """Connect live accounts of NETWORK: OAuth in the browser, or a token obtained elsewhere.

    The network's app credentials come from the backend's configuration (SOCIALPUB_<NETWORK>_CLIENT_ID and
    _CLIENT_SECRET). A redirect listener on 127.0.0.1 receives the browser after consent; the pages, channels or
    organisations the grant reaches are listed to pick from (--pick / --all in scripts; a single one is taken).

    \b
    Examples:
      socialpub accounts connect facebook
      socialpub accounts connect linkedin --no-browser --all --json
      socialpub accounts connect threads --redirect-uri https://example.com/socialpub/callback
      socialpub accounts connect tiktok --access-token act.… --refresh-token rft.… --expires-in 86400
      printf '%s\\n%s\\n' "$ACCESS" "$REFRESH" | socialpub accounts connect tiktok --access-token - --expires-in 86400
      socialpub accounts connect NETWORK --handle alice.example.com      (a network with logins: asks for the app password)
      SOCIALPUB_CONNECT_PASSWORD=xxxx-xxxx-xxxx-xxxx socialpub accounts connect NETWORK --handle alice.example.com
      socialpub accounts connect NETWORK --instance social.example      (a network of many servers: its app is registered there once)
    """
    client = get_client(worker=False)
    if pds and not handle:
        raise click.UsageError("--pds goes with --handle")
    if handle:
        if access_token:
            raise click.UsageError("--handle or --access-token, not both")
        password = _password()
        acc = client.connect_account_login(network, handle, password, service=pds, name=name)
        out.emit(acc, f"Connected live {acc.platform} account {acc.id} ({inert(acc.name)}).")
        return
    if access_token == "-":
        given = click.get_text_stream("stdin").read().split()
        if not given:
            raise click.UsageError("--access-token -: no token on stdin")
        access_token = given[0]
        refresh_token = refresh_token or (given[1] if len(given) > 1 else None)
    if access_token:
        acc = client.connect_account_token(
            network,
            access_token,
            refresh_token=refresh_token,
            expires_in=expires_in,
            external_id=external_id,
            name=name,
        )
        out.emit(acc, f"Connected live {acc.platform} account {acc.id} ({inert(acc.name)}).")
        return
    if refresh_token or expires_in or external_id:
        raise click.UsageError("--refresh-token, --expires-in and --external-id go with --access-token")
    if pick and take_all:
        raise click.UsageError("--pick or --all, not both")
    if redirect_uri is not None:
        _app_warnings(client, out, network, redirect_given=True)
        connected = _connect_pasted(
            client, out, network, redirect_uri, name, no_browser, pick, take_all, instance
        )
    else:
        registered = _app_warnings(client, out, network)
        connected = _connect_listening(
            client,
            out,
            network,
            _port_of(registered) if port is None else port,
            name,
            no_browser,
            timeout_s,
            pick,
            take_all,
            instance,
        )

    def human() -> None:
        for acc in connected.items:
            out.line(
                f"Connected live {acc.platform} account {acc.id} ({inert(acc.name)})"
                + (", the network's default." if acc.is_default else ".")
            )

    out.emit(connected, human)


def _open(out: Output, network: str, url: str, no_browser: bool, waiting: str) -> None:
    if no_browser or not webbrowser.open(url):
        out.note("Open this URL in a browser to authorise socialpub:")
        out.note(inert(url))
    else:
        out.note(f"Opened the browser for {network}'s consent; {waiting}")


def _connect_listening(
    client: Any,
    out: Output,
    network: str,
    port: int,
    name: str | None,
    no_browser: bool,
    timeout_s: float,
    pick: tuple[str, ...],
    take_all: bool,
    instance: str | None = None,
) -> Any:
    """The browser comes back to the loopback listener."""
    try:
        listener = _Callback(port)
    except OSError as exc:
        raise click.UsageError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})") from None
    try:
        started = client.start_oauth(network, listener.redirect_uri, name, instance)
        listener.expect(started.state)
        _open(out, network, started.authorize_url, no_browser, "waiting for its redirect (Ctrl+C to stop)…")
        try:
            params = listener.wait(timeout_s)
        except KeyboardInterrupt:
            raise click.ClickException("interrupted: nothing was connected") from None
        if params is None:
            raise click.ClickException(
                f"no redirect from {network} within {timeout_s:g} s: nothing was connected"
            )
        return _connect(client, out, listener, network, started.state, params, pick, take_all)
    finally:
        listener.close()


def _connect_pasted(
    client: Any,
    out: Output,
    network: str,
    redirect_uri: str,
    name: str | None,
    no_browser: bool,
    pick: tuple[str, ...],
    take_all: bool,
    instance: str | None = None,
) -> Any:
    """The browser goes to a redirect URI the user registered (no listener here): the user pastes the address it
    landed on — its query holds the code and the state, which must be this connection's."""
    from urllib.parse import parse_qsl, urlsplit

    started = client.start_oauth(network, redirect_uri, name, instance)
    _open(out, network, started.authorize_url, no_browser, "after consent, paste the address it lands on.")
    stdin = click.get_text_stream("stdin")
    if stdin.isatty():
        pasted = str(click.prompt("The address your browser was sent to", err=True))
    else:
        pasted = stdin.readline()
    try:
        params = dict(parse_qsl(urlsplit(pasted.strip()).query))
    except ValueError:
        params = {}
    if not params:
        raise click.UsageError(
            "no address with the network's answer (…?code=…&state=…): nothing was connected"
        )
    if params.get("state") != started.state:
        raise click.UsageError(
            "that address is not the answer to this connection (its state differs): nothing was connected"
        )
    return _connect(client, out, _Pasted(), network, started.state, params, pick, take_all)


class _Pasted:
    """The browser's page when the user pasted the address: a page this command does not serve, so nothing is
    reported there (the terminal says what happened)."""

    def report(self, title: str, text: str) -> None:
        return None

    def failed(self, text: str, code: str | None = None) -> None:
        return None


def _password() -> str:
    """The app password: $SOCIALPUB_CONNECT_PASSWORD, else stdin's first line when stdin is not a terminal, else a
    hidden prompt. Never an option: a flag's value lands in the shell's history and in `ps`."""
    import os

    given = os.environ.get("SOCIALPUB_CONNECT_PASSWORD")
    if given:
        return given.strip()
    stdin = click.get_text_stream("stdin")
    if not stdin.isatty():
        line = stdin.readline().strip()
        if not line:
            raise click.UsageError("no app password on stdin")
        return line
    return str(click.prompt("App password", hide_input=True)).strip()


def _connect(
    client: Any,
    out: Output,
    listener: _Callback | _Pasted,
    network: str,
    state: str,
    params: dict[str, str],
    pick: tuple[str, ...],
    take_all: bool,
) -> Any:
    """After the redirect: exchange the code, choose, connect; the browser's page then says what happened (an API
    error's code and message when connecting failed)."""

    try:
        if "error" in params or "code" not in params:
            # the network's words (LinkedIn HTML-escapes its quotes) and its error code
            reason = html.unescape(params.get("error_description") or "") or "no code"
            code = f" ({params['error']})" if params.get("error") else ""
            raise click.ClickException(f"{network} did not authorise socialpub{code}: {inert(reason)}")
        finished = client.finish_oauth(state, params["code"])
        if not finished.candidates:
            raise click.ClickException(
                f"the grant reaches no {network} account that can publish (a page or a professional account "
                "the user manages, …): nothing was connected"
            )
        if not (pick or take_all) and len(finished.candidates) > 1 and not out.json and sys.stdin.isatty():
            listener.report(
                f"socialpub: {network} authorised socialpub",
                "Choose the accounts to connect in the terminal; it says what was connected.",
            )
        chosen = _pick(out, finished.candidates, pick, take_all)
        connected = client.connect_oauth_accounts(finished.grant_id, chosen)
    except ApiError as err:
        listener.failed(err.message, err.code)
        raise
    except click.ClickException as exc:
        listener.failed(exc.format_message())
        raise
    names = ", ".join(f"{acc.name} ({acc.id})" for acc in connected.items)
    listener.report(f"socialpub: {network} connected", f"Connected: {names}. You can close this tab.")
    return connected


def _in(seconds: int | None) -> str:
    if seconds is None:
        return "-"
    s = abs(seconds)
    text = f"{s // 86400} d" if s >= 86400 else f"{s // 3600} h" if s >= 3600 else f"{s // 60} min"
    return f"in {text}" if seconds >= 0 else f"{text} ago"


@accounts_group.command("check")
@click.argument("account_id", required=False)
@api_command
def accounts_check(account_id: str | None, out: Output) -> None:
    """Try each account's token on its network (the cheapest authenticated call): ok, expiring (in how long),
    needs_reauth (reconnect it) or the network's error. Exit 1 when one is not ok or expiring.

    \b
    Examples:
      socialpub accounts check
      socialpub accounts check acc_01j9… --json
    """
    client = get_client(worker=False)
    ids = (
        [account_id]
        if account_id
        else [a.id for a in client.list_accounts().items if a.status != "disconnected"]
    )
    results = [client.check_account(i) for i in ids]
    versions = version_findings(client, results)  # as `accounts list` and the TUI's accounts screen say them

    def human() -> None:
        out.table(
            [
                (
                    r.account_id,
                    r.platform,
                    r.name,
                    r.kind,
                    out.status(r.status),
                    _in(r.expires_in_s) if r.token_expires_at else "-",
                    r.message or "",
                )
                for r in results
            ],
            ["ID", "NETWORK", "NAME", "KIND", "HEALTH", "EXPIRES", "DETAIL"],
            empty="(no connected account)",
        )
        for line in version_lines(client, results, versions):
            out.line(out.style(line, fg="yellow" if line.startswith("⚠") else "red", bold=True))

    out.emit({"items": results} if not account_id else results[0], human)
    # a version ended or unknown is a configuration error (every call refused), as a dead token is
    if any(r.status in ("needs_reauth", "error") for r in results) or any(
        f.severity == "error" for f in versions
    ):
        raise SystemExit(1)

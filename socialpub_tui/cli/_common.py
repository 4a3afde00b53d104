"""What every client-backed command shares: `--json`, the client for the chosen profile, output (tables on a
terminal, one JSON document in a pipe), and errors mapped to exit codes (1 API/network, 2 usage)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

import socialpub_tui.client
from socialpub_tui import times as _time
from socialpub_tui.client.config import load_config
from socialpub_tui.client.errors import ApiError, ConfigError
from socialpub_tui.look import STATUS_COLOURS, inert, json_text

if TYPE_CHECKING:
    from socialpub_tui.client.sync import Client

F = TypeVar("F", bound=Callable[..., Any])


class NetworkType(click.ParamType):
    """A network's name, one of the server's (GET /v1/networks, read through the command's client when a value is
    checked or completed — never to print a help page): a plugin network of the server is a choice like the
    built-ins. `sandbox`: only the networks a sandbox account can be connected on. A backend that cannot be reached
    leaves the value to the command, which then says why."""

    name = "network"

    def __init__(self, *, sandbox: bool = False) -> None:
        self.sandbox = sandbox

    def _names(self) -> tuple[str, ...] | None:
        from socialpub_tui.client.errors import (  # deferred: the client, when a value is given
            ApiError,
            ConfigError,
        )

        try:
            networks = get_client(worker=False).networks()
        except (ApiError, ConfigError, OSError):
            return None
        return networks.sandbox_names() if self.sandbox else networks.names()

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "NETWORK"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        name = str(value).strip().lower()
        names = self._names()
        if names is not None and name not in names:
            self.fail(f"{value!r} is not one of {', '.join(names)} (the server's networks)", param, ctx)
        return name

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(n) for n in self._names() or () if n.startswith(incomplete)]


def platform_choice(*, sandbox: bool = False) -> NetworkType:
    """The server's networks (GET /v1/networks), as a click type."""
    return NetworkType(sandbox=sandbox)


def to_jsonable(value: Any) -> Any:
    """Wire-format JSON (camelCase) for models, lists of models, and plain data."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    return value


class Output:
    """Where a command writes. With `--json` stdout gets exactly one JSON document; everything else
    (progress, notes) goes to stderr, and only on a terminal."""

    def __init__(self, as_json: bool) -> None:
        self.json = as_json
        self.tty = sys.stdout.isatty()
        self.colour = self.tty and not os.environ.get("NO_COLOR") and not as_json
        self.err_tty = sys.stderr.isatty()

    # ---- results ---------------------------------------------------------------------------------------
    def emit(self, data: Any, human: Callable[[], None] | str | None = None) -> None:
        """The command's result: JSON with --json, else `human` (a callable printing, or a line)."""
        if self.json:
            click.echo(json_text(to_jsonable(data)))
        elif callable(human):
            human()
        elif human is not None:
            click.echo(human)

    def line(self, text: str = "") -> None:
        """Human output (suppressed with --json, where stdout carries the one JSON document)."""
        if not self.json:
            click.echo(text)

    def note(self, text: str) -> None:
        """A side remark: stderr, never breaks a pipe."""
        click.echo(text, err=True)

    def style(self, text: str, **styles: Any) -> str:
        """`text` in a style of ours (on a colour terminal): a table cell takes it as it is (`Styled`), where any
        other value is shown inert. Give it text that is ours, or inert() first."""
        return Styled(click.style(text, **styles)) if self.colour else Styled(text)

    def status(self, value: str | None) -> str:
        value = inert(value or "-")
        colour = STATUS_COLOURS.get(value)
        return self.style(value, fg=colour) if colour else Styled(value)

    def table(self, rows: Sequence[Sequence[Any]], headers: Sequence[str], empty: str = "(none)") -> None:
        if not rows:
            self.line(empty)
            return
        cells = [[_cell(v) for v in row] for row in rows]
        widths = [max(len(h), *(len(click.unstyle(r[i])) for r in cells)) for i, h in enumerate(headers)]
        self.line(
            "  ".join(
                self.style(h.ljust(w), bold=True) for h, w in zip(headers, widths, strict=True)
            ).rstrip()
        )
        for row in cells:
            self.line(
                "  ".join(
                    c + " " * (w - len(click.unstyle(c))) for c, w in zip(row, widths, strict=True)
                ).rstrip()
            )

    def fields(self, pairs: Iterable[tuple[str, Any]]) -> None:
        pairs = list(pairs)
        width = max((len(k) for k, _ in pairs), default=0)
        for key, value in pairs:
            self.line(f"{self.style(key.ljust(width), bold=True)}  {_cell(value, 200)}")

    # ---- errors ------------------------------------------------------------------------------------------
    def fail(self, err: Exception, exit_code: int = 1) -> None:
        # An error may echo what was sent (a channelId, a URL, a name): shown inert, as every user text.
        if isinstance(err, ApiError):
            body = err.body()
            if self.json:
                click.echo(json_text(body), err=True)
            else:
                click.echo(f"Error: {inert(err)}", err=True)
                for d in err.details:
                    click.echo("  - " + ", ".join(f"{inert(k)}: {inert(v)}" for k, v in d.items()), err=True)
        else:
            if self.json:
                click.echo(
                    json_text({"error": "error", "message": str(err), "details": [], "status": 0}), err=True
                )
            else:
                click.echo(f"Error: {inert(err)}", err=True)
        raise SystemExit(exit_code)


class Styled(str):
    """Text styled by us (Output.style, Output.status): a table cell shows it as it is."""


def _cell(value: Any, limit: int = 60) -> str:
    """A table cell or a field's value: user and network text shown inert (a line break as ⏎), ours as styled."""
    if value is None:
        return "-"
    if isinstance(value, Styled):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        value = ", ".join(str(v) for v in value)
    text = inert(str(value).replace("\n", " ⏎ "))
    if text.startswith(("http://", "https://")):
        return text  # links are copied from tables: never cut
    return clip(text, limit)


def clip(text: str, width: int) -> str:
    """User or network `text` shown inert, in at most `width` characters, a cut one ending with `…` (so a reader
    knows there is more). Cut after inert(): a cut never splits a control character out of its escape."""
    shown = inert(text)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


# ---- times: shown in the user's zone, named -------------------------------------------------------------

_UTC_KEY, _TZ_KEY, _ZONE_KEY = "socialpub.utc", "socialpub.tz", "socialpub.zone"


def _remember_utc(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        if ctx.meta.get(_TZ_KEY):
            raise click.UsageError("give --utc or --tz ZONE, not both", ctx=ctx)
        ctx.meta[_UTC_KEY] = True
    return value


def _remember_tz(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None

    if not value.strip():
        raise click.BadParameter(
            "give a zone's IANA name, such as Europe/Paris (or leave --tz out)", ctx=ctx, param=param
        )
    try:
        _time.zone(value)
    except _time.TimeError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    if ctx.meta.get(_UTC_KEY):
        raise click.UsageError("give --utc or --tz ZONE, not both", ctx=ctx)
    ctx.meta[_TZ_KEY] = value
    return value


def tz_option(
    help: str = "Show times in this time zone (IANA name, e.g. Europe/Paris; default: the "
    "profile's `timezone`, else the system's).",
    expose: bool = False,
) -> Callable[[F], F]:
    """`--tz ZONE`: the zone times are shown in (and, for commands that read times, read in).
    A bad zone is a usage error (exit 2). With `expose`, the command also receives it as `tz`."""
    return click.option(
        "--tz", "tz", default=None, metavar="ZONE", help=help, callback=_remember_tz, expose_value=expose
    )


def utc_option(help: str = "Show times in UTC.") -> Callable[[F], F]:
    """`--utc`: times shown (and, for commands that read times, read) in UTC."""
    return click.option(
        "--utc", is_flag=True, default=False, expose_value=False, callback=_remember_utc, help=help
    )


def time_options(fn: F) -> F:
    """--utc and --tz ZONE, for a command that prints times."""
    return utc_option()(tz_option()(fn))


def _configured_zone(ctx: click.Context) -> str | None:
    """`timezone:` of the chosen profile in config.yaml, else the file's top-level `timezone:`."""

    try:
        data = load_config()
    except ConfigError:
        return None  # the command itself reports an unreadable config
    name = profile_name(ctx) or os.environ.get("SOCIALPUB_PROFILE") or data.get("default")
    profile = (data.get("profiles") or {}).get(name) if name else None
    value = (profile.get("timezone") if isinstance(profile, dict) else None) or data.get("timezone")
    return str(value) if value else None


def display_zone(ctx: click.Context | None = None) -> Any:
    """The user's zone for this invocation (a `_time.DisplayZone`): --utc, --tz, the profile's or config's
    `timezone`, else the system's local zone."""

    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None:
        return _time.DisplayZone(None)
    cached = ctx.meta.get(_ZONE_KEY)
    if cached is not None:
        return cached
    if ctx.meta.get(_UTC_KEY):
        name: str | None = "UTC"
    else:
        name = ctx.meta.get(_TZ_KEY) or _configured_zone(ctx)
    try:
        found = _time.DisplayZone(name)
    except _time.TimeError as exc:
        raise ConfigError(f"config.yaml `timezone`: {exc}", code="invalid_timezone") from None
    ctx.meta[_ZONE_KEY] = found
    return found


def reading_zone(tz: str | None = None) -> str | None:
    """The zone a wall time without offset (`--at 09:00`) is read in: --tz, --utc, the configured zone, else
    None (the system's local zone)."""
    return tz or display_zone().name


def short_time(ts: str | None) -> str:
    """An API timestamp as `YYYY-MM-DD HH:MM ZONE` in the user's zone (tables); the exact value is in --json."""
    return str(display_zone().format(ts))


# ---- the client for this invocation ---------------------------------------------------------------------


def profile_name(ctx: click.Context | None = None) -> str | None:
    ctx = ctx or click.get_current_context()
    value = ctx.find_root().params.get("profile")
    return str(value) if value else None


_CLIENT_KEY = "socialpub.client"


def get_client(*, worker: bool = True) -> Client:
    """The client for the chosen profile, one per invocation (the parameter types that read the server's networks
    share the command's), closed when the command ends (stops an embedded worker). `worker`: an embedded backend's
    worker runs (started now if the client was made without it)."""

    ctx = click.get_current_context()
    root = ctx.find_root()
    client: Client | None = root.meta.get(_CLIENT_KEY)
    if client is None:
        client = socialpub_tui.client.connect(profile_name(ctx), worker=worker)
        root.meta[_CLIENT_KEY] = client
        root.call_on_close(client.close)
    elif worker:
        client.ready()
    return client


def api_command(fn: F) -> F:
    """Add `--json` and turn client errors into an error message (JSON on stderr with --json) and exit 1.
    The wrapped function receives `out: Output`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, as_json: bool = False, **kwargs: Any) -> Any:
        out = Output(as_json)
        try:
            return fn(*args, out=out, **kwargs)
        except ApiError as err:
            out.fail(err, 2 if err.code in ("unknown_profile", "invalid_timezone") else 1)
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except BrokenPipeError:
            raise  # the reader went away (`| head`): click ends quietly (exit 1, nothing on stderr)
        except OSError as err:
            out.fail(err, 1)

    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print one JSON document on stdout (errors as JSON on stderr).",
    )(wrapper)  # type: ignore[return-value]  # click's decorators return a Command; the CLI registers it as the function it wraps

"""`socialpub webhooks` and `socialpub events` (issue 16; the reference is docs/webhooks.md): register endpoints,
rotate their secrets, read the delivery log, send a test, redeliver an event — and `webhooks listen`, a local
receiver on 127.0.0.1 that verifies what arrives (Standard Webhooks) and prints it, like `stripe listen`.

`add` and `rotate` keep the endpoint's `whsec_` secret in `webhook-secrets.json` (next to `sessions.json`, mode
0600, by profile then endpoint id) so that `listen` can verify without being told; `remove` forgets it. A secret is
printed once, by the command that created it, and nowhere else.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click

import socialpub_tui.client
from socialpub_tui.cli._common import (
    Output,
    api_command,
    display_zone,
    get_client,
    profile_name,
    short_time,
    time_options,
)
from socialpub_tui.client.config import (
    forget_webhook_secret,
    load_webhook_secrets,
    resolve_profile,
    save_webhook_secret,
)
from socialpub_tui.client.errors import ApiError, ConfigError
from socialpub_tui.look import inert, json_text

if TYPE_CHECKING:
    from backend.schemas.webhooks import DeliveryOut, WebhookOut, WebhookWithSecret
    from socialpub_tui.client.config import Profile

DELIVERY_STATUSES = ["pending", "succeeded", "failed"]
LISTEN_PORT = 8765  # `webhooks listen`'s default port (docs/webhooks.md)
LISTEN_HOST = "127.0.0.1"
MAX_BODY = 5 * 1024 * 1024  # a socialpub event is a few kB: anything near this is not one
FORWARD_TIMEOUT_S = 10.0  # under the sender's 15 s, so a slow local app is reported rather than retried
EVENT_TYPE_HEADER = (
    "socialpub-event-type"  # = backend.schemas.webhooks.EVENT_TYPE_HEADER (not imported: cheap start)
)


@click.group("webhooks")
def webhooks_group() -> None:
    """Webhook endpoints: signed deliveries of publish, tiktok and generation events (docs/webhooks.md).

    \b
    Examples:
      socialpub webhooks listen                                  # a local receiver on 127.0.0.1:8765
      socialpub webhooks add http://127.0.0.1:8765/ --events publish.completed,publish.failed
      socialpub webhooks test we_01j9…
      socialpub webhooks deliveries we_01j9… --status failed
      socialpub webhooks enable we_01j9…                         # after a 410 Gone answer disabled it
    """


@click.group("events")
def events_group() -> None:
    """Events sent to webhook endpoints: show one, deliver it again.

    \b
    Examples:
      socialpub events show evt_01j9…
      socialpub events redeliver evt_01j9… --endpoint we_01j9…
    """


# ---- the local secret store -----------------------------------------------------------------------------


def _profile() -> Profile:
    return resolve_profile(profile_name())


def _keep_secret(out: Output, endpoint: WebhookWithSecret) -> str | None:
    """Store the endpoint's secret for `listen`; the file's path, or None (said on stderr) when it cannot be."""

    try:
        return str(save_webhook_secret(_profile(), endpoint.id, str(endpoint.url), endpoint.secret))
    except (OSError, ConfigError) as exc:
        out.note(f"Warning: the secret could not be stored for `webhooks listen` ({exc}); keep it yourself.")
        return None


def _forget_secret(endpoint_id: str) -> None:
    try:
        forget_webhook_secret(_profile(), endpoint_id)
    except (OSError, ConfigError):
        pass


def _events_option(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [t.strip() for t in value.split(",") if t.strip()]


def _state(out: Output, w: WebhookOut) -> str:
    if not w.enabled:
        return out.style("disabled", fg="bright_black") + (
            f" ({w.disabled_reason})" if w.disabled_reason else ""
        )
    if w.failing:
        return out.style("failing", fg="red")
    return out.style("enabled", fg="green")


def _show_secret(out: Output, w: WebhookWithSecret, stored: str | None, verb: str) -> None:
    out.line(f"{verb} webhook {w.id} → {inert(w.url)}")
    out.line(f"  events   {inert(', '.join(w.events)) if w.events else 'every type'}")
    if w.description:
        out.line(f"  about    {inert(w.description)}")
    out.line(f"  secret   {w.secret}")
    out.line("           shown once: store it now (your receiver verifies signatures with it)")
    if stored:
        out.line(f"           also kept in {stored} for `socialpub webhooks listen`")


# ---- endpoints ----------------------------------------------------------------------------------------


@webhooks_group.command("add")
@click.argument("url")
@click.option(
    "--events",
    "events",
    metavar="TYPE,…",
    default=None,
    help="Only these event types, comma-separated (default: every type), e.g. "
    "publish.completed,publish.failed,generation.completed.",
)
@click.option("--description", default=None, help="A note for people (at most 500 characters).")
@api_command
def webhooks_add(url: str, events: str | None, description: str | None, out: Output) -> None:
    """Register an endpoint. Its `whsec_` signing secret is printed once, here (`secret` with --json).

    The secret is also kept locally (webhook-secrets.json, mode 0600) so that `socialpub webhooks listen` verifies
    deliveries to it. A loopback or private URL needs a server started with SOCIALPUB_ALLOW_PRIVATE_URLS=1.

    \b
    Examples:
      socialpub webhooks add https://example.com/hooks --events publish.completed,publish.failed
      SECRET=$(socialpub webhooks add https://example.com/hooks --json | jq -r .secret)
    """
    created = get_client(worker=False).create_webhook(
        url, events=_events_option(events), description=description
    )
    stored = _keep_secret(out, created)
    out.emit(created, lambda: _show_secret(out, created, stored, "Created"))


@webhooks_group.command("list")
@time_options
@api_command
def webhooks_list(out: Output) -> None:
    """The workspace's endpoints, newest first (never their secrets). --json: a list of endpoints.

    \b
    Example:
      socialpub webhooks list --json | jq -r '.[] | select(.failing) | .url'
    """
    items = get_client(worker=False).list_webhooks().items
    out.emit(
        items,
        lambda: out.table(
            [
                (
                    w.id,
                    w.url,
                    ", ".join(w.events) or "every type",
                    _state(out, w),
                    short_time(w.last_delivery_at),
                    w.last_status_code,
                    w.description,
                )
                for w in items
            ],
            ["ID", "URL", "EVENTS", "STATE", "LAST DELIVERY", "CODE", "DESCRIPTION"],
            empty="(no webhook endpoint)",
        ),
    )


@webhooks_group.command("remove")
@click.argument("endpoint_id", metavar="ID")
@api_command
def webhooks_remove(endpoint_id: str, out: Output) -> None:
    """Delete an endpoint (its pending deliveries are dropped) and forget its stored secret.

    \b
    Example:
      socialpub webhooks remove we_01j9…
    """

    try:
        res = get_client(worker=False).delete_webhook(endpoint_id)
    except ApiError as err:
        if err.code == "webhook_not_found":
            _forget_secret(endpoint_id)
        raise
    _forget_secret(endpoint_id)
    out.emit(res, f"Removed {res.id}: it gets no more deliveries.")


@webhooks_group.command("enable")
@click.argument("endpoint_id", metavar="ID")
@api_command
def webhooks_enable(endpoint_id: str, out: Output) -> None:
    """Re-enable an endpoint disabled by a 410 Gone answer or by `webhooks disable` (its failing flag cleared).

    Events it missed meanwhile are not sent by themselves: redeliver them with `socialpub events redeliver`.

    \b
    Examples:
      socialpub webhooks enable we_01j9…
      socialpub events redeliver evt_01j9… --endpoint we_01j9…
    """
    w = get_client(worker=False).update_webhook(endpoint_id, {"enabled": True})
    out.emit(
        w,
        f"Enabled {w.id} → {w.url}: it gets new deliveries again (missed events: "
        f"socialpub events redeliver EVENT_ID --endpoint {w.id}).",
    )


@webhooks_group.command("disable")
@click.argument("endpoint_id", metavar="ID")
@api_command
def webhooks_disable(endpoint_id: str, out: Output) -> None:
    """Stop deliveries to an endpoint without removing it (its secret and delivery log stay).

    \b
    Example:
      socialpub webhooks disable we_01j9…
    """
    w = get_client(worker=False).update_webhook(endpoint_id, {"enabled": False})
    out.emit(
        w,
        f"Disabled {w.id} → {w.url}: it gets no new deliveries (socialpub webhooks enable {w.id} "
        "turns them back on).",
    )


@webhooks_group.command("rotate")
@click.argument("endpoint_id", metavar="ID")
@api_command
def webhooks_rotate(endpoint_id: str, out: Output) -> None:
    """A new signing secret, printed once. The old one keeps signing beside it for 24 hours.

    \b
    Example:
      socialpub webhooks rotate we_01j9… --json | jq -r .secret
    """
    rotated = get_client(worker=False).rotate_webhook(endpoint_id)
    stored = _keep_secret(out, rotated)

    def human() -> None:
        _show_secret(out, rotated, stored, "Rotated the secret of")
        out.line("           the previous secret keeps signing beside it for 24 h: update your receiver")

    out.emit(rotated, human)


@webhooks_group.command("test")
@click.argument("endpoint_id", metavar="ID")
@click.option(
    "--wait", is_flag=True, help="Wait for the first attempt and print its outcome (exit 1 if it failed)."
)
@click.option(
    "--timeout", type=float, default=30.0, show_default=True, help="With --wait: give up after this long."
)
@api_command
def webhooks_test(endpoint_id: str, wait: bool, timeout: float, out: Output) -> None:
    """Send a `webhook.test` event to this endpoint only.

    \b
    Examples:
      socialpub webhooks test we_01j9… --wait
      socialpub webhooks deliveries we_01j9… --limit 1
    """
    client = get_client()
    queued = client.test_webhook(endpoint_id)
    if not wait:
        out.emit(
            queued,
            f"Queued webhook.test {queued.event_id} to {endpoint_id} (delivery {queued.delivery_id}).\n"
            f"See it: socialpub webhooks deliveries {endpoint_id} --limit 1",
        )
        return
    delivery = _first_attempt(client, endpoint_id, queued.delivery_id, timeout)
    if delivery is None:
        raise click.ClickException(
            f"no attempt of {queued.delivery_id} within {timeout:g} s: is a worker running "
            "(socialpub serve, socialpub worker)?"
        )
    out.emit(delivery, lambda: _show_attempt(out, delivery))
    if delivery.status == "failed" or (delivery.last_status_code or 0) // 100 != 2:
        raise SystemExit(1)


def _first_attempt(client: Any, endpoint_id: str, delivery_id: str, timeout: float) -> DeliveryOut | None:
    deadline = time.monotonic() + timeout
    while True:
        found = next(
            (d for d in client.iter_deliveries(endpoint_id, max_items=100, limit=20) if d.id == delivery_id),
            None,
        )
        if found is not None and (found.attempts or found.status != "pending"):
            return found  # type: ignore[no-any-return]  # the client's deliveries iterator is typed by the endpoint declaration's Any
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.3)


def _show_attempt(out: Output, d: DeliveryOut) -> None:
    if d.refused_by:
        out.line(f"{d.event_type} {d.event_id} → {d.endpoint_id}: {out.status(d.status)}")
        out.note(refused_note([d], d.endpoint_id))
        return
    outcome = f"HTTP {d.last_status_code}" if d.last_status_code else inert(d.last_error or "no answer")
    line = f"{d.event_type} {d.event_id} → {d.endpoint_id}: {out.status(d.status)} ({outcome}"
    if d.last_error and d.last_status_code:
        line += f", {inert(d.last_error)}"
    line += ")"
    if d.status == "pending" and d.next_attempt_at:
        line += f"; next attempt {short_time(d.next_attempt_at)}"
    out.line(line)


@webhooks_group.command("deliveries")
@click.argument("endpoint_id", metavar="ID")
@click.option(
    "--status", type=click.Choice(DELIVERY_STATUSES), default=None, help="Only deliveries in this state."
)
@click.option(
    "--limit",
    type=click.IntRange(1, 10000),
    default=20,
    show_default=True,
    help="At most this many (pages are followed).",
)
@time_options
@api_command
def webhooks_deliveries(endpoint_id: str, status: str | None, limit: int, out: Output) -> None:
    """An endpoint's delivery log, newest first. --json: the deliveries, each with its attemptLog.

    \b
    Examples:
      socialpub webhooks deliveries we_01j9… --status failed
      socialpub webhooks deliveries we_01j9… --json | jq -r '.[] | select(.status=="failed") | .eventId'
    """
    client = get_client(worker=False)
    items = list(client.iter_deliveries(endpoint_id, max_items=limit, status=status, limit=min(limit, 100)))

    def human() -> None:
        out.table(
            [
                (
                    short_time(d.created_at),
                    d.event_type,
                    d.event_id,
                    out.status(d.status),
                    d.attempts,
                    d.last_status_code,
                    f"refused by the {d.refused_by} setting" if d.refused_by else d.last_error,
                )
                for d in items
            ],
            ["TIME", "EVENT TYPE", "EVENT ID", "STATUS", "ATTEMPTS", "LAST CODE", "LAST ERROR"],
            empty="(no delivery)",
        )
        refused = [d for d in items if d.refused_by]
        if refused:
            out.note(refused_note(refused, endpoint_id))

    out.emit(items, human)


def refused_note(refused: list[Any], endpoint_id: str) -> str:
    """What to do about deliveries a setting refused: the setting, the command that changes it where it lives (this
    data dir, or the server's), then how to send them again."""
    setting = refused[0].refused_by
    embedded = _profile().kind == "embedded"
    where = "this data dir" if embedded else "the server's data dir (its operator)"
    n = len(refused)
    prefix = f"socialpub {f'--profile {profile_name()} ' if profile_name() else ''}"
    return (
        f"Note: {n} deliver{'y was' if n == 1 else 'ies were'} refused by the {setting} setting of {where} "
        "(loopback and private addresses refused), not by the endpoint.\n"
        f"  Allow them: {prefix}admin {setting} on — then send {'it' if n == 1 else 'them'} again: "
        f"{prefix}events redeliver {refused[0].event_id} --endpoint {endpoint_id}"
    )


# ---- events -----------------------------------------------------------------------------------------------


@events_group.command("redeliver")
@click.argument("event_id", metavar="EVENT_ID")
@click.option(
    "--endpoint",
    "endpoint_id",
    metavar="ID",
    default=None,
    help="Only to this endpoint (default: every endpoint that had the event).",
)
@api_command
def events_redeliver(event_id: str, endpoint_id: str | None, out: Output) -> None:
    """Deliver an event again, with the same `webhook-id` (receivers deduplicate on it).

    \b
    Examples:
      socialpub events redeliver evt_01j9…
      socialpub events redeliver evt_01j9… --endpoint we_01j9…
    """
    res = get_client().redeliver_event(event_id, endpoint_id=endpoint_id)
    n = len(res.deliveries)
    out.emit(
        res,
        f"Redelivering {res.event_id} ({n} deliver{'y' if n == 1 else 'ies'}: "
        f"{', '.join(res.deliveries) or '-'}).",
    )


@events_group.command("show")
@click.argument("event_id", metavar="EVENT_ID")
@time_options
@api_command
def events_show(event_id: str, out: Output) -> None:
    """An event as stored: type, time, subject and data.

    \b
    Example:
      socialpub events show evt_01j9… --json | jq .data
    """
    e = get_client(worker=False).get_event(event_id)
    out.emit(
        e,
        lambda: out.fields(
            [
                ("id", e.id),
                ("type", e.type),
                ("createdAt", short_time(e.created_at)),
                ("subjectId", e.subject_id),
                ("data", json.dumps(e.data, ensure_ascii=False)),
            ]
        ),
    )


# ---- listen: a local receiver ------------------------------------------------------------------------------


def _port_of(url: str) -> int | None:
    try:
        parts = urlsplit(url)
        return parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None


def stored_secrets(port: int) -> list[str]:
    """The secrets (current and previous) of every stored endpoint whose URL's port is `port`, any profile."""

    found: list[str] = []
    for endpoints in load_webhook_secrets().values():
        for entry in endpoints.values():
            if _port_of(str(entry.get("url", ""))) == port:
                found += [
                    s for s in (entry.get("secret"), entry.get("previousSecret")) if isinstance(s, str) and s
                ]
    return found


def _usable_secret(secret: str) -> bool:
    from standardwebhooks import Webhook

    try:
        Webhook(secret)
    except Exception:
        return False
    return True


def verify(body: bytes, headers: dict[str, str], secrets: Iterable[str]) -> tuple[bool, Any, str]:
    """(verified, the parsed body, why not) with the reference Standard Webhooks library, trying each secret."""
    from standardwebhooks import Webhook, WebhookVerificationError

    why = "no secret to verify with: pass --secret, or add the endpoint from this machine"
    for secret in dict.fromkeys(secrets):
        try:
            return True, Webhook(secret).verify(body, headers), ""
        except WebhookVerificationError as exc:  # a bad signature, an old timestamp, missing headers
            why = str(exc)
        except Exception:  # the library's parsing: a signature without `v1,`, a body that is not UTF-8 JSON
            why = "malformed request (webhook-signature header, or a body that is not UTF-8 JSON)"
    return False, None, why


def summary(event_type: str, body: Any) -> str:
    """A few words on what happened: the network and the post URL or failure, the generation and its status."""
    if not isinstance(body, dict):
        return ""
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    if event_type.startswith("generation."):
        parts = [body.get("id"), body.get("status"), body.get("error")]
    elif event_type.startswith("publish."):
        parts = [data.get("platform"), data.get("postUrl") or data.get("failReason"), data.get("postId")]
    elif event_type.startswith("tiktok.publish."):
        parts = [data.get("id"), data.get("status"), data.get("failReason")]
    else:
        parts = [data.get("message") or data.get("endpointId")]
    return " ".join(str(p) for p in parts if p)


class Receiver:
    """What `listen` does with one request: verify, answer, forward, report. The HTTP server is around it."""

    def __init__(
        self,
        *,
        secrets: tuple[str, ...],
        forward_to: str | None,
        as_json: bool,
        write: Callable[[str], None],
        colour: bool = False,
        zone: Any = None,
    ) -> None:
        self.secrets = secrets
        self.forward_to = forward_to
        self.as_json = as_json
        self.write = write
        self.colour = colour
        self.zone = zone
        self.port = 0
        self.seen: set[str] = set()
        self._lock = threading.Lock()
        self._http: Any = None

    def candidate_secrets(self) -> list[str]:
        """--secret values, then the stored ones for this port (the file is read again on every request)."""
        try:
            stored = stored_secrets(self.port)
        except Exception:  # an unreadable file is the same as no file
            stored = []
        return [*self.secrets, *stored]

    def receive(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, Any]]:
        """Verify one request: the status and body of the answer, and the record to report (after_answer)."""
        received = datetime.now(UTC)
        ok, parsed, why = verify(body, headers, self.candidate_secrets())
        if not ok:
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = body.decode("utf-8", "replace")
        event_type = headers.get(EVENT_TYPE_HEADER) or (
            parsed.get("type") if isinstance(parsed, dict) else None
        )
        record: dict[str, Any] = {
            "id": headers.get("webhook-id") or None,
            "type": event_type,
            "verified": ok,
            "receivedAt": received.isoformat().replace("+00:00", "Z"),
            "body": parsed,
        }
        if ok:
            return 204, b"", record
        record["reason"] = why
        return 400, json.dumps({"error": "invalid_signature", "message": why}).encode(), record

    def after_answer(self, record: dict[str, Any], body: bytes, headers: dict[str, str]) -> None:
        """Forward (verified deliveries only) and report, once the sender has its answer."""
        if self.forward_to and record["verified"]:
            record["forward"] = self.forward(body, headers)
        self.report(record)

    def forward(self, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
        import httpx

        hop = {
            "host",
            "content-length",
            "connection",
            "keep-alive",
            "transfer-encoding",
            "te",
            "upgrade",
            "proxy-connection",
        }
        with self._lock:
            if self._http is None:
                self._http = httpx.Client(timeout=FORWARD_TIMEOUT_S, trust_env=False, follow_redirects=False)
        started = time.monotonic()
        try:
            r = self._http.post(
                self.forward_to,
                content=body,
                headers={k: v for k, v in headers.items() if k.lower() not in hop},
            )
        except httpx.HTTPError as exc:
            return {"url": self.forward_to, "status": None, "error": str(exc) or type(exc).__name__}
        return {
            "url": self.forward_to,
            "status": r.status_code,
            "durationMs": round((time.monotonic() - started) * 1000),
        }

    def report(self, record: dict[str, Any]) -> None:
        with self._lock:
            again = bool(record["verified"] and record["id"] in self.seen)
            if record["verified"] and record["id"]:
                self.seen.add(record["id"])
            if self.as_json:
                self.write(json_text(record))
                return
            received = datetime.fromisoformat(record["receivedAt"].replace("Z", "+00:00"))
            local = self.zone.local(received) if self.zone is not None else received.astimezone()
            verdict = (
                self._style("verified", "green")
                if record["verified"]
                else self._style("NOT verified", "red") + f" ({inert(record.get('reason'))})"
            )
            # what arrived is anyone's who reaches the port: shown inert
            cols = [
                f"{local:%H:%M:%S}",
                inert(record["type"] or "?"),
                inert(record["id"] or "-"),
                inert(summary(record["type"] or "", record["body"])),
                verdict,
            ]
            if again:
                cols.append("(seen before: a retry or redelivery)")
            fwd = record.get("forward")
            if fwd:
                cols.append(
                    f"→ {inert(fwd['url'])} {fwd['status'] if fwd['status'] is not None else inert(fwd['error'])}"
                )
            self.write("  ".join(c for c in cols if c))

    def _style(self, text: str, colour: str) -> str:
        return click.style(text, fg=colour) if self.colour else text

    def close(self) -> None:
        if self._http is not None:
            self._http.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins the request threads: none is left behind
    block_on_close = True


def _registration(out: Output, url: str, register: bool) -> list[str]:
    """What to say about registering `url` with the profile's backend — a command that works there — or, with
    `register`, register it (reusing an endpoint with this URL; its secret kept for verification). The backend is
    asked first (POST /v1/webhooks?dryRun=true): a receiver the data dir's address rule refuses is said so, with the
    setting to change. A failed --register is a ClickException (exit 1) before anything is served."""

    profile = _profile()
    prefix = f"socialpub {f'--profile {profile_name()} ' if profile_name() else ''}"
    add_cmd = f"{prefix}webhooks add {url}"
    lines: list[str] = []
    if profile.kind != "embedded" and not _on_this_machine(profile.url or ""):
        lines.append(
            f"Warning: the server at {profile.url} delivers from its own machine: it reaches {url} only if it runs "
            "on this one (else listen on an address it can reach, --host, or through a tunnel)."
        )
    try:
        with socialpub_tui.client.connect(profile, worker=False) as client:
            try:
                client.check_webhook_url(url)
            except ApiError as err:
                if err.code != "invalid_webhook_url":
                    raise
                setting = next((d.get("setting") for d in err.details if d.get("setting")), None)
                if setting is None:
                    raise
                fix = (
                    f"{prefix}admin private-urls on"
                    if profile.kind == "embedded"
                    else "its operator runs `socialpub admin private-urls on` on the server's data dir"
                )
                if register:
                    raise click.ClickException(
                        f"the backend refuses to deliver to {url}: {err.message}. First: {fix}; then run "
                        "`webhooks listen --register` again."
                    ) from None
                where = "this data dir" if profile.kind == "embedded" else "the server's data dir"
                return [
                    *lines,
                    f"This backend does not deliver to {url} yet: {where} refuses loopback and private "
                    f"addresses (its {setting} setting).",
                    f"To receive here, first:  {fix}",
                    f"then register it once:   {add_cmd}   (or restart listen with --register)",
                ]
            if not register:
                return [*lines, f"Register it once:  {add_cmd}   (or start listen with --register)"]
            return [*lines, _register(out, client, url)]
    except (
        ApiError
    ) as err:  # no backend here (not initialised, unreachable, no key): say what would register it
        if register:
            raise click.ClickException(f"cannot register {url}: {err}") from None
        return [*lines, f"Register it once:  {add_cmd}   (the backend could not be asked: {err})"]


def _on_this_machine(server_url: str) -> bool:
    try:
        host = (urlsplit(server_url).hostname or "").lower()
    except ValueError:
        return False
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost") or host.startswith("127.")


def _register(out: Output, client: Any, url: str) -> str:
    """--register: the workspace's endpoint with this URL (its secret rotated in when this machine does not hold
    it), else a new one; the secret kept for `listen`. One line saying which."""

    known = {
        endpoint_id
        for endpoints in load_webhook_secrets().values()
        for endpoint_id, entry in endpoints.items()
        if entry.get("url") == url and entry.get("secret")
    }
    existing = next((w for w in client.list_webhooks().items if str(w.url) == url), None)
    if existing is None:
        created = client.create_webhook(url, description="socialpub webhooks listen")
        _keep_secret(out, created)
        return f"Registered {created.id} → {url} (every event type; `socialpub webhooks remove {created.id}` ends it)"
    if existing.id not in known:
        _keep_secret(out, client.rotate_webhook(existing.id))  # the old secret signs beside it for 24 h
    if not existing.enabled:
        client.update_webhook(existing.id, {"enabled": True})
    return f"Registered: {existing.id} → {url} already was; reused" + (
        " (its secret rotated in for this machine)" if existing.id not in known else ""
    )


def make_server(receiver: Receiver, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server on (host, port) handing every POST to `receiver` (port 0: a free one, then receiver.port)."""

    class Handler(BaseHTTPRequestHandler):
        timeout = 30  # a client that stalls cannot hold a thread (nor the shutdown) for long
        server_version = "socialpub-listen"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            try:
                length = int(self.headers.get("content-length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY:
                self._answer(413 if length > MAX_BODY else 400, b'{"error":"bad_length"}')
                return
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, answer, record = receiver.receive(body, headers)
            self._answer(status, answer)
            receiver.after_answer(record, body, headers)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(
                405, b"socialpub webhooks listen: POST deliveries here\n", "text/plain", {"allow": "POST"}
            )

        def _answer(
            self,
            status: int,
            body: bytes,
            ctype: str = "application/json",
            extra: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            if status != 204:
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
            self.end_headers()
            if status != 204:
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # the receiver reports each event; the access log would repeat it (and go to stderr)

    server = _Server((host, port), Handler)
    receiver.port = int(server.server_address[1])
    return server


@webhooks_group.command("listen")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=LISTEN_PORT,
    show_default=True,
    help="Port to listen on (0: any free port, printed at start).",
)
@click.option("--host", default=LISTEN_HOST, show_default=True, help="Address to bind (keep it on loopback).")
@click.option(
    "--forward-to",
    "forward_to",
    metavar="URL",
    default=None,
    help="Re-POST each verified delivery, body and headers unchanged, to this local app; its status is "
    "shown.",
)
@click.option(
    "--secret",
    "secrets",
    multiple=True,
    metavar="whsec_…",
    help="A secret to verify with (repeat); added to the stored secrets of endpoints on this port.",
)
@click.option(
    "--register",
    is_flag=True,
    help="Register this receiver's URL as an endpoint of the workspace (an endpoint with this URL is reused) and "
    "keep its secret, so deliveries verify at once; it stays registered after Ctrl+C.",
)
@api_command
def webhooks_listen(
    port: int, host: str, forward_to: str | None, secrets: tuple[str, ...], register: bool, out: Output
) -> None:
    """Receive deliveries on 127.0.0.1, verify them and print each one, until Ctrl+C.

    A delivery is verified with the --secret values and the stored secret of every endpoint added (or rotated) on
    this machine whose URL has this port — re-read at each request, so an endpoint added after the start works.
    Answers 204 to a verified delivery and 400 to any other request. Prints one line per event: time, type,
    webhook-id, a summary, verified or NOT verified; with --json one JSON object per line:
    {"id", "type", "verified", "receivedAt", "body"} (+ "reason" when not verified, "forward" with --forward-to).

    At start it asks the backend whether it would deliver to this URL (POST /v1/webhooks?dryRun=true) and prints
    the command that registers it there — after `socialpub admin private-urls on` when the data dir refuses
    loopback receivers (off by default) — or, with --register, registers it itself.

    Deliveries are made by a worker: `socialpub serve` or `socialpub worker`, the TUI's, or, embedded, the CLI
    command that caused them.

    \b
    Examples:
      socialpub webhooks listen --register
      socialpub webhooks listen --port 8765 --forward-to http://127.0.0.1:3000/hooks
      socialpub webhooks add http://127.0.0.1:8765/        # in another terminal, once
      socialpub webhooks listen --json | jq -c 'select(.type=="publish.failed") | .body.data'
    """
    if hasattr(sys.stdout, "reconfigure"):
        try:
            sys.stdout.reconfigure(line_buffering=True)
        except (ValueError, OSError):
            pass

    def write(line: str) -> None:
        click.echo(line)  # click.echo flushes: a pipe (`| jq`) sees each event at once

    for secret in secrets:
        if not _usable_secret(secret):
            raise click.BadParameter(
                "expected whsec_ followed by base64, as printed by `webhooks add`", param_hint="--secret"
            )
    receiver = Receiver(
        secrets=secrets,
        forward_to=forward_to,
        as_json=out.json,
        write=write,
        colour=out.colour,
        zone=display_zone(),
    )
    try:
        server = make_server(receiver, host, port)
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            + (" (choose another with --port)" if port else "")
        ) from None
    shown_host = LISTEN_HOST if host in ("0.0.0.0", "", "::") else (f"[{host}]" if ":" in host else host)
    url = f"http://{shown_host}:{receiver.port}/"
    say = out.note if out.json else out.line
    try:
        registration = _registration(out, url, register)
    except BaseException:
        server.server_close()
        receiver.close()
        raise
    stored = len(stored_secrets(receiver.port))
    say(f"Ready: listening on {url} (Ctrl+C to stop)")
    for line in registration:
        say(line)
    say(
        f"Verifying with {stored} stored secret{'s' if stored != 1 else ''} for port {receiver.port}"
        + (f" and {len(secrets)} from --secret" if secrets else "")
        + (f"; forwarding verified deliveries to {forward_to}" if forward_to else "")
        + "."
    )
    if host not in ("127.0.0.1", "localhost", "::1"):
        out.note(f"Warning: bound to {host}: other machines can reach this receiver.")

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    # Ctrl+C and SIGTERM stop it, whatever this process inherited: a parent that ignores SIGINT (a script's
    # background job, a test runner) passes that on, and Python then installs no KeyboardInterrupt for it
    previous = (
        {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
        if threading.current_thread() is threading.main_thread()
        else {}
    )
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        receiver.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
    out.note("Stopped.")

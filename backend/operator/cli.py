"""The operator commands: init, serve, worker, tick, admin. They act on the data dir / database directly.

`operator_cli` is the click group; the `socialpub` command (socialpub_tui.cli.main) mounts each of its commands
at the top level, so `socialpub init` is `operator_cli`'s `init`. `python -m backend.operator` runs the group
alone. Heavy modules (the app, the store, the worker) are imported inside the commands, so listing them is cheap.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn

import click

from backend import clock
from backend.operator import openfiles, runtime

if TYPE_CHECKING:
    from backend.config import Settings


def _settings() -> Settings:
    # deferred: backend.config costs ~184 ms of start-up, paid only by the commands that use it
    from backend.config import Settings

    return Settings()


def _logging(settings: Settings) -> None:
    logging.basicConfig(
        level=getattr(logging, settings.log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _fail(message: str, as_json: bool = False, code: str = "error") -> NoReturn:
    if as_json:
        click.echo(json.dumps({"error": code, "message": message, "details": [], "status": 0}), err=True)
    else:
        click.echo(f"Error: {message}", err=True)
    sys.exit(1)


@click.command("init")
@click.option("--workspace-name", default="My workspace", show_default=True, help="Name of the workspace.")
@click.option("--email", default="owner@example.com", show_default=True, help="Owner login email.")
@click.option(
    "--password",
    default=None,
    help="Owner password (at least 8 characters); generated and printed when omitted.",
)
@click.option("--sandbox", is_flag=True, help="Also connect one sandbox account per network.")
@click.option("--force", is_flag=True, help="Wipe an already initialised data dir and start again.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object (workspaceId, apiKey, sessionToken, …)."
)
def init_cmd(
    workspace_name: str, email: str, password: str | None, sandbox: bool, force: bool, as_json: bool
) -> None:
    """Create the store, the workspace, the owner login and one API key holding every scope.

    \b
    Example:
      socialpub init --workspace-name "Acme" --email me@acme.test --sandbox --json | jq -r .apiKey
    """
    # deferred: backend.services.bootstrap costs ~364 ms of start-up, paid only by the commands that use it
    from backend.services import bootstrap

    settings = _settings()
    try:
        created = bootstrap.initialise(
            settings, workspace_name=workspace_name, email=email, password=password, force=force
        )
    except bootstrap.AlreadyInitialised as exc:
        _fail(str(exc), as_json, "already_initialised")
        return
    except ValueError as exc:
        _fail(str(exc), as_json, "invalid_option")
        return
    out = created.public()
    if sandbox:
        # deferred: backend.services.accounts costs ~348 ms of start-up, paid only by the commands that use it
        from backend.services import accounts as accounts_service

        out["accounts"] = accounts_service.connect_sandbox_defaults(settings, created.workspace_id)
    out["dataDir"] = str(settings.data_dir)
    if as_json:
        click.echo(json.dumps(out))
        return
    click.echo(f"Initialised {settings.data_dir}")
    click.echo(f"  workspace     {created.workspace_id}")
    click.echo(
        f"  owner login   {created.email}" + (f"  (password: {created.password})" if created.password else "")
    )
    click.echo(f"  API key       {created.api_key}")
    click.echo("                (shown once: store it now; `socialpub keys create` makes more)")
    for acc in out.get("accounts", []):
        click.echo(f"  sandbox       {acc.get('platform'):<10} {acc.get('id')}  {acc.get('name', '')}")


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to listen on.")
@click.option("--no-worker", is_flag=True, help="Serve the API only (run `socialpub worker` elsewhere).")
@click.option(
    "--worker-in-process",
    is_flag=True,
    help="Run the worker in a thread of the server's process instead of a process of its own "
    "(as SOCIALPUB_SERVE_WORKER=thread): one process, but a busy API then slows publishing.",
)
def serve_cmd(host: str, port: int, no_worker: bool, worker_in_process: bool) -> None:
    """Run the /v1 API, the media host and the worker (in a process of its own).

    \b
    Example:
      SOCIALPUB_BASE_URL=https://pub.example.com socialpub serve --host 0.0.0.0 --port 8000
    """

    settings, warning = runtime.listening_settings(_settings(), host, port)
    _logging(settings)
    try:
        app = runtime.build_app(settings)
    except RuntimeError as exc:
        _fail(str(exc))
        return
    click.echo(f"socialpub API   {settings.base_url}/v1   docs {settings.base_url}/docs", err=True)
    if warning:
        click.echo(f"Warning: {warning}", err=True)
    worker = None if no_worker else ("thread" if worker_in_process else settings.serve_worker)
    runtime.serve_app(app, settings, host=host, port=port, worker=worker, proxy_headers=True)


@click.command("worker")
@click.option(
    "--concurrency",
    default=None,
    type=click.IntRange(min=1),
    help="Jobs run at once (default: $SOCIALPUB_WORKER_CONCURRENCY, sized for jobs that wait on "
    "the networks).",
)
@click.option(
    "--parent", type=int, default=None, hidden=True, help="Stop once this process is gone (serve's)."
)
def worker_cmd(concurrency: int | None, parent: int | None) -> None:
    """Run the job worker alone: publishing, status tracking, retention, deliveries.

    \b
    Example:
      SOCIALPUB_DATABASE_URL=postgresql://pub@db/pub socialpub worker --concurrency 8
    """
    import signal

    # deferred: backend.jobs.worker costs ~239 ms of start-up, paid only by the commands that use it
    from backend.jobs.worker import Worker

    settings = _settings()
    _logging(settings)
    worker = Worker(settings, name="worker", concurrency=openfiles.worker_pool(settings, concurrency))
    worker.check_connections()
    runtime.worker_collector()
    signal.signal(signal.SIGTERM, lambda *_: worker.stop(timeout=0))
    if parent is not None:
        _stop_with_parent(worker, parent)
    try:
        worker.run_forever()
    except KeyboardInterrupt:
        worker.stop(timeout=0)


def _stop_with_parent(worker, parent: int) -> None:  # type: ignore[no-untyped-def]  # worker: backend.jobs.worker.Worker, imported deferred by the command
    """`serve`'s worker process: stop (as on SIGTERM) once the server's process is gone, whatever ended it."""
    import os
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        logging.getLogger("socialpub.worker").warning(
            "the server process %d is gone: the worker stops", parent
        )
        worker.stop(timeout=0)

    threading.Thread(target=watch, name="socialpub-parent", daemon=True).start()


@click.command("tick")
@click.option("--max-seconds", default=120.0, show_default=True, type=float, help="Bound on the whole run.")
@click.option(
    "--settle",
    default=30.0,
    show_default=True,
    type=float,
    help="Keep running while tracked jobs come due within this many seconds.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def tick_cmd(max_seconds: float, settle: float, as_json: bool) -> None:
    """Run everything due once, wait a bounded time for confirmations, and exit (the cron form).

    \b
    Example (crontab):
      * * * * *  SOCIALPUB_DATA_DIR=~/pub socialpub tick
    """
    # deferred: backend.queue costs ~251 ms of start-up, paid only by the commands that use it
    from backend import queue

    # deferred: backend.jobs.worker costs ~257 ms of start-up, paid only by the commands that use it
    from backend.jobs.worker import Worker

    settings = _settings()
    _logging(settings)
    worker = Worker(settings, name="tick", concurrency=openfiles.worker_pool(settings))
    ran = worker.run_until_idle(max_seconds=max_seconds, settle_s=settle)
    counts = queue.stats()
    summary = {"jobsRun": ran, "queue": counts}
    states = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "empty"
    click.echo(json.dumps(summary) if as_json else f"ran {ran} job(s); queue: {states}")


@click.group("admin")
def admin_group() -> None:
    """Operator tools acting on the data dir directly (no API key needed).

    \b
    Examples:
      socialpub admin session
      socialpub admin plan STARTER --status active --period-end 2027-01-01T00:00:00Z
      socialpub admin credits --add 100
      socialpub admin private-urls on
      socialpub admin rotate-key
    """


@admin_group.command("session")
@click.option("--email", default=None, help="Owner email (default: the first owner).")
@click.option("--json", "as_json", is_flag=True, help="Print {sessionToken, expiresAt} as JSON.")
def admin_session(email: str | None, as_json: bool) -> None:
    """Print a fresh session token for the owner.

    \b
    Example:
      curl -H "Authorization: Bearer $(socialpub admin session)" localhost:8000/v1/api-keys
    """
    # deferred: backend.services.bootstrap costs ~423 ms of start-up, paid only by the commands that use it
    from backend.services import bootstrap

    try:
        token = bootstrap.owner_session(_settings(), email, operator=False)
    except (LookupError, RuntimeError) as exc:
        _fail(str(exc), as_json)
        return
    if as_json:
        import jwt

        exp = jwt.decode(token, options={"verify_signature": False})["exp"]
        from datetime import UTC, datetime

        click.echo(
            json.dumps({"sessionToken": token, "expiresAt": clock.iso(datetime.fromtimestamp(exp, UTC))})
        )
        return
    click.echo(token)


def _workspace_id(email: str | None) -> str:
    # deferred: backend.store.db costs ~332 ms of start-up, paid only by the commands that use it
    from backend.store.db import init_database

    # deferred: backend.store.models costs ~247 ms of start-up, paid only by the commands that use it
    from backend.store.models import Owner

    init_database(_settings())
    q = Owner.select().order_by(Owner.created_at)
    if email:
        q = q.where(Owner.email == email.lower())
    owner: Owner | None = q.first()
    if owner is None:
        _fail("no workspace found: run `socialpub init` first")
    return owner.workspace_id


@admin_group.command("plan")
@click.argument("name", type=click.Choice(["FREE", "STARTER", "GROWTH"], case_sensitive=False))
@click.option(
    "--status",
    default=None,
    type=click.Choice(["active", "trialing", "cancelled", "past_due", "on_hold", "paused", "expired"]),
    help="Subscription state (default active).",
)
@click.option(
    "--period-end",
    default=None,
    help="End of the paid period, ISO 8601 with offset (default: the current end is kept while it is ahead).",
)
@click.option("--no-period-end", is_flag=True, help="No end: the plan stays in force until changed.")
@click.option("--email", default=None, help="Owner email of the workspace (default: the first).")
@click.option("--json", "as_json", is_flag=True)
def admin_plan(
    name: str,
    status: str | None,
    period_end: str | None,
    no_period_end: bool,
    email: str | None,
    as_json: bool,
) -> None:
    """Set the workspace's subscription.

    Without --period-end the current end of the paid period is kept while it is still ahead (`make run`'s
    workspace has GROWTH for a year: `admin plan GROWTH` changes nothing of it); --no-period-end removes it.

    \b
    Examples:
      socialpub admin plan GROWTH --status cancelled --period-end 2026-12-31T23:59:59Z
      socialpub admin plan STARTER
    """
    # deferred: backend.services.workspace costs ~244 ms of start-up, paid only by the commands that use it
    from backend.services import workspace

    if period_end and no_period_end:
        raise click.UsageError("give --period-end or --no-period-end, not both")
    end = None
    if period_end:
        try:
            end = datetime.fromisoformat(period_end.replace("Z", "+00:00"))
        except ValueError:
            _fail(f"--period-end {period_end!r} is not an ISO 8601 timestamp")
        if end is not None and end.tzinfo is None:
            _fail("--period-end needs a zone offset, e.g. 2027-01-01T00:00:00Z")
    workspace_id = _workspace_id(email)
    if period_end is None and not no_period_end:
        current = workspace.get(workspace_id).plan_period_end
        end = current if current is not None and current > clock.now() else None
    try:
        ws = workspace.set_plan(workspace_id, name, status, end)
    except ValueError as exc:
        _fail(str(exc))
        return
    pub = workspace.to_public(ws)
    plan = pub["plan"]
    until = (
        f"until {ws.plan_period_end:%Y-%m-%d %H:%M} UTC"
        if plan["periodEnd"] and ws.plan_period_end
        else "no end date"
    )
    click.echo(
        json.dumps(plan)
        if as_json
        else f"plan in force: {plan['name']} (subscribed {plan['subscribed']}, "
        f"status {plan['status'] or '-'}, {until}); credits {pub['credits']['balance']}"
    )


@admin_group.command("credits")
@click.option("--set", "set_to", type=int, default=None, help="Set the balance to N.")
@click.option("--add", type=int, default=None, help="Add N (negative to remove).")
@click.option("--email", default=None, help="Owner email of the workspace (default: the first).")
@click.option("--json", "as_json", is_flag=True)
def admin_credits(set_to: int | None, add: int | None, email: str | None, as_json: bool) -> None:
    """Set or change the credit balance.

    \b
    Example:
      socialpub admin credits --set 500
    """
    # deferred: backend.services.workspace costs ~259 ms of start-up, paid only by the commands that use it
    from backend.services import workspace

    if (set_to is None) == (add is None):
        raise click.UsageError("give exactly one of --set N or --add N")
    try:
        ws = workspace.set_credits(_workspace_id(email), set_to=set_to, add=add)
    except ValueError as exc:
        _fail(str(exc))
        return
    click.echo(json.dumps({"balance": ws.credits_balance}) if as_json else f"credits: {ws.credits_balance}")


@admin_group.command("private-urls")
@click.argument("state", required=False, type=click.Choice(["on", "off"]))
@click.option("--json", "as_json", is_flag=True, help="Print {allowed, source, dataDirAllows} as JSON.")
def admin_private_urls(state: str | None, as_json: bool) -> None:
    """Show or set whether this data dir reaches loopback and private addresses (off by default).

    One setting of the data dir, applied alike by every process that opens it — the TUI's worker, CLI commands,
    `serve`, `worker` — at once: webhook deliveries to a receiver on this machine (`socialpub webhooks listen`)
    and media fetched from a local URL need it on. Local development only: the media fetcher and webhook delivery
    then reach this machine and its network. SOCIALPUB_ALLOW_PRIVATE_URLS (1 or 0), when set, overrides it in
    the one process whose environment has it.

    \b
    Examples:
      socialpub admin private-urls on
      socialpub admin private-urls --json
    """
    # deferred: backend.store.db costs ~185 ms of start-up, paid only by the commands that use it
    from backend.store.db import init_database

    # deferred: backend.store.instance costs ~207 ms of start-up, paid only by the commands that use it
    from backend.store.instance import address_rule, private_urls_allowed, set_private_urls

    settings = _settings()
    init_database(settings)
    if state is not None:
        set_private_urls(state == "on")
    stored = private_urls_allowed()
    rule = address_rule(settings)
    if as_json:
        click.echo(
            json.dumps({"allowed": rule.private_allowed, "source": rule.source, "dataDirAllows": stored})
        )
        return
    click.echo(
        f"private addresses {'allowed' if stored else 'refused'} on this data dir ({settings.data_dir}): "
        + (
            "webhook deliveries and media fetches may reach loopback and private addresses (local development only)"
            if stored
            else "only public addresses are reached; `socialpub admin private-urls on` allows loopback and private "
            "ones (local development)"
        )
    )
    if rule.source == "environment":
        click.echo(
            f"this process: SOCIALPUB_ALLOW_PRIVATE_URLS={int(rule.private_allowed)} overrides it in its own "
            "environment (other processes apply the data dir's setting unless theirs says otherwise)"
        )


@admin_group.command("rotate-key")
@click.option(
    "--json", "as_json", is_flag=True, help="Print {reencrypted, tables, keySource, oldKeysDropped} as JSON."
)
def admin_rotate_key(as_json: bool) -> None:
    """Encrypt every stored token and webhook secret under a new key.

    With the key file (<data dir>/secrets.key) a new key is made; the old one keeps decrypting until every
    value is re-encrypted, then it is dropped. Safe to run again after an interruption. With
    SOCIALPUB_SECRETS_KEY, put the new key first (NEW,OLD) on every server, run this, then remove OLD.

    \b
    Example:
      socialpub admin rotate-key --json
    """
    # deferred: backend.services.encryption costs ~365 ms of start-up, paid only by the commands that use it
    from backend.services import encryption

    # deferred: backend.store.secretbox costs ~146 ms of start-up, paid only by the commands that use it
    from backend.store.secretbox import SecretsKeyError

    try:
        out = encryption.rotate_key(_settings())
    except SecretsKeyError as exc:
        _fail(str(exc), as_json, "secrets_key_error")
        return
    if as_json:
        click.echo(json.dumps(out))
        return
    per_table = ", ".join(f"{table} {n}" for table, n in out["tables"].items())
    click.echo(
        f"re-encrypted {out['reencrypted']} value(s) ({per_table}) under the first key of {out['keySource']}"
        + (f"; {out['oldKeysDropped']} old key(s) dropped" if out["oldKeysDropped"] else "")
    )


OPERATOR_COMMANDS = (init_cmd, serve_cmd, worker_cmd, tick_cmd, admin_group)

operator_cli = click.Group(
    "operator",
    commands=list(OPERATOR_COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
    help="""socialpub's operator commands: they act on the data dir and database directly.

    \b
    Example:
      python -m backend.operator init --sandbox   # the same as `socialpub init --sandbox`
    """,
)


def main() -> None:
    operator_cli(prog_name="socialpub")

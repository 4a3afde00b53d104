"""`socialpub recipes`: a folder of YAML and media is the source of truth for what gets published when.

Commands (exit 0 on success, 1 on any error; `plan --detailed-exitcode` exits 2 when changes are pending):
validate and schema read files only (recipes.load, recipes.schema); plan, apply and watch speak /v1 through the
client (recipes.plan, recipes.apply, recipes.watch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from recipes.media import Hasher, MediaState, MediaStore, state_path
from socialpub_tui import times
from socialpub_tui.cli._common import (
    Output,
    _configured_zone,
    api_command,
    display_zone,
    get_client,
    profile_name,
    short_time,
    time_options,
)
from socialpub_tui.client.config import resolve_profile
from socialpub_tui.client.errors import ApiError, ConfigError
from socialpub_tui.look import inert


@click.group("recipes")
def recipes_group() -> None:
    """Recipes: YAML files and media that schedule posts — validate, plan, apply, watch, schema.

    \b
    Examples:
      socialpub recipes validate recipes/examples
      socialpub recipes plan recipes/examples --prune
      socialpub recipes apply recipes/examples && socialpub tick
      socialpub recipes watch recipes/examples
    """


# ---- validate, schema: reading files (recipes.load, recipes.schema) --------------------------------------


def recipe_zone(ctx: click.Context | None = None) -> str | None:
    """The zone of recipe files without `timezone:`: the profile's (or config.yaml's) `timezone`, else the
    system's zone (None: UTC). A configured zone that is not an IANA name is a usage error (exit 2)."""

    ctx = ctx or click.get_current_context()
    name = _configured_zone(ctx)
    if name:
        try:
            times.zone(name)
        except times.TimeError as exc:
            raise click.UsageError(f"config.yaml `timezone`: {exc}", ctx=ctx) from None
        return name
    return times.system_zone_name()


@recipes_group.command("validate")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--set",
    "set_name",
    metavar="NAME",
    help="The recipe set's name (default: the folder's name); it is part of every occurrence's key.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print one JSON document: {"files", "occurrences", "errors": [{file, line, column, message, '
    'code}]} (with --accounts also "unchecked": [{platform, reason}]).',
)
@click.option(
    "--accounts",
    "check_accounts",
    is_flag=True,
    help="Also check option values against what each target account's network lets its creator choose now "
    "(GET /v1/accounts/{id}/choices through the profile's server: a network's own levels of privacy, …).",
)
def validate_command(path: Path, set_name: str | None, as_json: bool, check_accounts: bool) -> None:
    """Check recipe files: every error of every file, with its line and column. Nothing is sent.

    PATH is a YAML file or a folder (every *.yaml / *.yml under it, hidden folders skipped). Local times are
    read in each file's `timezone:`, else the profile's `timezone`, else the system's zone. Exit 0 when
    everything is valid, 1 on any error. With --accounts, each option value is also checked against what the
    target account's network lets its creator choose now (e.g. TikTok's privacy among the account's own levels),
    through the profile's server; what could not be checked is said.

    \b
    Examples:
      socialpub recipes validate recipes/examples
      socialpub recipes validate recipes/examples/launch.yaml --json
      socialpub recipes validate recipes/examples --accounts
    """

    out = Output(as_json)
    zone = recipe_zone()
    # deferred: recipes.load costs ~61 ms of start-up, paid only by the commands that use it
    from recipes.load import load

    _check_set(path, set_name)
    loaded = load(path, networks=installed_networks(), set_name=set_name, default_zone=zone)
    single = not path.is_dir()
    files = [str(path) if single else f.file for f in loaded.files]
    errors = [
        {"file": p.file, "line": p.line, "column": p.column, "message": p.message, "code": p.code}
        for p in loaded.problems
    ]
    if not loaded.files:
        errors.append(
            {
                "file": str(path),
                "line": 0,
                "column": 0,
                "code": "no_recipe_files",
                "message": "no *.yaml or *.yml file here (hidden folders are skipped)",
            }
        )
    count = len(loaded.occurrences)
    refused: list[dict[str, Any]] = []
    unchecked: list[dict[str, str]] = []
    if check_accounts and not errors:
        refused, unchecked = account_problems(loaded.occurrences, str(path) if single else None)
        errors.extend(refused)

    def human() -> None:
        for p in loaded.problems:
            click.echo(str(p))
        for e in refused:
            click.echo(f"{e['file']}:{e['line']}:{e['column']}: {e['message']}")
        for u in unchecked:
            click.echo(f"{inert(u['platform'])}: not checked against the accounts: {inert(u['reason'])}")
        if not loaded.files:
            click.echo(f"{path}: no *.yaml or *.yml file here (hidden folders are skipped)")
        bad = sum(1 for f in loaded.files if not f.ok)
        summary = f"{_plural(len(loaded.files), 'file')}, {_plural(count, 'occurrence')}"
        if errors:
            summary += f": {_plural(len(errors), 'error')}" + (f" in {_plural(bad, 'file')}" if bad else "")
        else:
            summary += f" (set {loaded.set_name}): valid"
        click.echo(out.style(summary, fg="red" if errors else "green"))

    doc: dict[str, Any] = {"files": files, "occurrences": count, "errors": errors}
    if check_accounts:
        doc["unchecked"] = unchecked
    out.emit(doc, human)
    if errors:
        raise SystemExit(1)


def account_problems(
    occurrences: Any, single: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """`validate --accounts`: each occurrence's option values against what its target accounts' network lets their
    creator choose now (GET /v1/accounts/{id}/choices: `allowed` of each field), through the profile's client.
    Returns (errors in validate's shape, code `option_not_allowed`; [{platform, reason}] of the networks whose
    accounts could not be checked: no server, no such account, the network unreachable)."""
    wanted = [o for o in occurrences if any((o.options or {}).get(_platform(t)) for t in o.targets)]
    if not wanted:
        return [], []
    unchecked: dict[str, str] = {}
    try:
        client = get_client(worker=False)
        listing = client.list_accounts().items
    except (ApiError, ConfigError, OSError) as exc:
        reason = f"{getattr(exc, 'message', None) or exc}; the server checks them when the recipe is applied"
        platforms = dict.fromkeys(
            _platform(t) for o in wanted for t in o.targets if o.options.get(_platform(t))
        )
        return [], [{"platform": p, "reason": reason} for p in platforms]
    defaults = {a.platform: a.id for a in listing if a.is_default}
    answers: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    for o in wanted:
        for t in o.targets:
            platform = _platform(t)
            given = o.options.get(platform) or {}
            account_id = t.get("channelId") if isinstance(t, dict) else None
            account_id = account_id or defaults.get(platform)
            if not given or platform in unchecked:
                continue
            if account_id is None:
                unchecked[platform] = "no connected account of this network: it cannot be checked"
                continue
            if account_id not in answers:
                try:
                    answers[account_id] = client.account_choices(account_id)
                except ApiError as exc:
                    unchecked[platform] = f"{exc.message}; the server checks them when the recipe is applied"
                    continue
            found = answers[account_id]
            for f in found.fields if found.supported else []:
                value = given.get(f.field)
                if f.allowed is None or value is None or value in f.allowed:
                    continue
                allowed = ", ".join(f.allowed) or "none"
                why = f" ({f.note})" if f.note else ""
                errors.append(
                    {
                        "file": single or o.file,
                        "line": o.line,
                        "column": 0,
                        "code": "option_not_allowed",
                        "message": f"post {o.entry!r}: options.{platform}.{f.field}: {value} is not among what the "
                        f"account {found.name!r} allows now: {allowed}{why}",
                    }
                )
    return errors, [{"platform": p, "reason": r} for p, r in unchecked.items()]


def _platform(target: Any) -> str:
    return str(target if isinstance(target, str) else target.get("platform"))


@recipes_group.command("schema")
@click.option(
    "--json", "as_json", is_flag=True, help="The same JSON Schema (it is always one JSON document)."
)
def schema_command(as_json: bool) -> None:
    """Print the JSON Schema of a recipe file, for editors that complete and check YAML.

    \b
    Examples:
      socialpub recipes schema > recipe.schema.json
      # then, first line of a recipe: # yaml-language-server: $schema=./recipe.schema.json
    """
    import json

    # deferred: recipes.schema costs ~35 ms of start-up, paid only by the commands that use it
    from recipes.schema import json_schema

    click.echo(json.dumps(json_schema(installed_networks()), indent=2, ensure_ascii=False))


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# ---- plan, apply, watch: against the backend (recipes.plan, recipes.apply, recipes.watch) ----------------


def _check_set(path: str | Path, set_name: str | None) -> None:
    """The set's name — `--set NAME`, else PATH's folder's — as the loader accepts it, else a usage error (exit 2)
    that says what to do."""
    # deferred: recipes.load costs ~68 ms of start-up, paid only by the commands that use it
    from recipes.load import check_set_name, default_set_name

    name = set_name if set_name is not None else default_set_name(Path(path))
    try:
        check_set_name(name)
    except ValueError as exc:
        if set_name is not None:
            raise click.BadParameter(str(exc), param_hint="--set") from None
        raise click.BadParameter(
            f"{exc}; the set's name is the folder's unless given: pass --set NAME", param_hint="PATH"
        ) from None


def installed_networks() -> Any:
    """The networks of this installation (its registry: built-ins and installed plugins), for the commands that
    read files only (validate, schema); plan, apply and watch check against the server's (the client's)."""
    from backend.operator.networks import installed  # deferred: only these two commands read the registry
    from socialpub_tui.client.networks import parse

    return parse({"items": installed()})


def _load(path: str, set_name: str | None) -> Any:
    """recipes.load on PATH, files without `timezone:` read in `recipe_zone()` (as `validate` reads them), its
    targets and options checked against the server's networks (the command's client)."""
    # deferred: recipes.load costs ~64 ms of start-up, paid only by the commands that use it
    from recipes.load import load

    _check_set(path, set_name)
    zone = recipe_zone()
    networks = get_client(worker=False).networks()
    loaded = load(Path(path), networks=networks, set_name=set_name, default_zone=zone)
    if not loaded.files:
        raise click.BadParameter(
            f"{path}: no *.yaml or *.yml file here (hidden folders are skipped)", param_hint="PATH"
        )
    return loaded


def _store(client: Any) -> Any:
    """The media store: the state file of the chosen profile's data dir (recipes.media.state_path)."""

    profile = resolve_profile(profile_name())
    return MediaStore(client, MediaState.load(state_path(profile)), Hasher())


def _strict_option(fn: Any) -> Any:
    return click.option(
        "--strict",
        is_flag=True,
        help="An occurrence whose time has passed with no post made for it (skipped, never created) is an "
        "error (exit 1, code occurrence_in_past), not a notice: for cron jobs.",
    )(fn)


def _path_argument(fn: Any) -> Any:
    return click.argument("path", type=click.Path(exists=True, file_okay=True, dir_okay=True))(fn)


def _set_option(fn: Any) -> Any:
    return click.option(
        "--set",
        "set_name",
        default=None,
        metavar="NAME",
        help="The recipe set's name (default: the folder's name). Posts carry it as the label "
        "socialpub.recipe/set: prune never touches another set's posts.",
    )(fn)


def _show_plan(out: Output, plan: Any, *, verb: dict[str, str] | None = None) -> None:
    """A plan for people: one line per change, the unchanged counted, notices and errors, a closing count."""
    verb = verb or {"create": "create", "update": "update", "cancel": "cancel"}
    rows = []
    for item in plan.create:
        note = f"replaces {item.replaces} ({', '.join(item.changes)})" if item.replaces else ""
        rows.append(
            (
                out.style("+ " + verb["create"], fg="green"),
                item.label(),
                _when(item.scheduled_at),
                _targets(item.targets),
                note,
            )
        )
    for item in plan.update:
        changed = ", ".join(item.changes)
        if "scheduledAt" in item.changes:
            changed += f" (was {short_time(item.before.get('scheduledAt'))})"
        rows.append(
            (
                out.style("~ " + verb["update"], fg="yellow"),
                item.label(),
                _when(item.scheduled_at),
                item.post_id,
                changed,
            )
        )
    for item in plan.cancel:
        why = "targets changed: replaced" if item.reason == "targets_changed" else "gone from the files"
        rows.append(
            (
                out.style("- " + verb["cancel"], fg="red"),
                item.label(),
                _when(item.scheduled_at),
                item.post_id,
                why,
            )
        )
    if rows:
        out.table(rows, ["", "OCCURRENCE", "WHEN", "POST / TARGETS", "CHANGES"])
    for item in [*plan.create, *plan.update]:
        g = item.generate
        spec = item.occurrence.generate if item.occurrence is not None else None
        if g is None or spec is None:
            continue
        what = "an image" if spec.type == "image" else f"a {spec.duration_sec}-second video"
        if g.existing is not None:
            how = f"generation {g.existing.id} ({g.existing.status}), already paid"
        else:
            how = f"a new generation, {g.cost} credits" if g.cost is not None else "a new generation"
        out.line(f"  {inert(item.label())}: {what} \u2014 {how}: {inert(_short(spec.prompt))}")
    credits = plan.credits()
    if credits is not None:
        line = f"Credits: {credits['required']} for {credits['generations']} new generation(s)"
        if credits.get("balance") is not None:
            line += f"; balance {credits['balance']} \u2192 {credits['balanceAfter']}"
            if not credits["enough"]:
                line += " (not enough: apply would fail with 402 insufficient_credits)"
        out.line(line)
    sent: dict[str, int] = {}
    for item in plan.unchanged:
        if item.reason and item.reason != "past":
            sent[item.reason] = sent.get(item.reason, 0) + 1
    if sent:
        out.note(
            f"Note: {sum(sent.values())} post(s) already sent or being sent are left as they are ("
            + ", ".join(f"{n} {status}" for status, n in sorted(sent.items()))
            + ")"
        )
    for notice in plan.notices:
        out.note(f"Note: {inert(notice)}")
    for problem in plan.errors:
        out.note(f"Error: {inert(problem)}")
    to = "" if verb["create"].startswith("would ") else "to "  # "2 would create" (a dry run), "2 to create"
    summary = (
        f"{len(plan.create)} {to}{verb['create']}, {len(plan.update)} {to}{verb['update']}, "
        f"{len(plan.cancel)} {to}{verb['cancel']}, {len(plan.unchanged)} unchanged"
    )
    out.line(
        f"Plan for set {inert(repr(plan.set_name))}: {summary}"
        + (f"; {len(plan.errors)} error(s)" if plan.errors else "")
        + ("." if plan.pending else " — nothing to do.")
    )


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "\u2026")


def _when(instant: Any) -> str:
    # deferred: recipes.plan costs ~101 ms of start-up, paid only by the commands that use it
    from recipes.plan import iso

    return short_time(iso(instant)) if instant is not None else "-"


def _targets(targets: Any) -> str:
    # deferred: recipes.plan costs ~68 ms of start-up, paid only by the commands that use it
    from recipes.plan import target_key

    return ", ".join(p if c is None else f"{p}:{c}" for p, c in (target_key(t) for t in targets))


@recipes_group.command("plan")
@_path_argument
@click.option(
    "--prune",
    is_flag=True,
    help="Also plan to cancel this set's scheduled posts whose occurrence is gone from the files.",
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 when changes are pending (0: none, 1: error), as terraform plan does.",
)
@_strict_option
@_set_option
@time_options
@api_command
def recipes_plan(
    path: str, prune: bool, detailed_exitcode: bool, strict: bool, set_name: str | None, out: Output
) -> None:
    """Show what `apply` would do: the diff between the files at PATH (a folder or one file) and the backend.

    \b
    One item per occurrence (a series of 12 is 12 items): create, update (with the fields that
    differ), unchanged, cancel (--prune). Occurrences in the past are skipped, never created.

    \b
    Examples:
      socialpub recipes plan recipes/examples
      socialpub recipes plan recipes/examples --prune --json | jq '.update[] | {entry, changes}'
      socialpub recipes plan recipes/examples --detailed-exitcode; [ $? = 2 ] && echo changes pending
    """
    # deferred: recipes.runner costs ~83 ms of start-up, paid only by the commands that use it
    from recipes.runner import account_problems, make_plan

    loaded = _load(path, set_name)
    client = get_client(worker=False)
    plan = make_plan(client, loaded, _store(client), prune=prune, whole_set=Path(path).is_dir())
    plan.errors.extend(account_problems(client, plan))
    if strict:
        plan.strict()
    out.emit(plan.to_json(), lambda: _show_plan(out, plan))
    if plan.errors:
        raise SystemExit(1)
    if detailed_exitcode and plan.pending:
        raise SystemExit(2)


@recipes_group.command("apply")
@_path_argument
@click.option(
    "--prune",
    is_flag=True,
    help="Cancel this set's scheduled posts whose occurrence is gone from the "
    "files (never a post made by hand or by another set; never one sent).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be done (the plan) and change nothing (no generation is made).",
)
@click.option(
    "--generate-timeout",
    type=click.FloatRange(1, None),
    default=900,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for each `generate:` generation to complete (embedded: one "
    "still in production then stops with the command).",
)
@_strict_option
@_set_option
@time_options
@api_command
def recipes_apply(
    path: str,
    prune: bool,
    dry_run: bool,
    generate_timeout: float,
    strict: bool,
    set_name: str | None,
    out: Output,
) -> None:
    """Make the backend match the files at PATH: upload media once, create, update, and with --prune cancel.

    \b
    Applying twice creates nothing twice (each post's idempotency key derives from its occurrence).
    Each file is applied all-or-nothing: on a failure midway, what this run did to the file is undone and
    the summary says what was and was not applied. Exit 1 if anything failed.

    \b
    Examples:
      socialpub recipes apply recipes/examples
      socialpub recipes apply ~/content --prune --json | jq .summary
      crontab:  */10 * * * *  SOCIALPUB_DATA_DIR=/srv/pub /opt/socialpub/bin/socialpub recipes apply /srv/content && /opt/socialpub/bin/socialpub tick
    """
    # deferred: recipes.apply costs ~69 ms of start-up, paid only by the commands that use it
    from recipes.apply import Applier

    # deferred: recipes.runner costs ~76 ms of start-up, paid only by the commands that use it
    from recipes.runner import account_problems, make_plan

    loaded = _load(path, set_name)
    # `generate:` needs a worker to make the files: on the embedded backend it runs in this command, as for
    # `socialpub gen create` (it also sends what is due meanwhile, as `watch` does)
    generates = not dry_run and any(o.generate is not None for o in loaded.occurrences)
    client = get_client(worker=generates)
    store = _store(client)
    plan = make_plan(client, loaded, store, prune=prune, whole_set=Path(path).is_dir())
    if strict:
        plan.strict()
    if dry_run:
        plan.errors.extend(account_problems(client, plan))
        out.emit(
            plan.to_json(),
            lambda: _show_plan(
                out, plan, verb={"create": "would create", "update": "would update", "cancel": "would cancel"}
            ),
        )
        raise SystemExit(1 if plan.errors else 0)
    total = len(plan.create) + len(plan.update) + len(plan.cancel)
    bar = None
    if out.err_tty and not out.json and total:
        bar = click.progressbar(
            length=total, label="applying", file=click.get_text_stream("stderr"), show_pos=True
        )
        bar.__enter__()
    try:
        result = Applier(
            client,
            store,
            on_action=(lambda a: bar.update(1)) if bar else None,
            on_generation=_generation_progress(out),
            generate_timeout=generate_timeout,
        ).apply(plan)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    out.emit(result.to_json(), lambda: _show_result(out, result))
    if not result.ok:
        raise SystemExit(1)


def _generation_progress(out: Output) -> Any:
    """On a terminal (not --json): a line on stderr each time a generation changes state."""
    if out.json or not out.err_tty:
        return None
    seen: dict[str, str] = {}

    def show(item: Any, g: Any) -> None:
        if seen.get(g.id) != g.status:
            seen[g.id] = g.status
            click.echo(f"generation {g.id} for {inert(item.label())}: {g.status}", err=True)

    return show


def _show_result(out: Output, result: Any) -> None:
    for f in result.files:
        if f.status in ("failed", "invalid"):
            out.note(f"Error: {inert(f.file)}: {inert(f.summary())}")
            for p in f.problems:
                out.note(f"  {inert(p)}")
            for a in f.actions:
                if a.status not in ("done", "existing"):
                    out.note(
                        f"  {a.kind} {inert(a.item.label())}: {a.status.replace('_', ' ')}"
                        + (f" — {inert(a.error)}" if a.error else "")
                    )
        else:
            n = sum(a.status in ("done", "existing") for a in f.actions)
            out.line(f"{inert(f.file)}: {n} change(s) applied")
    for notice in result.plan.notices:
        out.note(f"Note: {inert(notice)}")
    for problem in result.plan.errors:
        out.note(f"Error: {inert(problem)}")
    c = result.counts()
    unread = set(result.unread())  # files not valid: nothing applied; counted once, in filesFailed
    elsewhere = [p for p in result.plan.errors if p.file not in unread]  # e.g. --strict's, in applied files
    out.line(
        f"Applied set {inert(repr(result.plan.set_name))}: {c['created']} created, {c['updated']} updated, "
        f"{c['cancelled']} cancelled, {c['unchanged']} unchanged; media {c['mediaUploaded']} uploaded, "
        f"{c['mediaReused']} reused"
        + (f"; {c['filesFailed']} file(s) failed" if c["filesFailed"] else "")
        + (f" ({len(unread)} not valid: nothing applied)" if unread else "")
        + (f"; {len(elsewhere)} error(s) in applied files" if elsewhere else "")
        + "."
    )


@recipes_group.command("watch")
@_path_argument
@click.option(
    "--prune",
    is_flag=True,
    help="Apply deletions: cancel the scheduled posts of entries or files "
    "removed while watching (without it they are kept, and said so).",
)
@click.option(
    "--debounce-ms",
    type=click.IntRange(10, 10_000),
    default=50,
    show_default=True,
    help="Quiet time that ends a burst of changes (applied together).",
)
@_set_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object a line (time, event, message, and for an "
    "action its item: file, entry, key, scheduledAt, postId).",
)
@time_options
def recipes_watch(path: str, prune: bool, debounce_ms: int, set_name: str | None, as_json: bool) -> None:
    """Keep the folder PATH applied: plan and apply each change as files are written, logging each action.

    \b
    Broken YAML is reported and its last good state kept until it is fixed; media added after the YAML
    that names them are picked up; deletions are applied only with --prune. The embedded backend's worker
    runs in this process, so posts also go out at their time while it runs. Ctrl-C stops it.

    \b
    Examples:
      socialpub recipes watch ~/content --prune
      socialpub recipes watch ~/content --json | jq -r 'select(.event == "created") | .postId'
    """
    import signal
    import threading

    # deferred: recipes.watch costs ~88 ms of start-up, paid only by the commands that use it
    from recipes.watch import Watcher

    root = Path(path)
    if not root.is_dir():
        raise click.BadParameter("watch needs a folder", param_hint="PATH")
    _check_set(root, set_name)
    zone = recipe_zone()
    out = Output(as_json)
    try:
        client = get_client(worker=True)
        watcher = Watcher(
            root.resolve(),
            client,
            _store(client),
            set_name=set_name,
            default_zone=zone,
            shown_zone=display_zone().tz,
            prune=prune,
            log=lambda line: click.echo(line),
            step_ms=debounce_ms,
            json_lines=as_json,
        )
    except Exception as err:  # noqa: BLE001 - ApiError/ConfigError: exit 1 with the message
        out.fail(err, 1)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if stop.is_set():  # a second Ctrl-C: stop now, even in the middle of a request
            raise KeyboardInterrupt
        stop.set()  # the change being applied is finished first

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        watcher.run(stop)
    except KeyboardInterrupt:
        pass
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    watcher.emit("stopped", "stopped")
    if watcher.folder_gone:
        raise SystemExit(1)

"""`socialpub recipes`: a folder of YAML and media is the source of truth for what gets published when.

Commands (exit 0 on success, 1 on any error; `plan --detailed-exitcode` exits 2 when changes are pending):
validate and schema read files only (recipes.load, recipes.schema); plan, apply and watch speak /v1 through the
client (recipes.plan, recipes.apply, recipes.watch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from socialpub_tui.cli._common import (
    Output,
    api_command,
    get_client,
    profile_name,
    reading_zone,
    short_time,
    time_options,
)


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


# ---- plan, apply, watch: against the backend (recipes.plan, recipes.apply, recipes.watch) ----------------

def _load(path: str, set_name: str | None) -> Any:
    """recipes.load on PATH, in the zone the CLI reads wall times in (the profile's `timezone`, else the
    system's) for files that name none."""
    from recipes.load import load

    return load(Path(path), set_name=set_name, default_zone=reading_zone(None))


def _store(client: Any) -> Any:
    """The media store: the state file of the chosen profile's data dir (recipes.media.state_path)."""
    from recipes.media import Hasher, MediaState, MediaStore, state_path
    from socialpub_tui.client.config import resolve_profile

    profile = resolve_profile(profile_name())
    return MediaStore(client, MediaState.load(state_path(profile)), Hasher())


def _path_argument(fn: Any) -> Any:
    return click.argument("path", type=click.Path(exists=True, file_okay=True, dir_okay=True))(fn)


def _set_option(fn: Any) -> Any:
    return click.option("--set", "set_name", default=None, metavar="NAME",
                        help="The recipe set's name (default: the folder's name). Posts carry it as the label "
                             "socialpub.recipe/set: prune never touches another set's posts.")(fn)


def _show_plan(out: Output, plan: Any, *, verb: dict[str, str] | None = None) -> None:
    """A plan for people: one line per change, the unchanged counted, notices and errors, a closing count."""
    verb = verb or {"create": "create", "update": "update", "cancel": "cancel"}
    rows = []
    for item in plan.create:
        note = f"replaces {item.replaces} ({', '.join(item.changes)})" if item.replaces else ""
        rows.append((out.style("+ " + verb["create"], fg="green"), item.label(), _when(item.scheduled_at),
                     _targets(item.targets), note))
    for item in plan.update:
        changed = ", ".join(item.changes)
        if "scheduledAt" in item.changes:
            changed += f" (was {short_time(item.before.get('scheduledAt'))})"
        rows.append((out.style("~ " + verb["update"], fg="yellow"), item.label(), _when(item.scheduled_at),
                     item.post_id, changed))
    for item in plan.cancel:
        why = "targets changed: replaced" if item.reason == "targets_changed" else "gone from the files"
        rows.append((out.style("- " + verb["cancel"], fg="red"), item.label(), _when(item.scheduled_at),
                     item.post_id, why))
    if rows:
        out.table(rows, ["", "OCCURRENCE", "WHEN", "POST / TARGETS", "CHANGES"])
    for item in plan.unchanged:
        if item.reason and item.reason not in ("scheduled", "past"):
            out.note(f"{item.label()}: post {item.post_id} is {item.reason}; left as it is")
    for notice in plan.notices:
        out.note(f"Note: {notice}")
    for problem in plan.errors:
        out.note(f"Error: {problem}")
    summary = (f"{len(plan.create)} to {verb['create']}, {len(plan.update)} to {verb['update']}, "
               f"{len(plan.cancel)} to {verb['cancel']}, {len(plan.unchanged)} unchanged")
    out.line(f"Plan for set {plan.set_name!r}: {summary}" + (f"; {len(plan.errors)} error(s)" if plan.errors else "")
             + ("." if plan.pending else " — nothing to do."))


def _when(instant: Any) -> str:
    from recipes.plan import iso

    return short_time(iso(instant)) if instant is not None else "-"


def _targets(targets: Any) -> str:
    from recipes.plan import target_key

    return ", ".join(p if c is None else f"{p}:{c}" for p, c in (target_key(t) for t in targets))


@recipes_group.command("plan")
@_path_argument
@click.option("--prune", is_flag=True, help="Also plan to cancel this set's scheduled posts whose occurrence is "
                                            "gone from the files.")
@click.option("--detailed-exitcode", is_flag=True, help="Exit 2 when changes are pending (0: none, 1: error), "
                                                        "as terraform plan does.")
@_set_option
@time_options
@api_command
def recipes_plan(path: str, prune: bool, detailed_exitcode: bool, set_name: str | None, out: Output) -> None:
    """Show what `apply` would do: the diff between the files at PATH (a folder or one file) and the backend.

    \b
    One item per occurrence (a series of 12 is 12 items): create, update (with the fields that
    differ), unchanged, cancel (--prune). Occurrences in the past are skipped, never created.

    \b
    Examples:
      socialpub recipes plan recipes/examples
      socialpub recipes plan recipes/examples --prune --json | jq '.update[] | {entry, changes}'
      socialpub recipes plan recipes/examples --detailed-exitcode || [ $? = 2 ] && echo changes pending
    """
    from recipes.runner import make_plan

    loaded = _load(path, set_name)
    client = get_client(worker=False)
    plan = make_plan(client, loaded, _store(client), prune=prune, whole_set=Path(path).is_dir())
    out.emit(plan.to_json(), lambda: _show_plan(out, plan))
    if plan.errors:
        raise SystemExit(1)
    if detailed_exitcode and plan.pending:
        raise SystemExit(2)


@recipes_group.command("apply")
@_path_argument
@click.option("--prune", is_flag=True, help="Cancel this set's scheduled posts whose occurrence is gone from the "
                                            "files (never a post made by hand or by another set; never one sent).")
@click.option("--dry-run", is_flag=True, help="Show what would be done (the plan) and change nothing.")
@_set_option
@time_options
@api_command
def recipes_apply(path: str, prune: bool, dry_run: bool, set_name: str | None, out: Output) -> None:
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
    from recipes.apply import Applier
    from recipes.runner import make_plan

    loaded = _load(path, set_name)
    client = get_client(worker=False)
    store = _store(client)
    plan = make_plan(client, loaded, store, prune=prune, whole_set=Path(path).is_dir())
    if dry_run:
        out.emit(plan.to_json(), lambda: _show_plan(out, plan, verb={"create": "would create",
                                                                    "update": "would update",
                                                                    "cancel": "would cancel"}))
        raise SystemExit(1 if plan.errors else 0)
    total = len(plan.create) + len(plan.update) + len(plan.cancel)
    bar = None
    if out.err_tty and not out.json and total:
        bar = click.progressbar(length=total, label="applying", file=click.get_text_stream("stderr"),
                                show_pos=True)
        bar.__enter__()
    try:
        result = Applier(client, store, on_action=(lambda a: bar.update(1)) if bar else None).apply(plan)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    out.emit(result.to_json(), lambda: _show_result(out, result))
    if not result.ok:
        raise SystemExit(1)


def _show_result(out: Output, result: Any) -> None:
    for f in result.files:
        if f.status in ("failed", "invalid"):
            out.note(f"Error: {f.file}: {f.summary()}")
            for p in f.problems:
                out.note(f"  {p}")
            for a in f.actions:
                if a.status not in ("done", "existing"):
                    out.note(f"  {a.kind} {a.item.label()}: {a.status.replace('_', ' ')}"
                             + (f" — {a.error}" if a.error else ""))
        else:
            n = sum(a.status in ("done", "existing") for a in f.actions)
            out.line(f"{f.file}: {n} change(s) applied")
    for notice in result.plan.notices:
        out.note(f"Note: {notice}")
    for problem in result.plan.errors:
        out.note(f"Error: {problem}")
    c = result.counts()
    out.line(f"Applied set {result.plan.set_name!r}: {c['created']} created, {c['updated']} updated, "
             f"{c['cancelled']} cancelled, {c['unchanged']} unchanged; media {c['mediaUploaded']} uploaded, "
             f"{c['mediaReused']} reused" + (f"; {c['filesFailed']} file(s) failed" if c["filesFailed"] else "")
             + (f"; {len(result.plan.errors)} file error(s)" if result.plan.errors else "") + ".")


@recipes_group.command("watch")
@_path_argument
@click.option("--prune", is_flag=True, help="Apply deletions: cancel the scheduled posts of entries or files "
                                            "removed while watching (without it they are kept, and said so).")
@click.option("--debounce-ms", type=click.IntRange(10, 10_000), default=50, show_default=True,
              help="Quiet time that ends a burst of changes (applied together).")
@_set_option
def recipes_watch(path: str, prune: bool, debounce_ms: int, set_name: str | None) -> None:
    """Keep the folder PATH applied: plan and apply each change as files are written, logging each action.

    \b
    Broken YAML is reported and its last good state kept until it is fixed; media added after the YAML
    that names them are picked up; deletions are applied only with --prune. The embedded backend's worker
    runs in this process, so posts also go out at their time while it runs. Ctrl-C stops it.

    \b
    Example:
      socialpub recipes watch ~/content --prune
    """
    import signal
    import threading

    from recipes.load import load
    from recipes.watch import Watcher

    root = Path(path)
    if not root.is_dir():
        raise click.BadParameter("watch needs a folder", param_hint="PATH")
    zone = reading_zone(None)
    out = Output(False)
    try:
        client = get_client(worker=True)
        watcher = Watcher(root.resolve(), client, _store(client), lambda p: load(p, set_name=set_name, default_zone=zone),
                          prune=prune, log=lambda line: click.echo(line), step_ms=debounce_ms)
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
    watcher.emit("stopped")

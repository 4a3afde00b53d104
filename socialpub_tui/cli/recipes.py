"""`socialpub recipes`: a folder of YAML and media is the source of truth for what gets published when.

Commands (exit 0 on success, 1 on any error; `plan --detailed-exitcode` exits 2 when changes are pending):
validate and schema read files only (recipes.load, recipes.schema); plan, apply and watch speak /v1 through the
client (recipes.plan, recipes.apply, recipes.watch).
"""

from __future__ import annotations

from pathlib import Path

import click


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
    from socialpub_tui import times
    from socialpub_tui.cli._common import _configured_zone

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
@click.option("--set", "set_name", metavar="NAME",
              help="The recipe set's name (default: the folder's name); it is part of every occurrence's key.")
@click.option("--json", "as_json", is_flag=True,
              help='Print one JSON document: {"files", "occurrences", "errors": [{file, line, column, message, '
                   'code}]}.')
def validate_command(path: Path, set_name: str | None, as_json: bool) -> None:
    """Check recipe files: every error of every file, with its line and column. Nothing is sent.

    PATH is a YAML file or a folder (every *.yaml / *.yml under it, hidden folders skipped). Local times are
    read in each file's `timezone:`, else the profile's `timezone`, else the system's zone. Exit 0 when
    everything is valid, 1 on any error.

    \b
    Examples:
      socialpub recipes validate recipes/examples
      socialpub recipes validate recipes/examples/launch.yaml --json
    """
    from socialpub_tui.cli._common import Output

    out = Output(as_json)
    zone = recipe_zone()
    from recipes.load import check_set_name, load

    if set_name is not None:
        try:
            check_set_name(set_name)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--set") from None
    loaded = load(path, set_name=set_name, default_zone=zone)
    single = not path.is_dir()
    files = [str(path) if single else f.file for f in loaded.files]
    errors = [{"file": p.file, "line": p.line, "column": p.column, "message": p.message, "code": p.code}
              for p in loaded.problems]
    if not loaded.files:
        errors.append({"file": str(path), "line": 0, "column": 0, "code": "no_recipe_files",
                       "message": "no *.yaml or *.yml file here (hidden folders are skipped)"})
    count = len(loaded.occurrences)

    def human() -> None:
        for p in loaded.problems:
            click.echo(str(p))
        if not loaded.files:
            click.echo(f"{path}: no *.yaml or *.yml file here (hidden folders are skipped)")
        bad = sum(1 for f in loaded.files if not f.ok)
        summary = f"{_plural(len(loaded.files), 'file')}, {_plural(count, 'occurrence')}"
        if errors:
            summary += f": {_plural(len(errors), 'error')}" + (f" in {_plural(bad, 'file')}" if bad else "")
        else:
            summary += f" (set {loaded.set_name}): valid"
        click.echo(out.style(summary, fg="red" if errors else "green"))

    out.emit({"files": files, "occurrences": count, "errors": errors}, human)
    if errors:
        raise SystemExit(1)


@recipes_group.command("schema")
@click.option("--json", "as_json", is_flag=True, help="The same JSON Schema (it is always one JSON document).")
def schema_command(as_json: bool) -> None:
    """Print the JSON Schema of a recipe file, for editors that complete and check YAML.

    \b
    Examples:
      socialpub recipes schema > recipe.schema.json
      # then, first line of a recipe: # yaml-language-server: $schema=./recipe.schema.json
    """
    import json

    from recipes.schema import json_schema

    click.echo(json.dumps(json_schema(), indent=2, ensure_ascii=False))


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"



# ---- plan, apply, watch: against the backend (recipes.plan, recipes.apply, recipes.watch) ----------------

"""`socialpub recipes`: a folder of YAML and media is the source of truth for what gets published when.

Commands (exit 0 on success, 1 on any error; `plan --detailed-exitcode` exits 2 when changes are pending):
validate and schema read files only (recipes.load, recipes.schema); plan, apply and watch speak /v1 through the
client (recipes.plan, recipes.apply, recipes.watch).
"""

from __future__ import annotations

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


# ---- plan, apply, watch: against the backend (recipes.plan, recipes.apply, recipes.watch) ----------------

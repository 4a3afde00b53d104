"""Every built-in network's fidelity table (the `## Fidelity` section of its package page, issues 29 and 32) is
complete: every rule has a source (a vendor's page, or says **belief**) and a date it was read, names where the
adapter and the emulator implement it — references that exist — and a test that exists.

One test for every network the registry lists, so a network added as a package is checked the day it lands.
References are `module:attr` (relative to the network's package, or absolute from `backend.`), backquoted or
separated by commas; an attribute may be a class's (`emulator:Emulator.method`, or a method of a class the module
defines). A test is `tests/path.py::name`, or a bare `test_name` defined somewhere under `tests/`."""

from __future__ import annotations

import importlib
import inspect
import re
from functools import cache
from pathlib import Path

import pytest

from backend.networks import registry

ROOT = Path(__file__).resolve().parents[2]
REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
# a vendor's page, or a reference implementation's file or package (a lexicon, the reference PDS), with its date
SOURCE = re.compile(r"https://|@?[\w-]+/[\w/.-]+|reference PDS")
# a rule that follows from others in the table (no source of its own)
DERIVED = re.compile(r"consequence of|the rules above")
DATE = re.compile(r"\b2\d{3}-\d\d-\d\d\b")
COLUMNS = ("rule", "source", "adapter", "emulator", "test")


def table(page: Path) -> tuple[list[str], list[list[str]]]:
    """The header (lowercase) and rows of the page's first table under `## Fidelity`."""
    section = page.read_text(encoding="utf-8").split("## Fidelity", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip().strip("|").split(" | ")] for ln in lines]
    return [c.lower() for c in cells[0]], [c for c in cells[2:]]


def column(header: list[str], name: str) -> int:
    found = [i for i, h in enumerate(header) if h.startswith(name)]
    assert found, f"no {name!r} column in {header}"
    return found[0]


def refs(cell: str) -> list[str]:
    quoted = re.findall(r"`([^`]+)`", cell)
    items = quoted if quoted else [p.strip() for p in cell.split(",")]
    return [i for i in items if REF.match(i)]


def resolves(network: str, ref: str) -> bool:
    module_name, _sep, attr = ref.partition(":")
    full = module_name if module_name.startswith("backend.") else f"backend.networks.{network}.{module_name}"
    module = importlib.import_module(full)
    holders: list[object] = [module]
    holders += [c for _n, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == full]
    for holder in holders:
        found: object = holder
        for part in attr.split("."):
            if not hasattr(found, part):
                break
            found = getattr(found, part)
        else:
            return True
    return False


@cache
def every_test_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py"))


def names_a_test(cell: str) -> bool:
    located = re.findall(r"(tests/[\w/]+\.py)::(\w+)", cell)
    for path, name in located:
        file = ROOT / path
        if not file.is_file() or not re.search(rf"^def {name}\(", file.read_text(encoding="utf-8"), re.M):
            return False
    bare = [n for n in re.findall(r"(?<![\w:/])(test_\w+)", cell) if not n.endswith("_py")]
    for name in bare:
        if not re.search(rf"^def {name}\(", every_test_source(), re.M):
            return False
    return bool(located or bare)


BUILTINS = [n for n in registry.networks() if n.builtin]


def test_every_built_in_network_has_a_fidelity_table() -> None:
    assert len(BUILTINS) >= 8
    for network in BUILTINS:
        assert network.docs, network.name
        assert "## Fidelity" in (ROOT / network.docs).read_text(encoding="utf-8"), network.docs


@pytest.mark.parametrize("network", BUILTINS, ids=[n.name for n in BUILTINS])
def test_every_rule_has_a_source_code_that_exists_and_a_test(network: registry.Network) -> None:
    header, rows = table(ROOT / network.docs)
    rule, source, adapter, emulator, test = (column(header, c) for c in COLUMNS)
    dated_header = bool(DATE.search(header[source]))
    assert len(rows) >= 10, f"{network.docs}: {len(rows)} rules"
    for row in rows:
        assert len(row) == len(header), row
        what = row[rule][:80]
        assert row[rule], row
        cited = SOURCE.search(row[source]) and (dated_header or DATE.search(row[source]))
        assert "belief" in row[source] or DERIVED.search(row[source]) or cited, (
            f"{network.name}: no dated source and not marked belief: {what}"
        )
        named = refs(row[adapter]) + refs(row[emulator])
        assert named, f"{network.name}: neither the adapter nor the emulator named: {what}"
        for ref in named:
            assert resolves(network.name, ref), f"{network.name}: {ref} does not exist ({what})"
        assert names_a_test(row[test]), f"{network.name}: no test that exists named: {what}"


def test_every_package_page_is_linked_from_docs_networks() -> None:
    index = (ROOT / "docs/networks.md").read_text(encoding="utf-8")
    for network in BUILTINS:
        assert network.docs in index, network.docs

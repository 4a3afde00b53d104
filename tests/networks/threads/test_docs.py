"""The fidelity table of Threads's package page (issue 32) is complete: every rule has a source (a vendor's page
with the date it was read) or says belief, names where the adapter and the emulator implement it — references
that exist — and the tests that check it, which exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "backend/networks/threads/docs.md"
REF = re.compile(r"`([a-z_]+):([A-Za-z_][\w.]*)`")
TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def rows() -> list[list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("## Fidelity", 1)[1]
    lines = [ln for ln in table.splitlines() if ln.startswith("|")]
    assert lines[0].replace(" ", "") == "|rule|source|adapter|emulator|test|"
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[2:]]


def resolves(module: str, attr: str) -> bool:
    found: object = importlib.import_module(f"backend.networks.threads.{module}")
    for part in attr.split("."):
        if not hasattr(found, part):
            return False
        found = getattr(found, part)
    return True


def test_every_rule_has_a_source_references_that_exist_and_tests() -> None:
    table = rows()
    assert len(table) >= 17
    for rule, source, adapter, emulator, tests in table:
        assert rule and len([rule, source, adapter, emulator, tests]) == 5
        assert "belief" in source or ("https://" in source and re.search(r"read 2026-\d\d-\d\d", source)), (
            f"no source and not marked belief: {rule}"
        )
        refs = REF.findall(adapter) + REF.findall(emulator)
        assert refs, f"neither the adapter nor the emulator named: {rule}"
        for module, attr in refs:
            assert resolves(module, attr), f"{module}:{attr} does not exist ({rule})"
        named = TEST.findall(tests)
        assert named, f"no test named: {rule}"
        for path, name in named:
            file = ROOT / path
            assert file.is_file(), path
            assert re.search(rf"^def {name}\(", file.read_text(encoding="utf-8"), re.M), f"{path}::{name}"


def test_the_package_page_is_linked_from_docs_networks() -> None:
    assert "backend/networks/threads/docs.md" in (ROOT / "docs/networks.md").read_text(encoding="utf-8")

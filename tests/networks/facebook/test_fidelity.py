"""The fidelity tables of Facebook and Instagram (issue 29 item 1) are complete: every rule names its source (a
vendor URL with the date read, or **belief**), the adapter and emulator code that implement it (existing
`module:attr` references, or "—") and an existing test."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGES = ["backend/networks/facebook/docs.md", "backend/networks/instagram/docs.md"]
HEADER = ["rule", "source", "adapter", "emulator", "test"]


def rows(page: str) -> list[list[str]]:
    text = (ROOT / page).read_text()
    table = text.split("## Fidelity", 1)[1]
    lines = [ln for ln in table.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines]
    assert cells[0] == HEADER, cells[0]
    return [c for c in cells[2:]]


def resolves(ref: str) -> bool:
    module, _sep, attr = ref.partition(":")
    found: object = importlib.import_module(module)
    for part in attr.split("."):
        if not hasattr(found, part):
            return False
        found = getattr(found, part)
    return True


def names_a_test(path: str) -> bool:
    file, _sep, name = path.partition("::")
    src = ROOT / file
    return src.is_file() and re.search(rf"^def {re.escape(name)}\(", src.read_text(), re.M) is not None


@pytest.mark.parametrize("page", PAGES)
def test_every_rule_has_a_source_code_and_a_test(page: str) -> None:
    table = rows(page)
    assert len(table) >= 10
    for rule, source, adapter, emulator, test in table:
        assert len(cells := [rule, source, adapter, emulator, test]) == 5, cells
        assert "**belief**" in source or re.search(r"https://\S+ \(read \d{4}-\d{2}-\d{2}", source), (
            rule,
            source,
        )
        assert adapter != "—" or emulator != "—", rule  # a rule lives somewhere
        for ref in (adapter, emulator):
            assert ref == "—" or resolves(ref), (rule, ref)
        assert names_a_test(test), (rule, test)

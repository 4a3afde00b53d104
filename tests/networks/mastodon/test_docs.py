"""The fidelity table of backend/networks/mastodon/docs.md is complete: every row has a source with the date read
or says **belief**, names functions that exist in the package, and a test that exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "backend" / "networks" / "mastodon" / "docs.md"
TESTS = list((ROOT / "tests" / "networks" / "mastodon").glob("test_*.py"))


def rows() -> list[list[str]]:
    text = DOC.read_text().split("## Fidelity", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---") and not line.startswith("| rule "):
            out.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return out


def resolves(ref: str) -> bool:
    module, _sep, attr = ref.partition(":")
    found: object = importlib.import_module(f"backend.networks.mastodon.{module}")
    for part in attr.split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return True


def test_every_rule_has_a_source_code_and_a_test() -> None:
    table = rows()
    assert len(table) >= 20
    tests = "\n".join(p.read_text() for p in TESTS)
    for row in table:
        assert len(row) == 5, row
        rule, source, adapter, emulator, test = row
        assert re.search(r"\(2026-\d\d-\d\d\)|\*\*belief\*\*", source), rule
        for cell in (adapter, emulator):
            for ref in [r.strip() for r in cell.split(",")]:
                assert ref == "—" or resolves(ref), (rule, ref)
        assert adapter != "—", rule
        assert re.search(rf"def {re.escape(test)}\(", tests), (rule, test)

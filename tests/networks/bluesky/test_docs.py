"""The fidelity table of backend/networks/bluesky/docs.md is complete: every row has a source (a URL or the
reference PDS, with the date read) or says **belief**, names functions that exist in the package, and a test that
exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "backend" / "networks" / "bluesky" / "docs.md"
TESTS = [
    *(ROOT / "tests" / "networks" / "bluesky").glob("test_*.py"),
    ROOT / "tests" / "api" / "test_bluesky.py",
]


def rows() -> list[list[str]]:
    text = DOC.read_text().split("## Fidelity", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---") and not line.startswith("| rule "):
            out.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return out


def resolves(ref: str) -> bool:
    module, _sep, attr = ref.partition(":")
    mod = importlib.import_module(f"backend.networks.bluesky.{module}")
    holders = [mod] + ([mod.BlueskyEmulator] if module == "emulator" else [])
    for holder in holders:
        found = holder
        for part in attr.split("."):
            found = getattr(found, part, None)
            if found is None:
                break
        if found is not None:
            return True
    return False


def test_every_rule_has_a_source_code_and_a_test() -> None:
    table = rows()
    assert len(table) >= 30
    tests = "\n".join(p.read_text() for p in TESTS)
    for rule, source, adapter, emulator, test in table:
        assert re.search(r"\(2026-\d\d-\d\d\)|\*\*belief\*\*|socialpub worker", source), rule
        for cell in (adapter, emulator):
            for ref in [r.strip() for r in cell.split(",")]:
                assert ref == "—" or resolves(ref), (rule, ref)
        assert adapter != "—", rule
        assert re.search(rf"def {re.escape(test)}\(", tests), (rule, test)

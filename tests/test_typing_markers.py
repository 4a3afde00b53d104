"""Every `# type: ignore` in the product's code names its error code and says why, after it
(`# type: ignore[attr-defined]  # peewee: …`), issue 31: a marker that hides an error must say which and why."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("backend", "socialpub_tui", "recipes")
MARKER = re.compile(r"#\s*type:\s*ignore")
WITH_REASON = re.compile(r"#\s*type:\s*ignore\[[a-z-]+(,\s*[a-z-]+)*\]\s+#\s*\S")


def without_reason() -> Counter[str]:
    found: Counter[str] = Counter()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for line in path.read_text(encoding="utf-8").splitlines():
                if MARKER.search(line) and not WITH_REASON.search(line):
                    found[str(path.relative_to(ROOT))] += 1
    return found


def test_every_type_ignore_names_its_code_and_reason() -> None:
    found = without_reason()
    assert not found, f"type: ignore without [code] and a reason after it (file: count): {dict(found)}"

"""Every `# type: ignore` in the product's code names its error code and says why, after it
(`# type: ignore[attr-defined]  # peewee: …`), issue 31: a marker that hides an error must say which and why.

Markers older than the rule are counted per file in OLDER; the count only shrinks (give the marker its reason, or
fix the type and drop it)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("backend", "socialpub_tui", "recipes")
MARKER = re.compile(r"#\s*type:\s*ignore")
WITH_REASON = re.compile(r"#\s*type:\s*ignore\[[a-z-]+(,\s*[a-z-]+)*\]\s+#\s*\S")

OLDER: dict[str, int] = {
    "backend/jobs/housekeeping.py": 1,
    "backend/jobs/worker.py": 1,
}


def without_reason() -> Counter[str]:
    found: Counter[str] = Counter()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for line in path.read_text(encoding="utf-8").splitlines():
                if MARKER.search(line) and not WITH_REASON.search(line):
                    found[str(path.relative_to(ROOT))] += 1
    return found


def test_every_type_ignore_names_its_code_and_reason() -> None:
    now = without_reason()
    grown = {f: (n, OLDER.get(f, 0)) for f, n in now.items() if n > OLDER.get(f, 0)}
    assert not grown, f"type: ignore without [code] and a reason after it (file: now, allowed): {grown}"


def test_the_older_markers_only_shrink() -> None:
    now = without_reason()
    shrunk = {f: (now[f], n) for f, n in OLDER.items() if now[f] < n}
    assert not shrunk, f"fewer markers without a reason than OLDER lists: bring OLDER down {shrunk}"

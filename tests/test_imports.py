"""The import graph says what depends on what: no module imports another that imports it back (an import cycle,
even one kept from failing by an import inside a function), and an import of the project's own modules inside a
function is there only to defer a start-up cost, marked `deferred` at its site.

Imports inside functions that predate the rule are listed, per module, in tests/support/in_function_imports.txt:
a new unmarked one fails here, and so does one removed without the list being brought down (the list only
shrinks). Mark one kept for a measured start-up cost with a comment containing `deferred` and what it defers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.support.imports import PACKAGES, cycles, unique_local_imports

BASELINE = Path(__file__).parent / "support" / "in_function_imports.txt"


def test_no_import_cycle():
    """No two modules import each other, directly or around a circle (imports inside functions and under
    TYPE_CHECKING count): a shared piece belongs in a room below both."""
    assert cycles() == [], f"import cycles: {cycles()}"


def _baseline() -> Counter[str]:
    out: Counter[str] = Counter()
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            module, count = line.split()
            out[module] = int(count)
    return out


def _unmarked() -> Counter[str]:
    return Counter(i.module for p in PACKAGES for i in unique_local_imports(p) if not i.marked)


def test_no_new_unmarked_import_inside_a_function():
    now, before = _unmarked(), _baseline()
    grown = {m: (n, before[m]) for m, n in now.items() if n > before[m]}
    assert not grown, (
        "imports of the project's own modules inside functions (module: now, listed): move each to the module's "
        f"header, or mark it `deferred` with what it defers if it defers a measured start-up cost: {grown}"
    )


def test_the_list_of_unmarked_imports_only_shrinks():
    now, before = _unmarked(), _baseline()
    shrunk = {m: (now[m], n) for m, n in before.items() if now[m] < n}
    assert not shrunk, (
        f"fewer unmarked in-function imports than listed (module: now, listed): update {BASELINE.name}"
    )

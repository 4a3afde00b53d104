"""The import graph says what depends on what: no module imports another that imports it back (an import cycle,
even one kept from failing by an import inside a function), and an import of the project's own modules inside a
function is there only to defer a start-up cost, marked `deferred` at its site.

Every one of those is marked: a comment containing `deferred` and what it defers, at its site."""

from __future__ import annotations

from collections import Counter

from tests.support.imports import PACKAGES, cycles, unique_local_imports


def test_no_import_cycle():
    """No two modules import each other, directly or around a circle (imports inside functions and under
    TYPE_CHECKING count): a shared piece belongs in a room below both."""
    assert cycles() == [], f"import cycles: {cycles()}"


def _unmarked() -> Counter[str]:
    return Counter(i.module for p in PACKAGES for i in unique_local_imports(p) if not i.marked)


def test_every_import_inside_a_function_is_marked():
    unmarked = _unmarked()
    assert not unmarked, (
        "imports of the project's own modules inside functions (module: count): move each to the module's header, "
        f"or mark it `deferred` with what it defers if it defers a measured start-up cost: {dict(unmarked)}"
    )

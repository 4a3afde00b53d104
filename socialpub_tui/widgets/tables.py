"""The row tables of the TUI (RowTable), and filling a DataTable whose cells were clipped to the terminal's width:
the columns are rebuilt with the widths of what they hold.

A DataTable's auto-width column only ever widens (its width is measured after the rows are added, on the next
idle, as the max of everything it held), and a row drawn before that measure keeps its drawing: after the terminal
shrank, the table would scroll sideways or show cut columns. Fixed widths, computed here from the cells, draw right
at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

Cell = str | Text


class RowTable(DataTable):  # type: ignore[type-arg]  # DataTable's row key type is left to Textual's default
    """A DataTable whose cursor is a row: `home` and `end` go to the first and the last row (DataTable's own scroll
    sideways to the first and last column, which a row cursor does not have: they did nothing)."""

    BINDINGS = [
        Binding("home", "scroll_top", "First row", id="table.first", show=False),
        Binding("end", "scroll_bottom", "Last row", id="table.last", show=False),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", **kwargs)  # type: ignore[arg-type]  # Textual's widget keywords (id, classes, …) passed through


def fill(table: DataTable, columns: Sequence[str], rows: Sequence[tuple[str, Sequence[Cell]]]) -> None:
    """Empty `table` (its columns too) and add `rows` ((key, cells)); each column as wide as its label plus one
    space, or its widest cell (the cells end with their own space: cell_padding=0). Give user and network text
    through `inert` (socialpub_tui.look): a cell shows what it is given."""
    labels = [name + " " for name in columns]
    widths = [cell_len(label) for label in labels]
    # a str cell is plain text (a DataTable would read it as markup: a name or URL holding `[@click=…]`)
    texts = [(key, [Text(cell) if isinstance(cell, str) else cell for cell in cells]) for key, cells in rows]
    for _, cells in texts:
        for i, cell in enumerate(cells):
            widths[i] = max(widths[i], cell.cell_len)
    table.clear(columns=True)
    for name, label, width in zip(columns, labels, widths, strict=True):
        table.add_column(label, key=name, width=width)
    for key, cells in texts:
        table.add_row(*cells, key=key)

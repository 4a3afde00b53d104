"""Bindings shared by the screens: a key whose action the state may not allow says why when pressed."""

from __future__ import annotations

from textual.binding import Binding


def explained(key: str, action: str, description: str, binding_id: str) -> list[Binding]:
    """A key whose action the state may not allow: the action's binding (shown, dimmed when not allowed), then a
    hidden one on the same key that says why (`explain`). Textual runs the first binding of a key whose action
    check_action allows, and the footer shows the first binding of a key: the action's. The screen implements
    `check_action` (None for the action when not allowed; True for `explain` then) and `action_explain`."""
    return [
        Binding(key, action, description, id=binding_id),
        Binding(key, f"explain('{action}')", description, show=False, id=f"{binding_id}.why"),
    ]

"""A network's `options` in the compose screen, built from the JSON Schema GET /v1/networks gives for it (the
network's own options model on the server): so a network the front end has never heard of — a plugin's — gets its
form too. One widget per property, in the schema's order, booleans together on one line:

    a value among an enum     Select (labels from `x-labels`; blank allowed when the value may be null)
    a boolean                 Checkbox (with `x-allow`, the inverse: a box "Allow X", unticked by default; ticked
                              sends false — the option disables X — unticked sends nothing, the server's default)
    booleans of an `x-group`  under a toggle of their own (the schema's `x-groups`: its title), off by default; once
                              on, its boxes show, one must be ticked (`requireOne` says so) and each ticked one's
                              `x-note` (the later one's) is said; off, none is sent
    a string, a number        Input
    a list of strings         Input, comma separated

Each widget's id is `<network>-<property>` (the wire's camelCase name), its title the property's `title`.
`values()` gives the options as sent (only what was set, plus the non-null defaults); `fill(options)` puts a
post's options back. A property of another shape is left to the API (not shown).

`apply_choices(found, failure)`: what the targeted accounts' network says their creator may choose now (GET
/v1/accounts/{id}/choices): a list narrowed to the values allowed (nothing pre-selected), a box the creator's
settings turned off shown disabled and unticked, the creator's name, the network's notes and its consent
sentence in the form's note line (`<network>-choices`). With several accounts of one network: the values all
allow, a box locked when any locks it. When they could not be read: the schema's values, and a note saying so.
A ticked box's `x-consent` replaces the network's consent sentence; its `x-excludes` ({option: [values]}) are
values another option cannot take with it (`problems()` says so, as does a group without a ticked box)."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Checkbox, Collapsible, Input, Select, Static

from socialpub_tui.widgets.dropdown import Dropdown


def _branches(prop: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """The non-null branches of a property, and whether it may be null."""
    branches = prop.get("anyOf") or [prop]
    kept = [b for b in branches if b.get("type") != "null"]
    return kept, len(kept) < len(branches)


def field_kind(prop: dict[str, Any]) -> tuple[str, list[Any], bool]:
    """(kind, enum values, nullable): kind `enum`, `bool`, `text`, `number`, `list` or `` (not shown)."""
    branches, nullable = _branches(prop)
    if len(branches) != 1:
        return "", [], nullable
    b = branches[0]
    if "enum" in b:
        return "enum", list(b["enum"]), nullable
    kind = b.get("type")
    if kind == "boolean":
        return "bool", [], nullable
    if kind == "string":
        return "text", [], nullable
    if kind in ("integer", "number"):
        return "number", [], nullable
    if kind == "array" and (b.get("items") or {}).get("type") == "string":
        return "list", [], nullable
    return "", [], nullable


class OptionsForm(Collapsible):
    """The options of one network, from the JSON Schema of its `options`."""

    def __init__(self, network: str, label: str, schema: dict[str, Any]) -> None:
        self.network = network
        self.schema = schema
        self.props: dict[str, dict[str, Any]] = dict(schema.get("properties") or {})
        self.groups: dict[str, dict[str, Any]] = dict(schema.get("x-groups") or {})
        self.choice_lines: list[str] = []  # from the accounts' choices (apply_choices)
        self.consent: str | None = None
        super().__init__(
            *self._fields(),
            title=f"{label} options",
            id=f"compose-{network}",
            collapsed=False,
            classes="options",
        )

    def field_id(self, name: str) -> str:
        return f"{self.network}-{name}"

    def members(self, group: str) -> list[str]:
        return [n for n, p in self.props.items() if p.get("x-group") == group and field_kind(p)[0] == "bool"]

    def _group_widgets(self) -> list[Widget]:
        out: list[Widget] = []
        for group, spec in self.groups.items():
            members = self.members(group)
            if not members:
                continue
            boxes = Horizontal(
                *(Checkbox(str(self.props[n].get("title") or n), id=self.field_id(n)) for n in members),
                id=self.field_id(f"group-{group}-members"),
                classes="checks",
            )
            boxes.display = False
            label = Static("", id=self.field_id(f"group-{group}-note"), classes="group-note", markup=False)
            label.display = False
            out += [
                Checkbox(str(spec.get("title") or group), id=self.field_id(f"group-{group}")),
                boxes,
                label,
            ]
        return out

    def group_on(self, group: str) -> bool:
        return bool(self.query_one(f"#{self.field_id(f'group-{group}')}", Checkbox).value)

    def _grouped(self, name: str) -> str | None:
        group = self.props[name].get("x-group")
        return str(group) if group in self.groups else None

    def _fields(self) -> list[Widget]:
        widgets: list[Widget] = []
        checks: list[Widget] = []
        for name, prop in self.props.items():
            if self._grouped(name) is not None and field_kind(prop)[0] == "bool":
                continue  # under its group's toggle (_group_widgets)
            kind, values, nullable = field_kind(prop)
            title = str(prop.get("title") or name)
            if kind == "enum":
                labels = prop.get("x-labels") or {}
                default = prop.get("default")
                blank = nullable or default is None
                widgets.append(
                    Dropdown(
                        [(str(labels.get(v, v)), v) for v in values],
                        prompt=title,
                        allow_blank=blank,
                        value=Select.NULL if blank else default,
                        id=self.field_id(name),
                    )
                )
            elif kind == "bool":
                checks.append(Checkbox(str(prop.get("x-allow") or title), id=self.field_id(name)))
            elif kind in ("text", "number", "list"):
                widgets.append(Input(placeholder=title, id=self.field_id(name)))
        if checks:
            widgets.append(Horizontal(*checks, classes="checks"))
        widgets.extend(self._group_widgets())
        note = Static("", id=self.field_id("choices"), classes="choices-note", markup=False)
        note.display = False  # until the accounts' choices are read
        widgets.append(note)
        return widgets

    def _enum_options(self, name: str, values: list[Any]) -> list[tuple[str, Any]]:
        labels = self.props[name].get("x-labels") or {}
        return [(str(labels.get(v, v)), v) for v in values]

    def apply_choices(self, found: list[Any], failure: str | None = None) -> None:
        """Show what the accounts' network lets their creator choose now (`found`: the API's AccountChoices of each
        targeted account of this network), or the schema's values and `failure` when they could not be read."""
        allowed: dict[str, list[Any]] = {}
        locked: dict[str, str] = {}
        lines: list[str] = []
        for choices in found:
            if not getattr(choices, "supported", False):
                continue
            creator = getattr(choices, "creator", None)
            if creator is not None and (creator.name or creator.handle):
                who = " ".join(x for x in (creator.name, f"@{creator.handle}" if creator.handle else "") if x)
                lines.append(f"Posting as {who}")
            for f in choices.fields:
                if f.allowed is not None:
                    before = allowed.get(f.field)
                    allowed[f.field] = [
                        v for v in (before if before is not None else f.allowed) if v in f.allowed
                    ]
                if f.locked:
                    locked[f.field] = f.note or "turned off by the creator"
            lines.extend(n for n in choices.notes if n not in lines)
            self.consent = choices.consent or self.consent
        if failure:
            lines.insert(0, failure)
        for name, prop in self.props.items():
            kind, values, _nullable = field_kind(prop)
            wid = f"#{self.field_id(name)}"
            if kind == "enum":
                select = self.query_one(wid, Select)
                shown = allowed.get(name, values)
                current = select.value
                select.set_options(self._enum_options(name, list(shown)))
                if current is not Select.NULL and current in shown:
                    select.value = current
            elif kind == "bool" and prop.get("x-allow"):
                box = self.query_one(wid, Checkbox)
                if name in locked:
                    box.value = False
                    box.disabled = True
                    box.tooltip = locked[name]
                else:
                    box.disabled = False
                    box.tooltip = None
        self.choice_lines = lines
        self.draw_notes()

    def ticked(self, name: str) -> bool:
        """A plain (not x-allow) box that is ticked and sent (its group on)."""
        group = self._grouped(name)
        if group is not None and not self.group_on(group):
            return False
        return bool(self.query_one(f"#{self.field_id(name)}", Checkbox).value)

    def draw_notes(self) -> None:
        """The form's note line (the accounts' choices, the consent sentence: a ticked box's x-consent wins) and each
        group's: its boxes shown while it is on, the label its ticked boxes earn (the later one's x-note)."""
        consent = self.consent
        for name, prop in self.props.items():
            if field_kind(prop)[0] == "bool" and prop.get("x-consent") and self.ticked(name):
                consent = str(prop["x-consent"])
        lines = [*self.choice_lines, *([consent] if consent else [])]
        note = self.query_one(f"#{self.field_id('choices')}", Static)
        note.update("\n".join(lines))
        note.display = bool(lines)
        for group, spec in self.groups.items():
            members = self.members(group)
            if not members:
                continue
            on = self.group_on(group)
            self.query_one(f"#{self.field_id(f'group-{group}-members')}").display = on
            labels = [
                str(self.props[n]["x-note"])
                for n in members
                if self.ticked(n) and self.props[n].get("x-note")
            ]
            text = labels[-1] if labels else str(spec.get("requireOne") or "") if on else ""
            label = self.query_one(f"#{self.field_id(f'group-{group}-note')}", Static)
            label.update(text)
            label.display = on and bool(text)

    def problems(self) -> list[str]:
        """What the form itself refuses: a group turned on without a ticked box (its `requireOne`), a ticked box
        with a value another option cannot take with it (`x-excludes`)."""
        out: list[str] = []
        for group, spec in self.groups.items():
            members = self.members(group)
            if members and self.group_on(group) and not any(self.ticked(n) for n in members):
                out.append(str(spec.get("requireOne") or f"{spec.get('title') or group}: tick one"))
        chosen = self.values()
        for name, prop in self.props.items():
            if field_kind(prop)[0] != "bool" or not self.ticked(name):
                continue
            for other, excluded in (prop.get("x-excludes") or {}).items():
                if chosen.get(other) in (excluded or []):
                    title = prop.get("title") or name
                    out.append(f"{title} cannot go with {other} {chosen[other]}")
        return out

    @on(Checkbox.Changed)
    def _box_changed(self) -> None:
        self.draw_notes()

    def values(self) -> dict[str, Any]:
        """The options as sent: every set value (a checked box, a typed text, a chosen value)."""
        out: dict[str, Any] = {}
        for name, prop in self.props.items():
            kind, _values, _nullable = field_kind(prop)
            wid = f"#{self.field_id(name)}"
            if kind == "enum":
                value = self.query_one(wid, Select).value
                if value is not Select.NULL:
                    out[name] = value
            elif kind == "bool":
                group = self._grouped(name)
                if group is not None and not self.group_on(group):
                    continue
                if self.query_one(wid, Checkbox).value:
                    out[name] = not prop.get("x-allow")
            elif kind == "text":
                text = self.query_one(wid, Input).value.strip()
                if text:
                    out[name] = text
            elif kind == "number":
                text = self.query_one(wid, Input).value.strip()
                if text:
                    try:
                        out[name] = int(text) if prop_is_integer(prop) else float(text)
                    except ValueError:
                        out[name] = text  # the API says why
            elif kind == "list":
                items = [t.strip() for t in self.query_one(wid, Input).value.split(",") if t.strip()]
                if items:
                    out[name] = items
        return out

    def fill(self, options: dict[str, Any]) -> None:
        """Show a post's options (a value this form cannot show is left as the form has it)."""
        for name, prop in self.props.items():
            kind, values, _nullable = field_kind(prop)
            wid = f"#{self.field_id(name)}"
            value = options.get(name)
            if kind == "enum":
                if value in values:
                    self.query_one(wid, Select).value = value
            elif kind == "bool":
                self.query_one(wid, Checkbox).value = (value is False) if prop.get("x-allow") else bool(value)
                group = self._grouped(name)
                if group is not None and value:
                    self.query_one(f"#{self.field_id(f'group-{group}')}", Checkbox).value = True
            elif kind in ("text", "number"):
                self.query_one(wid, Input).value = "" if value is None else str(value)
            elif kind == "list":
                self.query_one(wid, Input).value = ", ".join(str(v) for v in value or [])


def prop_is_integer(prop: dict[str, Any]) -> bool:
    branches, _nullable = _branches(prop)
    return bool(branches) and branches[0].get("type") == "integer"

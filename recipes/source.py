"""YAML with positions: a recipe file read into plain data, keeping each value's node so that an error found
later (by pydantic, by a media or template check) is reported at its line and column (1-based).

Read as YAML 1.2's core schema, as editors read it: `true`/`false` are booleans, `on`/`yes`/`no` are text, and
so are dates (2027-01-05) and times (9:00 — YAML 1.1 would make it the number 540). Anchors, aliases and `<<`
merge keys work. Duplicate keys, tags other than the core ones, and documents that alias themselves are errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_TAG = "tag:yaml.org,2002:"
_MAX_VALUES = 200_000  # alias bombs ("billion laughs") end here


class SourceError(Exception):
    """Something in the YAML itself: `line`/`column` 1-based, `code` the problem's code."""

    def __init__(self, message: str, line: int, column: int, code: str = "invalid_yaml") -> None:
        super().__init__(message)
        self.message, self.line, self.column, self.code = message, line, column, code


class _Resolver(yaml.resolver.BaseResolver):
    """YAML 1.2 core schema's implicit types (PyYAML resolves YAML 1.1's)."""


_Resolver.add_implicit_resolver(
    _TAG + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Resolver.add_implicit_resolver(
    _TAG + "int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Resolver.add_implicit_resolver(
    _TAG + "float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Resolver.add_implicit_resolver(_TAG + "null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])
_Resolver.add_implicit_resolver(_TAG + "merge", re.compile(r"^(?:<<)$"), ["<"])


class _Loader(yaml.BaseLoader):  # PyYAML's own parser, with the core schema's types
    yaml_implicit_resolvers = _Resolver.yaml_implicit_resolvers


_CBase = getattr(yaml, "CBaseLoader", None)  # libyaml's parser when PyYAML has it: several times faster
_FAST: type | None = None
if _CBase is not None:

    class _CLoader(_CBase):  # type: ignore[misc, valid-type]  # yaml.CBaseLoader exists only when PyYAML was built with libyaml: a base chosen at run time
        yaml_implicit_resolvers = _Resolver.yaml_implicit_resolvers

    _FAST = _CLoader


def position(node: Node) -> tuple[int, int]:
    """(line, column), 1-based, where `node` starts."""
    return node.start_mark.line + 1, node.start_mark.column + 1


@dataclass
class Document:
    """A file's root node and its value as plain data (dicts, lists, str, int, float, bool, None)."""

    node: Node | None
    data: Any


def read(text: str, *, fast: bool = True) -> Document:
    """Parse `text`; SourceError (code `invalid_yaml`) at the parser's position when it is not YAML. With
    `fast`, libyaml's parser when available (PyYAML's own otherwise)."""
    loader = (_FAST if fast and _FAST is not None else _Loader)(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise syntax_error(text, exc) from None
    except yaml.YAMLError as exc:
        raise SourceError(f"not valid YAML: {exc}", 0, 0) from None
    finally:
        loader.dispose()
    if node is None:
        return Document(None, None)
    return Document(node, _Builder().value(node))


# The constructs a parser reports by where they opened (its context mark) when it finds one not closed.
_OPENED = (
    ("while scanning a quoted scalar", "a quoted string"),
    ("while parsing a flow sequence", "a list in brackets [ ]"),
    ("while parsing a flow mapping", "a mapping in braces { }"),
    ("while scanning a block scalar", "a block of text (| or >)"),
)
_KEY_LINE = re.compile(r"\n[ \t]*-?[ \t]*[A-Za-z_][\w.-]*:(?:[ \t]|$)", re.MULTILINE)


def syntax_error(text: str, exc: yaml.MarkedYAMLError) -> SourceError:
    """A parser's error as a SourceError at the place to fix: where an unclosed quote, bracket or brace opened
    (the parser says so, or a quoted string runs on over lines that read like keys), else where it gave up."""
    what = " ".join(p for p in (exc.context, exc.problem) if p)
    gave_up = exc.problem_mark or exc.context_mark
    if gave_up is None:
        return SourceError(f"not valid YAML: {what}", 0, 0)
    at = f"line {gave_up.line + 1}, column {gave_up.column + 1}"
    opened = exc.context_mark
    label = next((name for prefix, name in _OPENED if (exc.context or "").startswith(prefix)), None)
    if (
        label is not None
        and opened is not None
        and (opened.line, opened.column) != (gave_up.line, gave_up.column)
    ):
        return SourceError(
            f"not valid YAML: {label} opened here is not closed (the parser gave up at {at}: {what})",
            opened.line + 1,
            opened.column + 1,
        )
    runaway = _runaway_quote(text, gave_up.index)
    if runaway is not None:
        start, end = runaway
        return SourceError(
            f"not valid YAML: the quoted string opened here runs on to line {end.line + 1}, over lines that "
            f"read like keys: is its closing quote missing? (the parser gave up at {at}: {what})",
            start.line + 1,
            start.column + 1,
        )
    return SourceError(f"not valid YAML: {what}", gave_up.line + 1, gave_up.column + 1)


def _runaway_quote(text: str, stop: int) -> tuple[yaml.Mark, yaml.Mark] | None:
    """The last quoted string before offset `stop` that spans lines reading like `key: …`: an unclosed quote that
    swallowed what followed (the parser only fails further on). Its (start, end) marks, or None."""
    found = None
    try:
        for token in yaml.scan(text, Loader=yaml.BaseLoader):
            if token.start_mark.index >= stop:
                break
            if (
                isinstance(token, yaml.ScalarToken)
                and token.style in ('"', "'")
                and token.end_mark.line > token.start_mark.line
                and _KEY_LINE.search(text, token.start_mark.index, token.end_mark.index)
            ):
                found = (token.start_mark, token.end_mark)
    except yaml.YAMLError:
        pass  # the scanner stops where the text stops being YAML: what it read before is enough
    return found


class _Builder:
    def __init__(self) -> None:
        self.count = 0
        self.active: set[int] = set()

    def value(self, node: Node) -> Any:
        self.count += 1
        if self.count > _MAX_VALUES:
            raise SourceError(
                f"the file expands to more than {_MAX_VALUES:,} values (aliases?)", *position(node)
            )
        if isinstance(node, ScalarNode):
            return scalar(node)
        if id(node) in self.active:
            raise SourceError("an alias refers to the value that contains it", *position(node))
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                _check_tag(node, "seq")
                return [self.value(item) for item in node.value]
            assert isinstance(node, MappingNode)
            _check_tag(node, "map")
            out: dict[Any, Any] = {}
            seen: dict[Any, Node] = {}
            for key_node, value_node in pairs(node):
                if not isinstance(key_node, ScalarNode):
                    raise SourceError(
                        "a key must be a plain value, not a list or a mapping", *position(key_node)
                    )
                key = scalar(key_node)
                if key in seen and seen[key] is not key_node:
                    first = position(seen[key])[0]
                    raise SourceError(f"duplicate key {key!r} (first on line {first})", *position(key_node))
                seen[key] = key_node
                out[key] = self.value(value_node)
            return out
        finally:
            self.active.discard(id(node))


def _check_tag(node: Node, kind: str) -> None:
    if node.tag != _TAG + kind:
        raise SourceError(f"unsupported tag {node.tag!r}", *position(node))


def pairs(node: MappingNode) -> list[tuple[Node, Node]]:
    """The mapping's (key, value) nodes with `<<` merge keys applied (own keys win, as YAML says)."""
    own: list[tuple[Node, Node]] = []
    merged: list[tuple[Node, Node]] = []
    for key_node, value_node in node.value:
        if key_node.tag == _TAG + "merge":
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for src in sources:
                if not isinstance(src, MappingNode):
                    raise SourceError("`<<` merges a mapping (or a list of mappings)", *position(src))
                merged.extend(pairs(src))
        else:
            own.append((key_node, value_node))
    if not merged:
        return own
    keys = {scalar(k) for k, _ in own if isinstance(k, ScalarNode)}
    out, taken = list(own), set(keys)
    for k, v in merged:
        key = scalar(k) if isinstance(k, ScalarNode) else None
        if key not in taken:
            out.append((k, v))
            taken.add(key)
    return out


def scalar(node: ScalarNode) -> Any:
    tag, text = node.tag, node.value
    if tag == _TAG + "str":
        return text
    if tag == _TAG + "null":
        return None
    if tag == _TAG + "bool":
        return text.lower() == "true"
    if tag == _TAG + "int":
        try:
            sign = -1 if text.startswith("-") else 1
            body = text.lstrip("+-")
            if body.startswith("0o"):
                return sign * int(body[2:], 8)
            if body.startswith("0x"):
                return sign * int(body[2:], 16)
            return sign * int(body, 10)
        except ValueError:
            raise SourceError(f"{text!r} is not an integer", *position(node)) from None
    if tag == _TAG + "float":
        low = text.lower().lstrip("+")
        if low in (".inf", "-.inf"):
            return -math.inf if low.startswith("-") else math.inf
        if low == ".nan":
            return math.nan
        try:
            return float(text)
        except ValueError:
            raise SourceError(f"{text!r} is not a number", *position(node)) from None
    raise SourceError(
        f"unsupported tag {tag!r}: use plain values (text, numbers, true/false)", *position(node)
    )


# ---- from a location in the data back to a node ------------------------------------------------------------


@dataclass(frozen=True)
class Located:
    """Where a location of the data is in the file, and a readable path to it (`posts[2].repeat.times[1]`)."""

    line: int
    column: int
    path: str
    found: bool  # False when the location ends at a key the mapping does not have (a missing field)


def locate(root: Node | None, loc: Sequence[str | int], *, key: bool = False) -> Located:
    """The node at `loc` (pydantic's error location: keys and list indexes). Elements that match nothing (the
    tags pydantic adds for unions) are skipped; a key the mapping lacks stops at the mapping. With `key`, a
    mapping entry is located at its key rather than its value (an unknown key)."""
    node = root
    if node is None:
        return Located(1, 1, "", False)
    path = ""
    at = position(node)
    found = True
    last = len(loc) - 1
    for i, elem in enumerate(loc):
        if isinstance(node, MappingNode):
            hit = next(
                ((k, v) for k, v in pairs(node) if isinstance(k, ScalarNode) and scalar(k) == elem), None
            )
            if hit is None:
                if i == last:
                    found = False
                    path = _join(path, elem)
                    break
                continue  # a union's tag
            path = _join(path, elem)
            node = hit[1]
            at = position(hit[0] if key and i == last else hit[1])
        elif isinstance(node, SequenceNode) and isinstance(elem, int):
            if not 0 <= elem < len(node.value):
                found = False
                break
            path = f"{path}[{elem}]"
            node = node.value[elem]
            at = position(node)
        else:
            continue  # a scalar or a union's tag
    return Located(at[0], at[1], path, found)


def _join(path: str, elem: str | int) -> str:
    if isinstance(elem, int):
        return f"{path}[{elem}]"
    return f"{path}.{elem}" if path else str(elem)

"""Variables in an entry's `content`: `{name}` is replaced per occurrence, `{{` and `}}` are literal braces.

Variables (the list `VARIABLES` below is the one source; the JSON Schema's description of `content` quotes it):

  the entry       {id} the entry's id · {set} the recipe set's name · {targets} its networks, comma-separated
                  ("instagram, tiktok") · {n} the occurrence's number in its series, from 1 (1 for `at`) ·
                  {total} the number of occurrences of the series (1 for `at`)
  its time        in the file's zone, at the instant the post is scheduled: {date} 2027-01-15 · {time} 09:00 ·
                  {year} 2027 · {month} 1 · {day} 15 · {hour} 9 · {minute} 0 (numbers: `{day:02d}` pads
                  to 05) · {month_name} January · {month_abbr} Jan · {weekday} Friday · {weekday_abbr} Fri
                  (names in English, whatever the machine's locale)
  its media       {file} (= {file.name}) launch.jpg · {file.stem} launch · {file.suffix} .jpg — the first
                  media file after glob expansion; {media[i]}, {media[i].name}, {media[i].stem},
                  {media[i].suffix} the i-th, counted from 0 ({media[0]} is {file}); {files} every media
                  file's name, comma-separated

A format spec after a colon is applied with Python's `format()` (`{day:02d}`, `{id:>10}`). An unknown
variable, a media variable on an entry without media, an index past the last file, a lone `{` or `}`: a
`TemplateError` (the loader reports it at the `content` value, code `unknown_variable` or `invalid_template`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath
from typing import Any

VARIABLES: dict[str, str] = {
    "id": "the entry's id",
    "set": "the recipe set's name (the folder's name, or --set NAME)",
    "targets": 'the entry\'s networks, comma-separated ("NETWORK, NETWORK")',
    "n": "the occurrence's number in its series, from 1 (1 for an entry with `at`)",
    "total": "the number of occurrences of the series (1 for an entry with `at`)",
    "date": "the scheduled date in the file's zone, YYYY-MM-DD",
    "time": "the scheduled time in the file's zone, HH:MM",
    "year": "the year (2027)",
    "month": "the month as a number (1; {month:02d} gives 01)",
    "day": "the day of the month as a number (5; {day:02d} gives 05)",
    "hour": "the hour, 0-23 ({hour:02d} gives 09)",
    "minute": "the minute ({minute:02d} gives 05)",
    "month_name": "the month's English name (January)",
    "month_abbr": "the month's English abbreviation (Jan)",
    "weekday": "the weekday's English name (Friday)",
    "weekday_abbr": "the weekday's English abbreviation (Fri)",
    "file": "the first media file's name (launch.jpg); also {file.name}, {file.stem} (launch), {file.suffix} (.jpg)",
    "media[i]": "the i-th media file (from 0) after glob expansion: {media[1]}, {media[1].name}, "
    "{media[1].stem}, {media[1].suffix}",
    "files": "every media file's name, comma-separated",
}
"""Every variable `content` may use, with what it stands for."""

FILE_ATTRS = ("name", "stem", "suffix")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_FIELD = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<index>-?\d+)\])?(?:\.(?P<attr>[A-Za-z_]+))?"
    r"(?::(?P<spec>.*))?$",
    re.S,
)


def describe_variables() -> str:
    """The variable list as one paragraph (for the JSON Schema's descriptions and help texts)."""
    return "; ".join(f"{{{name}}} {text}" for name, text in VARIABLES.items())


class TemplateError(ValueError):
    """A content template that cannot be rendered; `code` is `unknown_variable` or `invalid_template`."""

    def __init__(self, message: str, code: str = "invalid_template") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class _Field:
    text: str  # as written between the braces
    name: str
    index: int | None
    attr: str | None
    spec: str


Part = str | _Field


@dataclass(frozen=True)
class Template:
    """A parsed template: literal text and fields, in order."""

    source: str
    parts: tuple[Part, ...]

    @property
    def uses_media(self) -> bool:
        return any(isinstance(p, _Field) and p.name in ("file", "media", "files") for p in self.parts)

    def check(self, media_count: int) -> None:
        """Raise TemplateError when a field names no variable or cannot be formatted, knowing the number of
        media files (the same for every occurrence of an entry)."""
        sample = values(
            entry_id="x",
            set_name="s",
            targets=("network",),
            when=datetime(2027, 1, 1, 9, 0),
            media=[PurePath(f"m{i}.jpg") for i in range(media_count)],
            n=1,
            total=1,
        )
        for part in self.parts:
            if isinstance(part, _Field):
                _lookup(part, sample, media_count)

    def render(self, vals: Mapping[str, Any]) -> str:
        media_count = len(vals.get("media", ()))
        out: list[str] = []
        for part in self.parts:
            out.append(part if isinstance(part, str) else _lookup(part, vals, media_count))
        return "".join(out)


def parse(source: str) -> Template:
    """Split `source` into literal text and `{fields}`; TemplateError on a lone brace or an unknown variable."""
    parts: list[Part] = []
    buf: list[str] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch == "{":
            if source.startswith("{{", i):
                buf.append("{")
                i += 2
                continue
            end = source.find("}", i + 1)
            nested = source.find("{", i + 1)
            if end < 0 or (0 <= nested < end):
                raise TemplateError(f"unclosed '{{' at character {i + 1}: write {{{{ for a literal brace")
            if buf:
                parts.append("".join(buf))
                buf = []
            parts.append(_field(source[i + 1 : end]))
            i = end + 1
            continue
        if ch == "}":
            if source.startswith("}}", i):
                buf.append("}")
                i += 2
                continue
            raise TemplateError(f"single '}}' at character {i + 1}: write }}}} for a literal brace")
        buf.append(ch)
        i += 1
    if buf:
        parts.append("".join(buf))
    return Template(source, tuple(parts))


def _available() -> str:
    return ", ".join(f"{{{name}}}" for name in VARIABLES)


def _field(text: str) -> _Field:
    m = _FIELD.match(text.strip()) if text.strip() == text else None
    if m is None:
        raise TemplateError(f"{{{text}}} is not a variable; available: {_available()}", "unknown_variable")
    name, index, attr, spec = m.group("name"), m.group("index"), m.group("attr"), m.group("spec") or ""
    known = set(VARIABLES) - {"media[i]"} | {"media"}
    if name not in known:
        raise TemplateError(f"unknown variable {{{text}}}; available: {_available()}", "unknown_variable")
    if name == "media" and index is None:
        raise TemplateError(
            f"{{{text}}}: give an index, e.g. {{media[0].name}} (or use {{files}})", "unknown_variable"
        )
    if index is not None and name != "media":
        raise TemplateError(f"{{{text}}}: only media takes an index ({{media[1].stem}})", "unknown_variable")
    if attr is not None and (name not in ("file", "media") or attr not in FILE_ATTRS):
        allowed = ", ".join(FILE_ATTRS)
        where = (
            f"{name} has no attributes" if name not in ("file", "media") else f"expected one of: {allowed}"
        )
        raise TemplateError(f"unknown variable {{{text}}}: {where}", "unknown_variable")
    return _Field(text, name, int(index) if index is not None else None, attr, spec)


def _lookup(part: _Field, vals: Mapping[str, Any], media_count: int) -> str:
    media: Sequence[PurePath] = vals.get("media", ())
    if part.name in ("file", "media"):
        i = 0 if part.name == "file" else (part.index or 0)
        if media_count == 0:
            raise TemplateError(f"{{{part.text}}}: the entry has no media", "unknown_variable")
        if not 0 <= i < media_count:
            raise TemplateError(
                f"{{{part.text}}}: the entry has {media_count} media file"
                f"{'s' if media_count != 1 else ''} (media[0] to media[{media_count - 1}])",
                "unknown_variable",
            )
        path = media[i]
        value: Any = {"name": path.name, "stem": path.stem, "suffix": path.suffix}[part.attr or "name"]
    else:
        value = vals[part.name]
    try:
        return format(value, part.spec)
    except (ValueError, TypeError) as exc:
        raise TemplateError(f"{{{part.text}}}: format spec {part.spec!r} does not apply ({exc})") from None


def values(
    *,
    entry_id: str,
    set_name: str,
    targets: Sequence[str],
    when: datetime,
    media: Sequence[PurePath],
    n: int,
    total: int,
) -> dict[str, Any]:
    """The variables of one occurrence; `when` is its scheduled time in the file's zone."""
    return {
        "id": entry_id,
        "set": set_name,
        "targets": ", ".join(targets),
        "n": n,
        "total": total,
        "date": f"{when:%Y-%m-%d}",
        "time": f"{when:%H:%M}",
        "year": when.year,
        "month": when.month,
        "day": when.day,
        "hour": when.hour,
        "minute": when.minute,
        "month_name": _MONTHS[when.month - 1],
        "month_abbr": _MONTHS[when.month - 1][:3],
        "weekday": _WEEKDAYS[when.weekday()],
        "weekday_abbr": _WEEKDAYS[when.weekday()][:3],
        "files": ", ".join(p.name for p in media),
        "media": tuple(media),
    }

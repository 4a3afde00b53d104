"""Read a recipe file or folder into occurrences and problems (recipes.model), without any backend.

`load(path)` reads one YAML file, or every `*.yaml`/`*.yml` under a folder (recursively, hidden folders and
files skipped, in sorted order). Each file is all-or-nothing: every problem of a file is reported (not only
the first), and a file with any problem yields no occurrence.

Per file: the YAML (recipes.source, positions kept) → the schema (recipes.schema, pydantic) → per entry:
`defaults` merged in, media resolved (globs expanded in sorted order, relative to the file), the content's
variables checked (recipes.template), its times expanded (recipes.series, in the file's zone, DST rules
there), and each occurrence's content checked against its targets' limits. The networks — targets' names, each
one's options schema and limits — are the server's (GET /v1/networks, the client's `Networks`), given to `load`.

Merging `defaults` into an entry: a key the entry gives wins; lists (`targets`, `media`) and `content` are
replaced whole; `options` is merged per network and per setting, the entry's setting winning.

The file's zone: its `timezone:`, else `default_zone` (the CLI passes the profile's `timezone`, else the
system's zone), else UTC.

Problem codes: invalid_yaml, invalid_recipe, unknown_timezone, duplicate_id, media_not_found, unsupported_media_type,
unknown_variable, invalid_template, series_too_long, not_supported (`generate:` in `defaults`), key_too_long, content_too_long_for_target,
title_too_long_for_target, media_required_for_target, video_required_for_target,
content_required_for_target, unreadable.
"""

from __future__ import annotations

import copy
import difflib
import functools
import glob
import os
import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel, ValidationError

from backend.operator.files import media_kind
from backend.schemas.generations import PROMPT_MAX, PROMPT_MIN
from backend.schemas.posts import LABEL_VALUE_MAX, MAX_CONTENT, MAX_MEDIA
from recipes import series, source, template
from recipes.model import FileResult, GenerateSpec, Loaded, Occurrence, Problem
from recipes.schema import PARTIAL, Defaults, Entry, RecipeFile
from socialpub_tui.client.networks import Networks

RECIPE_SUFFIXES = (".yaml", ".yml")
# What POST /v1/media accepts (backend.media.detect: the type is read from the bytes; these are its usual names).
IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".png", ".webp", ".gif", ".heic", ".heif", ".avif", ".tif", ".tiff"}
)
VIDEO_SUFFIXES = frozenset({".mp4", ".mov", ".m4v", ".webm"})
ACCEPTED_MEDIA = "JPEG, PNG, WebP, GIF, HEIC, AVIF or TIFF images; MP4, MOV or WebM videos"
_CUSTOM_CODES = frozenset({"unknown_timezone", "not_supported", "series_too_long", "invalid_recipe"})
_GLOB_CHARS = frozenset("*?[")
KEY_MAX = LABEL_VALUE_MAX  # an occurrence key is carried as the value of a post label
"""The longest occurrence key: posts carry it as the value of a label (`LABEL_VALUE_MAX`, see POST /v1/posts)."""


def load(
    path: Path | str, *, networks: Networks, set_name: str | None = None, default_zone: str | None = None
) -> Loaded:
    """Read `path` (a YAML file, or a folder of them) as a recipe set, its targets and options checked against
    `networks` (the server's: `client.networks()`).

    `root` is the folder (a single file's parent); `set_name` defaults to the root's name. Occurrence and
    FileResult `file`s are relative to the root (POSIX); a Problem's `file` too, except for a single file,
    where it is `path` as given. `default_zone` (an IANA name) applies to files without `timezone:`; UTC when
    None. Raises ValueError for an unknown `default_zone` or a set name that cannot be one (empty, or with
    '/', '#' or '@'), FileNotFoundError when `path` does not exist."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if default_zone is not None:
        _zone(default_zone)  # ValueError when unknown
    single = not path.is_dir()
    root = path.parent if single else path
    name = set_name if set_name is not None else default_set_name(path)
    check_set_name(name)
    loaded = Loaded(root=root, set_name=name, networks=networks)
    files = [path] if single else recipe_files(path)
    for f in files:
        rel = f.relative_to(root).as_posix()
        loaded.files.append(
            load_file(
                f,
                rel=rel,
                shown=str(path) if single else rel,
                set_name=name,
                networks=networks,
                default_zone=default_zone,
            )
        )
    return loaded


def reread_in_zone(loaded: Loaded, file: str, zone: str) -> None:
    """Read `file` of `loaded` again with `zone` as its default zone (a file without `timezone:`), in place."""
    for i, result in enumerate(loaded.files):
        if result.file == file:
            loaded.files[i] = load_file(
                result.path,
                rel=result.file,
                shown=result.file,
                set_name=loaded.set_name,
                networks=loaded.networks,
                default_zone=zone,
            )


def default_set_name(path: Path) -> str:
    """The set's name when none is given: its folder's (a single file's parent's)."""
    path = Path(path)
    return (path if path.is_dir() else path.parent).resolve().name


def check_set_name(name: str) -> None:
    """ValueError unless `name` can be a set's name (the first part of every occurrence key)."""
    if not name or name != name.strip() or any(c in name for c in "/#@\n") or len(name) > 100:
        raise ValueError(
            f"{name!r} cannot be a recipe set's name: 1 to 100 characters, without '/', '#' or '@'"
        )


def recipe_files(folder: Path) -> list[Path]:
    """Every `*.yaml` / `*.yml` under `folder`, recursively, sorted, skipping hidden folders and files."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if not name.startswith(".") and name.lower().endswith(RECIPE_SUFFIXES):
                found.append(Path(dirpath) / name)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def _zone(name: str) -> tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "Europe" is a folder of zones, not one
        raise ValueError(f"unknown time zone {name!r}: use an IANA name such as Europe/Paris") from None


# ---- one file --------------------------------------------------------------------------------------------


@dataclass
class _File:
    """What checking one file needs: its document, how it is shown, and the problems found so far."""

    path: Path
    rel: str
    shown: str
    set_name: str
    doc: source.Document
    networks: Networks
    problems: list[Problem] = field(default_factory=list)
    files: dict[str, list[Path] | None] = field(default_factory=dict)  # media as written → found (None: none)
    seen: set[Problem] = field(default_factory=set)
    zone_given: bool = False  # the file says `timezone:` (else its times are read in the default zone)

    def at(
        self,
        loc: Sequence[str | int],
        message: str,
        code: str = "invalid_recipe",
        *,
        key: bool = False,
        with_path: bool = True,
    ) -> None:
        where = source.locate(self.doc.node, loc, key=key)
        text = f"{where.path}: {message}" if with_path and where.path else message
        problem = Problem(self.shown, where.line, where.column, text, code)
        if problem not in self.seen:  # the same defaults value, reached from several entries
            self.seen.add(problem)
            self.problems.append(problem)

    def whole(self, message: str, code: str, line: int = 0, column: int = 0) -> None:
        self.problems.append(Problem(self.shown, line, column, message, code))


def load_file(
    path: Path,
    *,
    rel: str,
    shown: str,
    set_name: str,
    networks: Networks,
    default_zone: str | None = None,
) -> FileResult:
    """One recipe file: its occurrences when it has no problem, else its problems (sorted by position)."""
    result = FileResult(file=rel, path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        result.problems.append(
            Problem(shown, 0, 0, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "invalid_yaml")
        )
        return result
    except OSError as exc:
        result.problems.append(
            Problem(shown, 0, 0, f"cannot read the file: {exc.strerror or exc}", "unreadable")
        )
        return result
    try:
        doc = source.read(text)
    except source.SourceError as exc:
        result.problems.append(Problem(shown, exc.line, exc.column, exc.message, exc.code))
        return result
    f = _File(path, rel, shown, set_name, doc, networks)
    occurrences = _check(f, default_zone)
    result.zone_given = f.zone_given
    result.problems = sorted(f.problems, key=lambda p: (p.line, p.column))
    if not result.problems:
        result.occurrences = occurrences
    return result


def _check(f: _File, default_zone: str | None) -> list[Occurrence]:
    data = f.doc.data
    if data is None:
        f.whole(
            "the file is empty: expected `posts:` (and optionally `timezone:` and `defaults:`)",
            "invalid_recipe",
            1,
            1,
        )
        return []
    if not isinstance(data, dict):
        f.at((), "expected a mapping with `posts:` (and optionally `timezone:` and `defaults:`)")
        return []

    parsed: RecipeFile | None = None
    try:
        parsed = RecipeFile.model_validate(data)
    except ValidationError as exc:
        _report(f, exc, (), RecipeFile)

    # What is valid is checked further even when something else is not, so that every problem shows at once.
    zone_name = data.get("timezone") if isinstance(data.get("timezone"), str) else None
    f.zone_given = zone_name is not None
    zone: tzinfo | None
    try:
        zone_name = zone_name or default_zone or "UTC"
        zone = _zone(zone_name)
    except ValueError:
        zone = None  # reported by the schema
    # Invalid fields are left out of further checks (their problem is reported), the rest is checked.
    defaults: Defaults | None
    bad_defaults: set[str] = set()
    entries: list[tuple[int, Entry, set[str]]]
    if parsed is not None:
        defaults, entries = parsed.defaults, [(i, e, set()) for i, e in enumerate(parsed.posts)]
    else:
        raw_defaults = data.get("defaults")
        defaults, bad_defaults = (
            _partial(Defaults, raw_defaults) if isinstance(raw_defaults, dict) else (None, set())
        )
        if raw_defaults is not None and not isinstance(raw_defaults, dict):
            bad_defaults = {"targets", "content", "media", "options"}
        raw = data.get("posts") if isinstance(data.get("posts"), list) else []
        entries = []
        for i, r in enumerate(raw):
            entry, bad = _partial(Entry, r) if isinstance(r, dict) else (None, set())
            if entry is not None:
                entries.append((i, entry, bad))

    _duplicate_ids(f, data.get("posts"))
    if isinstance(data.get("defaults"), dict):
        _check_networks(f, ("defaults",), data["defaults"])
    for i, raw_entry in enumerate(data.get("posts") if isinstance(data.get("posts"), list) else []):
        if isinstance(raw_entry, dict):
            _check_networks(f, ("posts", i), raw_entry)
    out: list[Occurrence] = []
    for index, entry, bad in entries:
        out.extend(_entry(f, index, entry, defaults, bad | bad_defaults, zone, zone_name))
    return out


def _partial(model: type[BaseModel], raw: dict[str, Any]) -> tuple[Any, set[str]]:
    """`model` from `raw` without the keys that fail validation (already reported), and those keys; None when
    even that fails."""
    try:
        return model.model_validate(raw), set()
    except ValidationError as exc:
        bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
    try:
        return model.model_validate({k: v for k, v in raw.items() if k not in bad}, context=PARTIAL), bad
    except ValidationError:
        return None, bad


def _duplicate_ids(f: _File, posts: Any) -> None:
    if not isinstance(posts, list):
        return
    first: dict[str, int] = {}
    for i, raw in enumerate(posts):
        ident = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(ident, str):
            continue
        if ident in first:
            line = source.locate(f.doc.node, ("posts", first[ident], "id")).line
            f.at(
                ("posts", i, "id"),
                f"duplicate id {ident!r} (first on line {line}): each entry's id is its identity in the file",
                "duplicate_id",
            )
        else:
            first[ident] = i


# ---- pydantic errors → problems ---------------------------------------------------------------------------

_KIND = {
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
    "list_type": "a list",
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


def _report(f: _File, exc: ValidationError, prefix: tuple[str | int, ...], model: type[BaseModel]) -> None:
    seen: set[tuple[int, int, str]] = set()
    for err in exc.errors(include_url=False):
        loc = (*prefix, *err["loc"])
        etype = err["type"]
        is_key = etype == "extra_forbidden"
        where = source.locate(f.doc.node, loc, key=is_key)
        if etype == "missing":
            name = loc[-1]
            message = f"missing `{name}`"
            parent = where.path.rsplit(".", 1)[0] if "." in where.path else ""
            text = f"{parent}: {message}" if parent else message
        else:
            if etype == "extra_forbidden":
                message = _unknown_key(model, err["loc"], str(loc[-1]))
            elif etype in _KIND:
                message = f"expected {_KIND[etype]}, got {_shown(err.get('input'))}"
            else:
                message = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
                if message.startswith("Input should be "):
                    message = "expected " + message.removeprefix("Input should be ")
                    if not isinstance(err.get("input"), dict | list):
                        message += f", got {_shown(err.get('input'))}"
            text = f"{where.path}: {message}" if where.path else message
        if (where.line, where.column, text) in seen:
            continue  # a union's members failing alike
        seen.add((where.line, where.column, text))
        code = etype if etype in _CUSTOM_CODES else "invalid_recipe"
        f.problems.append(Problem(f.shown, where.line, where.column, text, code))


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unknown_key(model: type[BaseModel], loc: Sequence[str | int], key: str) -> str:
    names = _field_names(model, loc[:-1])
    if not names:
        return f"unknown key `{key}`"
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return f"unknown key `{key}`{hint}; expected one of: {', '.join(names)}"


def _field_names(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys the model at `loc` (inside `model`) accepts, as written in a file (aliases)."""
    current: Any = model
    for elem in loc:
        nxt = _step(current, elem)
        if nxt is not None:
            current = nxt
    names: list[str] = []
    for m in _models_in(current):
        for name, info in m.model_fields.items():
            if not (m is Defaults and name == "generate"):
                names.append(info.alias or name)
    return names


def _args(tp: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return (typing.get_args(tp)[0],)
    if origin in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return ()


def _models_in(tp: Any) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for a in _args(tp) for m in _models_in(a)]


def _step(tp: Any, elem: str | int) -> Any:
    if isinstance(elem, int):
        for t in [tp, *_flat(tp)]:
            if typing.get_origin(t) is list:
                return typing.get_args(t)[0]
        return None
    for m in _models_in(tp):
        for name, info in m.model_fields.items():
            if elem in (name, info.alias):
                return info.annotation
    return None  # a union's tag: stay


def _flat(tp: Any) -> Iterator[Any]:
    for a in _args(tp):
        yield a
        yield from _flat(a)


# ---- the server's networks: targets and options ------------------------------------------------------------


def _choices(values: Sequence[Any]) -> str:
    shown = [repr(v) for v in values]
    return ", ".join(shown[:-1]) + f" or {shown[-1]}" if len(shown) > 1 else "".join(shown)


def _check_networks(f: _File, loc: tuple[str | int, ...], raw: dict[str, Any]) -> None:
    """The targets' networks are the server's, and each network's options are what its schema takes (GET
    /v1/networks; the API checks them again)."""
    names = f.networks.names()
    targets = raw.get("targets")
    for j, t in enumerate(targets if isinstance(targets, list) else []):
        name, where = (t, (*loc, "targets", j)) if isinstance(t, str) else (None, ())
        if isinstance(t, dict) and isinstance(t.get("platform"), str):
            name, where = t["platform"], (*loc, "targets", j, "platform")
        if name is not None and name not in names:
            f.at(where, f"expected {_choices(names)}, got {name!r}")
    options = raw.get("options")
    for network, value in (options if isinstance(options, dict) else {}).items():
        if network not in names:
            f.at((*loc, "options", network), _unknown(str(network), list(names)), key=True)
            continue
        schema = f.networks.options_schema(network)
        if schema is None:
            f.at((*loc, "options", network), f"{network} takes no options", key=True)
            continue
        _check_options(f, (*loc, "options", network), value, schema)


def _unknown(key: str, names: list[str]) -> str:
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return f"unknown key `{key}`{hint}; expected one of: {', '.join(names)}"


def _check_options(f: _File, loc: tuple[str | int, ...], value: Any, schema: dict[str, Any]) -> None:
    if not isinstance(value, dict):
        f.at(loc, f"expected a mapping (key: value), got {_shown(value)}")
        return
    props: dict[str, Any] = schema.get("properties") or {}
    shorthands: dict[str, str] = schema.get("x-shorthands") or {}
    for short, full in shorthands.items():
        if short in value and full in value:
            f.at(loc, f"give `{short}` or `{full}`, not both")
    for key, v in value.items():
        prop = props.get(shorthands.get(key, key))
        if prop is None:
            if schema.get("additionalProperties") is False:
                f.at((*loc, key), _unknown(str(key), [*props, *shorthands]), key=True)
            continue
        problem = _value_problem(prop, v)
        if problem:
            f.at((*loc, key), problem)


_JSON_KIND = {"string": "text", "boolean": "true or false", "integer": "a whole number", "array": "a list"}


def _value_problem(prop: dict[str, Any], value: Any) -> str | None:
    """Why `value` is not one the option's JSON Schema takes (the plain part of it: type, enum, lengths), else
    None; what the schema cannot say (YouTube's way of counting tags) is the server's to answer."""
    branches = prop.get("anyOf") or [prop]
    if value is None and any(b.get("type") == "null" for b in branches):
        return None
    problems = [
        p for b in branches if b.get("type") != "null" if (p := _branch_problem(b, value)) is not None
    ]
    return None if len(problems) < len([b for b in branches if b.get("type") != "null"]) else problems[0]


def _branch_problem(b: dict[str, Any], value: Any) -> str | None:
    if "enum" in b:
        return None if value in b["enum"] else f"expected {_choices(b['enum'])}, got {_shown(value)}"
    kind = b.get("type")
    ok = {
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }.get(str(kind), True)
    if not ok:
        return f"expected {_JSON_KIND.get(str(kind), kind)}, got {_shown(value)}"
    if isinstance(value, str) and "maxLength" in b and len(value) > b["maxLength"]:
        return f"at most {b['maxLength']} characters, got {len(value)}"
    if isinstance(value, list):
        if "maxItems" in b and len(value) > b["maxItems"]:
            return f"at most {b['maxItems']} items, got {len(value)}"
        items = b.get("items") or {}
        for item in value:
            problem = _branch_problem(items, item) if items else None
            if problem:
                return problem
    return None


def resolve_shorthands(options: dict[str, Any], networks: Networks) -> dict[str, Any]:
    """Options with each network's shorthand keys (its schema's `x-shorthands`) written in full."""
    out: dict[str, Any] = {}
    for network, value in options.items():
        shorthands = (networks.options_schema(network) or {}).get("x-shorthands") or {}
        if isinstance(value, dict) and shorthands:
            value = {shorthands.get(k, k): v for k, v in value.items()}
        out[network] = value
    return out


# ---- one entry --------------------------------------------------------------------------------------------


def _entry(
    f: _File,
    i: int,
    entry: Entry,
    defaults: Defaults | None,
    bad: set[str],
    zone: tzinfo | None,
    zone_name: str,
) -> list[Occurrence]:
    """Check one schema-valid entry (or what is valid of it: `bad` names the keys left out, already
    reported) in its file, and return its occurrences."""
    here: tuple[str | int, ...] = ("posts", i)
    before = len(f.problems)

    def origin(name: str) -> tuple[str | int, ...]:
        """Where the entry's effective `name` is written: in the entry, or in `defaults`."""
        return (*here, name) if name in entry.model_fields_set else ("defaults", name)

    d = defaults or Defaults()
    targets = entry.targets if entry.targets is not None else d.targets
    content = entry.content if entry.content is not None else d.content
    media_paths = entry.media if entry.media is not None else d.media
    if targets is None and "targets" not in bad:
        f.at(here, "no `targets`: give them in the entry or in `defaults`")
    if content is None and "content" not in bad:
        f.at(here, 'no `content`: give it in the entry or in `defaults` ("" for none)')
    options = _merge_options(d, entry, f.networks)

    wire_targets = tuple(
        t if isinstance(t, str) else t.model_dump(by_alias=True, exclude_none=True) for t in targets or ()
    )
    networks = [t if isinstance(t, str) else t["platform"] for t in wire_targets]
    _duplicate_targets(f, origin("targets"), wire_targets)

    media = _media(f, origin("media"), media_paths or [])
    gen = entry.generate
    gen_sources: list[Path | str] | None = (
        _sources(f, (*here, "generate", "sources"), gen.sources or []) if gen is not None else []
    )
    gen_tmpl: template.Template | None = None
    if gen is not None:
        if media is not None and len(media) + 1 > MAX_MEDIA:
            f.at(
                origin("media"),
                f"{len(media)} media files and a generated one; a post takes at most {MAX_MEDIA}",
            )
        try:
            gen_tmpl = template.parse(gen.prompt)
            gen_tmpl.check(len(media) if media is not None else 0)
        except template.TemplateError as exc:
            if media is not None or not (gen_tmpl and gen_tmpl.uses_media):
                f.at((*here, "generate", "prompt"), str(exc), exc.code)
            gen_tmpl = None
    tmpl: template.Template | None = None
    if content is not None:
        try:
            tmpl = template.parse(content)
            tmpl.check(len(media) if media is not None else 0)
        except template.TemplateError as exc:
            if media is not None or not (tmpl and tmpl.uses_media):
                f.at(origin("content"), str(exc), exc.code)
            tmpl = None
    if media is not None:
        _media_rules(f, here, "targets" in entry.model_fields_set, networks, _with_generated(gen, media))
        _title_rules(f, here, entry, d, networks)

    key_length = len(f"{f.set_name}/{f.rel}#{entry.id}") + (len("@2027-01-05T09:00") if entry.repeat else 0)
    if key_length > KEY_MAX:
        f.at(
            (*here, "id"),
            f"the occurrence key (set/file#id[@date-time]) would be {key_length:,} characters; "
            f"posts carry it as a label of at most {KEY_MAX}: shorten the file's path or the id",
            "key_too_long",
        )
    if zone is None or (entry.at is None and entry.repeat is None):
        return []
    try:
        if entry.at is not None:
            instant, local = series.at_instant(entry.at, zone)
            times: list[tuple[datetime | None, datetime, datetime]] = [(None, instant, local)]
        else:
            assert entry.repeat is not None
            times = [
                (w, u, u.astimezone(zone).replace(tzinfo=None))
                for w, u in ((w, series.to_utc(w, zone)) for w in series.local_times(entry.repeat))
            ]
    except series.SeriesTooLong as exc:
        f.at((*here, "repeat"), str(exc), "series_too_long")
        return []
    except series.CronNeverMatches as exc:
        f.at((*here, "repeat", "cron"), str(exc))
        return []
    if tmpl is None or media is None or targets is None or len(f.problems) > before:
        return []
    if gen is not None and (gen_tmpl is None or gen_sources is None):
        return []

    total = len(times)
    own_content = "content" in entry.model_fields_set
    limits = _LimitCheck(
        f,
        origin("content") if own_content else here,
        "" if own_content else " (from defaults)",
        networks,
        _with_generated(gen, media),
    )
    prompt_problem = False
    line = source.locate(f.doc.node, here).line
    names = [PurePath(p) for p in media]
    out: list[Occurrence] = []
    for n, (nominal, instant, local) in enumerate(times, start=1):
        vals = template.values(
            entry_id=entry.id,
            set_name=f.set_name,
            targets=networks,
            when=local,
            media=names,
            n=n,
            total=total,
        )
        text = tmpl.render(vals)
        limits.check(text, local)
        spec = None
        if gen is not None and gen_tmpl is not None and gen_sources is not None:
            prompt = gen_tmpl.render(vals)
            if not PROMPT_MIN <= len(prompt.strip()) and not prompt_problem:
                prompt_problem = True
                f.at(
                    (*here, "generate", "prompt"),
                    f"the prompt is {len(prompt.strip())} characters once variables "
                    f"are replaced (on {local:%Y-%m-%d %H:%M}); a prompt takes {PROMPT_MIN} to {PROMPT_MAX:,}",
                )
            elif len(prompt) > PROMPT_MAX and not prompt_problem:
                prompt_problem = True
                f.at(
                    (*here, "generate", "prompt"),
                    f"the prompt is {len(prompt):,} characters once variables are "
                    f"replaced (on {local:%Y-%m-%d %H:%M}); a prompt takes at most {PROMPT_MAX:,}",
                )
            spec = GenerateSpec(
                type=gen.type,
                prompt=prompt,
                aspect_ratio=gen.aspect_ratio,
                duration_sec=gen.duration,
                sources=tuple(gen_sources),
            )
        out.append(
            Occurrence(
                set_name=f.set_name,
                file=f.rel,
                entry=entry.id,
                line=line,
                local=nominal,
                zone=zone_name,
                scheduled_at=instant,
                content=text,
                media=tuple(media),
                targets=copy.deepcopy(wire_targets),
                options=copy.deepcopy(options),
                generate=spec,
            )
        )
    limits.report()
    return out


def _with_generated(gen: Any, media: Sequence[Path]) -> list[Path]:
    """The media as the post will have them, for the per-network checks: the generated file (its kind) first."""
    if gen is None:
        return list(media)
    return [Path("generated.mp4" if gen.type == "video" else "generated.jpg"), *media]


def _sources(f: _File, loc: tuple[str | int, ...], written: Sequence[str]) -> list[Path | str] | None:
    """`generate.sources`: https URLs as written, local files absolute (relative to the file); None when a file is
    missing (reported)."""
    out: list[Path | str] = []
    ok = True
    for j, item in enumerate(written):
        if item.lower().startswith("https://"):
            out.append(item)
            continue
        found = _find(f.path.parent, item)
        if not found or len(found) != 1:
            what = "matches several files: name one" if found else "not found"
            f.at((*loc, j), f"source {item!r} {what} (relative to {f.rel}'s folder)", "media_not_found")
            ok = False
            continue
        if _kind(found[0]) != "image" or _content_kind(found[0]) != "image":
            f.at(
                (*loc, j), f"source {item!r} is not an image (.jpg, .png, .webp…): a start image is an image"
            )
            ok = False
            continue
        out.append(found[0])
    return out if ok else None


def _merge_options(d: Defaults, entry: Entry, networks: Networks) -> dict[str, Any]:
    base = resolve_shorthands(d.options or {}, networks)
    own = resolve_shorthands(entry.options or {}, networks)
    merged = {k: {s: v for s, v in dict(v).items() if v is not None} for k, v in base.items()}
    for network, settings in own.items():
        merged[network] = {**merged.get(network, {}), **{s: v for s, v in settings.items() if v is not None}}
    return merged


def _duplicate_targets(f: _File, loc: tuple[str | int, ...], targets: Sequence[str | dict[str, Any]]) -> None:
    seen: set[tuple[str, str | None]] = set()
    for j, t in enumerate(targets):
        key = (t, None) if isinstance(t, str) else (t["platform"], t.get("channelId"))
        if key in seen:
            what = key[0] if key[1] is None else f"{key[0]} account {key[1]}"
            f.at((*loc, j), f"{what} is already a target of this entry: each account once", "invalid_recipe")
        seen.add(key)


def _media(f: _File, loc: tuple[str | int, ...], paths: Sequence[str]) -> list[Path] | None:
    """The media files, absolute, globs expanded in sorted order; None when any is missing (reported)."""
    out: list[Path] = []
    ok = True
    for j, written in enumerate(paths):
        if written not in f.files:
            f.files[written] = _find(f.path.parent, written)
        found = f.files[written]
        if not found:
            if _GLOB_CHARS & set(written):
                message = f"no file matches {written!r} (relative to {f.rel}'s folder)"
            else:
                full = Path(os.path.expanduser(written))
                full = full if full.is_absolute() else f.path.parent / full
                why = "is a folder, not a file" if full.is_dir() else "not found"
                message = f"media {written!r} {why} (relative to {f.rel}'s folder)"
            f.at((*loc, j), message, "media_not_found")
            ok = False
        elif other := [p for p in found if _kind(p) == "other"]:
            f.at(
                (*loc, j),
                f"media {other[0].name!r} is not a file the backend accepts ({ACCEPTED_MEDIA})",
                "unsupported_media_type",
            )
            ok = False
        elif unreadable := [p for p in found if _content_kind(p) is None]:
            f.at(
                (*loc, j),
                f"media {unreadable[0].name!r} is not what its name says: its content is none of "
                f"{ACCEPTED_MEDIA} (read from its first bytes, as the backend reads it)",
                "unsupported_media_type",
            )
            ok = False
        else:
            out.extend(found)
    if ok and len(out) > MAX_MEDIA:
        f.at(loc, f"{len(out)} media files after expanding globs; a post takes at most {MAX_MEDIA}")
        return None
    return out if ok else None


def _find(folder: Path, written: str) -> list[Path] | None:
    """The files `written` names (relative to `folder`, a glob expanded in sorted order), absolute."""
    target = Path(os.path.expanduser(written))
    full = Path(os.path.abspath(target if target.is_absolute() else folder / target))
    if _GLOB_CHARS & set(written):
        return sorted(Path(m) for m in glob.glob(str(full), recursive=True) if os.path.isfile(m)) or None
    return [full] if full.is_file() else None


def _kind(path: Path | PurePath) -> str:
    """image, video or other, by the file's content when it has been read (_content_kind), else by its name."""
    suffix = path.suffix.lower()
    by_name = "video" if suffix in VIDEO_SUFFIXES else "image" if suffix in IMAGE_SUFFIXES else "other"
    if by_name == "other" or not isinstance(path, Path):
        return by_name
    return (_content_kind(path) or by_name) if path.is_file() else by_name


def _content_kind(path: Path) -> str | None:
    """ "image" or "video" as POST /v1/media will detect it from the bytes; None when it would refuse the file.
    Read once per file version (path, size, modification time): a folder of 1,000 entries sharing 20 images reads
    20 file heads."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _detected(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _detected(path: str, size: int, mtime_ns: int) -> str | None:
    try:
        return media_kind(Path(path))
    except OSError:
        return None


def _media_rules(
    f: _File, here: tuple[str | int, ...], own_targets: bool, networks: Sequence[str], media: Sequence[Path]
) -> None:
    """Networks that refuse a post without media, or without a video: at the entry's target, or at the entry
    when its targets come from defaults."""
    kinds = [_kind(m) for m in media]
    for j, network in enumerate(networks):
        lim = f.networks.limits(network)
        if lim is None:
            continue
        loc, which = ((*here, "targets", j), network) if own_targets else (here, f"{network} (from defaults)")
        if lim.media_required and not media:
            f.at(loc, f"{which} needs an image or a video: give `media`", "media_required_for_target")
        elif lim.video_required and "video" not in kinds:
            f.at(loc, f"{which} needs a video (.mp4, .mov, .webm…) in `media`", "video_required_for_target")


def _title_rules(
    f: _File, here: tuple[str | int, ...], entry: Entry, d: Defaults, networks: Sequence[str]
) -> None:
    for network in dict.fromkeys(networks):
        lim = f.networks.limits(network)
        if lim is None or lim.title_max is None:
            continue
        for opts, loc in ((entry.options, here), (d.options, ("defaults",))):
            own = (opts or {}).get(network)
            title = own.get("title") if isinstance(own, dict) else None
            if not isinstance(title, str):
                title = None
            if title is None:
                continue
            if len(title.strip()) > lim.title_max:
                f.at(
                    (*loc, "options", network, "title"),
                    f"the {network} title is {len(title.strip()):,} "
                    f"characters; {network} allows {lim.title_max:,}",
                    "title_too_long_for_target",
                )
            break  # the entry's title wins over the defaults'


class _LimitCheck:
    """Each occurrence's content against its targets' bounds; one problem per (network, bound), naming the
    first occurrence over it and how many are."""

    def __init__(
        self, f: _File, loc: tuple[str | int, ...], note: str, networks: Sequence[str], media: Sequence[Path]
    ):

        self.f, self.loc, self.note, self.max_content = f, loc, note, MAX_CONTENT
        found = ((n, f.networks.limits(n)) for n in dict.fromkeys(networks))
        self.limits = [(n, lim) for n, lim in found if lim is not None]
        self.has_video = any(_kind(m) == "video" for m in media)
        self.has_media = bool(media)
        self.found: dict[tuple[str, str], list[Any]] = {}

    def _add(self, network: str, code: str, local: datetime, message: str) -> None:
        hit = self.found.setdefault((network, code), [message, local, 0])
        hit[2] += 1

    def check(self, text: str, local: datetime) -> None:
        if len(text) > self.max_content:
            self._add(
                "*",
                "content_too_long_for_target",
                local,
                f"content is {len(text):,} characters; a post takes at most {self.max_content:,}",
            )
        for name, lim in self.limits:
            n = self.f.networks.text_length(name, text)
            unit = {"utf16": " (counted in UTF-16 units)", "graphemes": " (graphemes)"}.get(lim.text_unit, "")
            # a limit each server sets (Mastodon's instances) is checked against the account when the post is
            # created: the files alone cannot tell it
            if n > lim.max_text and lim.max_text < self.max_content and not lim.max_text_per_server:
                self._add(
                    name,
                    "content_too_long_for_target",
                    local,
                    f"content is {n:,} characters{unit}; {name} allows {lim.max_text:,}",
                )
            if lim.description_max_bytes is not None:
                sent = text
                for char, by in lim.replaced_characters.items():  # sent as look-alikes (`<` as `‹`)
                    sent = sent.replace(char, by)
                size = len(sent.encode("utf-8"))
                if size > lim.description_max_bytes:
                    self._add(
                        name,
                        "content_too_long_for_target",
                        local,
                        f"content is {size:,} bytes in UTF-8; {name} allows "
                        f"{lim.description_max_bytes:,} bytes (its description)",
                    )
            if (
                lim.photo_title_max is not None
                and self.has_media
                and not self.has_video
                and n > lim.photo_title_max
            ):
                self._add(
                    name,
                    "title_too_long_for_target",
                    local,
                    f"content is {n:,} characters{unit}; a {name} photo post's text is its title, "
                    f"{lim.photo_title_max:,} at most (add a video, or shorten it)",
                )
            if lim.text_or_media and not text.strip() and not self.has_media:
                self._add(
                    name,
                    "content_required_for_target",
                    local,
                    f"{name} needs text or media: the content is empty and there is no media",
                )

    def report(self) -> None:
        for (_network, code), (message, local, count) in self.found.items():
            when = (
                f" (on {local:%Y-%m-%d %H:%M}"
                + (f" and {count - 1} more occurrence{'s' if count > 2 else ''}" if count > 1 else "")
                + ")"
            )
            self.f.at(self.loc, message.replace("content is", f"content{self.note} is", 1) + when, code)

"""What a recipe folder means, as plain data: the interface between reading files and acting on them.

`recipes.load.load(path)` turns a file or a folder of YAML into `Loaded` (occurrences and problems, per file);
`recipes.plan` diffs the occurrences against the backend (through the client) and `recipes.apply` makes it so.
Nothing here talks to a backend or reads a file.

Identity: an occurrence's `key` is `<set>/<file>#<entry>` for an entry with `at`, and
`<set>/<file>#<entry>@<local ISO date-time, minutes>` for one occurrence of a series, where `<file>` is the
path relative to the recipe folder in POSIX form. Posts made from an occurrence carry the labels
`LABEL_SET` = the set name and `LABEL_KEY` = the key (see `GET /v1/posts?label=…`), and an idempotencyKey
derived from the key (`idempotency_key`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from socialpub_tui.client.networks import Networks

LABEL_SET = "socialpub.recipe/set"
"""The post label naming the recipe set that owns a post (the folder's name, or `--set NAME`)."""
LABEL_KEY = "socialpub.recipe/key"
"""The post label holding the occurrence key a post was made from."""
LABEL_ZONE = "socialpub.recipe/zone"
"""The post label holding the zone its local time was read in. A file without `timezone:` is read in the
default zone of the machine that applies it (the profile's, else the system's); once its posts exist, their zone
is kept (`recipes.plan.pin_zones`), so a machine with another default (cron, CI) never moves them."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a file: where (1-based line and column; 0 when the whole file is concerned) and what
    was expected, in a sentence a user can act on."""

    file: str  # relative to the recipe folder (POSIX), or the path given when it was a single file
    line: int
    column: int
    message: str
    code: str = "invalid_recipe"  # invalid_yaml | invalid_recipe | media_not_found | ...

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True)
class GenerateSpec:
    """An entry's `generate:` for one occurrence: the request of POST /v1/generations, the prompt's variables
    replaced, the defaults applied (aspectRatio 9:16; durationSec 5 for a video, None for an image)."""

    type: str  # image | video
    prompt: str
    aspect_ratio: str
    duration_sec: int | None
    sources: tuple[Path | str, ...] = ()  # a Path: a local file (absolute); a str: an https URL

    def body(self, source_urls: list[str] | None = None) -> dict[str, Any]:
        """The body of POST /v1/generations (`source_urls`: the sources as URLs, local files uploaded)."""
        body: dict[str, Any] = {"type": self.type, "prompt": self.prompt, "aspectRatio": self.aspect_ratio}
        if self.type == "video":
            body["durationSec"] = self.duration_sec
            if source_urls:
                body["sourceUrls"] = list(source_urls)
        return body

    def digest(self, file_hash: Any) -> str | None:
        """sha256 of what the generation is made from: type, prompt, aspect ratio, duration, and each source (a
        local file by the sha256 of its bytes, a URL as written). None when a local source cannot be read."""
        parts: list[str] = []
        for s in self.sources:
            if isinstance(s, Path):
                h = file_hash(s)
                if h is None:
                    return None
                parts.append("file:" + h)
            else:
                parts.append("url:" + s)
        text = json.dumps(
            [self.type, self.prompt, self.aspect_ratio, self.duration_sec, parts], ensure_ascii=False
        )
        return hashlib.sha256(text.encode()).hexdigest()


GENERATION_KEY_PREFIX = "recipe-gen-"


def generation_key(occurrence_key: str, spec_digest: str, retry: int = 0) -> str:
    """The generation's idempotencyKey for an occurrence and a generate spec (≤ 200 characters). `retry` > 0
    when the generations made with the earlier keys failed (they were refunded): a re-apply makes a new one."""
    digest = hashlib.sha256(f"{occurrence_key}\n{spec_digest}".encode()).hexdigest()[:40]
    return f"{GENERATION_KEY_PREFIX}{digest}" if retry == 0 else f"{GENERATION_KEY_PREFIX}{digest}-{retry}"


@dataclass(frozen=True)
class Occurrence:
    """One post to exist: an entry with `at`, or one date-time of a series."""

    set_name: str
    file: str  # relative to the recipe folder, POSIX
    entry: str  # the entry's `id`
    line: int  # the entry's line in its file (for messages)
    local: datetime | None  # a series occurrence's wall-clock date-time in `zone` (naive); None for `at`
    zone: str  # the IANA zone of the file
    scheduled_at: datetime  # aware, UTC
    content: str  # variables already substituted
    media: tuple[Path, ...]  # absolute paths, globs expanded in sorted order
    targets: tuple[str | dict[str, Any], ...]  # exactly as `targets` of POST /v1/posts (camelCase keys)
    options: dict[str, Any] = field(default_factory=dict)  # exactly as `options` of POST /v1/posts
    generate: GenerateSpec | None = None  # made before the post; its file goes first in the post's media

    @property
    def key(self) -> str:
        base = f"{self.set_name}/{self.file}#{self.entry}"
        return base if self.local is None else f"{base}@{self.local.strftime('%Y-%m-%dT%H:%M')}"


def idempotency_key(occurrence_key: str, generation: int = 0) -> str:
    """The post's idempotencyKey for an occurrence (≤ 200 characters whatever the key's length). `generation`
    > 0 when an earlier post for the same occurrence was cancelled and the occurrence must exist again."""
    digest = hashlib.sha256(occurrence_key.encode()).hexdigest()[:40]
    return f"recipe-{digest}" if generation == 0 else f"recipe-{digest}-{generation}"


@dataclass
class FileResult:
    """One YAML file: its occurrences when it is valid, else its problems (a file with any problem yields no
    occurrence: each file is all-or-nothing)."""

    file: str
    path: Path
    occurrences: list[Occurrence] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    zone_given: bool = True  # False: the file has no `timezone:` and was read in the default zone

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class Loaded:
    """A file or a folder, read: `root` is the recipe folder (a single file's parent), `set_name` the set."""

    root: Path
    set_name: str
    files: list[FileResult] = field(default_factory=list)
    networks: Networks = field(
        default_factory=Networks
    )  # the server's (GET /v1/networks) it was checked with

    @property
    def occurrences(self) -> list[Occurrence]:
        return [o for f in self.files for o in f.occurrences]

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.files for p in f.problems]

"""Media of recipes: uploaded once per content, remembered across runs.

The backend re-encodes images, so the hash of what it stores is not the hash of the local file. What is
remembered is therefore keyed by the LOCAL file's content (sha256 of its bytes): a small JSON state file maps each
local hash to the media it was uploaded as (url, key, expiry). It lets `apply` skip an upload, and `plan` tell
that a post's media URLs came from the very files the recipe names (an unchanged file is no change).

Where the state file lives (`state_path`): in the data dir — `<data dir>/recipes/media-state.json` for the
embedded backend (the `SOCIALPUB_DATA_DIR` of the profile, else the platform's data dir, as the backend
chooses), `<data dir>/recipes/media-state-<server>.json` for a server. It describes what one backend holds, so it
stays with that backend's data rather than with the recipes (a copied recipe folder, a read-only checkout, a
second backend do not inherit stale URLs), and it needs no HOME: cron gives the data dir.

A remembered upload is checked before use (GET /v1/media/:key): gone, or expiring within `EXPIRY_MARGIN`
(media live 30 days unless a scheduled post holds them), it is uploaded again. Without a remembered upload,
`GET /v1/media?sourceSha256=` finds an upload of the same bytes by any client (the backend records the hash of
what it was sent), else `?sha256=` a file stored unchanged, before uploading. `plan` reads the `sourceSha256` of
a post's media URLs it does not know (`source_hashes`): posts made by another machine (a laptop, then CI, on one
server) are not seen as changed. Losing the state file costs a few reads, never a wrong post.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from socialpub_tui.client.errors import ApiError

STATE_VERSION = 1
EXPIRY_MARGIN = timedelta(hours=1)


def state_path(profile: Any, env: Mapping[str, str] | None = None) -> Path:
    """The state file for a client profile (socialpub_tui.client.config.Profile)."""
    env = os.environ if env is None else env
    if getattr(profile, "kind", "embedded") == "embedded" and getattr(profile, "data_dir", None):
        base = Path(profile.data_dir)
    elif env.get("SOCIALPUB_DATA_DIR"):
        base = Path(env["SOCIALPUB_DATA_DIR"]).expanduser()
    else:
        from platformdirs import user_data_dir

        base = Path(user_data_dir("socialpub", appauthor=False))  # the backend's default data dir
    if getattr(profile, "kind", "embedded") == "embedded":
        return base / "recipes" / "media-state.json"
    server = re.sub(r"[^A-Za-z0-9.-]+", "_", re.sub(r"^https?://", "", str(profile.url or "server")))[:80]
    return base / "recipes" / f"media-state-{server}.json"


class Hasher:
    """sha256 of local files, cached by (path, size, mtime): a watch re-plans without re-reading every file."""

    def __init__(self) -> None:
        self._cache: dict[Path, tuple[int, int, str]] = {}
        self._lock = threading.Lock()

    def __call__(self, path: Path) -> str | None:
        try:
            st = path.stat()
        except OSError:
            return None
        with self._lock:
            hit = self._cache.get(path)
        if hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
            return hit[2]
        digest = hashlib.sha256()
        try:
            with path.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
        except OSError:
            return None
        value = digest.hexdigest()
        with self._lock:
            self._cache[path] = (st.st_size, st.st_mtime_ns, value)
        return value


@dataclass
class Remembered:
    url: str
    key: str
    expires_at: str | None = None
    bytes: int = 0
    file: str = ""  # the local file it was last uploaded from (for people reading the state)


@dataclass
class MediaState:
    """local sha256 → the upload, persisted as JSON (written atomically, merged with concurrent writers)."""

    path: Path | None
    entries: dict[str, Remembered] = field(default_factory=dict)
    _removed: set[str] = field(default_factory=set)
    _dirty: bool = False

    @classmethod
    def load(cls, path: Path | None) -> MediaState:
        return cls(path, _read(path))

    def url_hashes(self) -> dict[str, str]:
        return {r.url: sha for sha, r in self.entries.items()}

    def remember(self, sha: str, entry: Remembered) -> None:
        self.entries[sha] = entry
        self._removed.discard(sha)
        self._dirty = True

    def forget(self, sha: str) -> None:
        self.entries.pop(sha, None)
        self._removed.add(sha)
        self._dirty = True

    def save(self) -> None:
        if self.path is None or not self._dirty:
            return
        merged = _read(self.path)  # another run (cron beside a watch) may have written since
        for sha in self._removed:
            merged.pop(sha, None)
        merged.update(self.entries)
        self.entries = merged
        data = {
            "version": STATE_VERSION,
            "media": {
                sha: {"url": r.url, "key": r.key, "expiresAt": r.expires_at, "bytes": r.bytes, "file": r.file}
                for sha, r in sorted(merged.items())
            },
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)
        self._removed.clear()
        self._dirty = False


def _read(path: Path | None) -> dict[str, Remembered]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # absent or unreadable: uploads happen again, nothing worse
    out: dict[str, Remembered] = {}
    media = data.get("media") if isinstance(data, dict) else None
    for sha, raw in (media or {}).items():
        if isinstance(raw, dict) and raw.get("url") and raw.get("key"):
            out[sha] = Remembered(
                str(raw["url"]),
                str(raw["key"]),
                raw.get("expiresAt", raw.get("expires_at")),
                int(raw.get("bytes") or 0),
                str(raw.get("file") or ""),
            )
    return out


def _expiring(expires_at: str | None, now: datetime) -> bool:
    if not expires_at:
        return False
    try:
        when = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return True
    return when <= now + EXPIRY_MARGIN


class MediaStore:
    """`url_for(path)`: the media URL of a local file, uploading it only when no live upload of the same content
    is known. One check per content per run (`checked`)."""

    def __init__(self, client: Any, state: MediaState, hasher: Hasher | None = None) -> None:
        self.client = client
        self.state = state
        self.hasher = hasher or Hasher()
        self.checked: dict[str, str] = {}  # sha → url, verified live in this run
        self.uploaded = 0
        self.reused = 0
        self._sources: dict[str, str | None] = {}  # url → its sourceSha256 (None: none), read in this run
        self._lock = threading.Lock()

    def url_for(self, path: Path) -> str:
        sha = self.hasher(path)
        if sha is None:
            raise FileNotFoundError(f"{path}: cannot read the file")
        with self._lock:
            if sha in self.checked:
                return self.checked[sha]
        url = self._find(sha) or self._upload(path, sha)
        with self._lock:
            self.checked[sha] = url
        return url

    def _find(self, sha: str) -> str | None:
        now = datetime.now(UTC)
        known = self.state.entries.get(sha)
        if known is not None:
            try:
                item = self.client.get_media(known.key)
            except ApiError as err:
                if err.status not in (404, 410):
                    raise
                item = None
            if item is not None and not _expiring(item.expires_at, now):
                if item.expires_at != known.expires_at:
                    self.state.remember(
                        sha, Remembered(known.url, known.key, item.expires_at, known.bytes, known.file)
                    )
                self.reused += 1
                return known.url
            self.state.forget(sha)
        # Not known here (a new state file, another machine's upload): an upload of the same bytes, by the hash of
        # what was sent (sourceSha256), else of what is stored (a video stored unchanged before it was recorded).
        for field_name in ("source_sha256", "sha256"):
            try:
                page = self.client.list_media(**{field_name: sha}, limit=5)
            except (ApiError, TypeError):
                continue  # a server without the filter
            for item in page.items:
                if getattr(item, field_name, None) == sha and not _expiring(item.expires_at, now):
                    self.state.remember(sha, Remembered(item.url, item.key, item.expires_at, item.bytes))
                    self.reused += 1
                    return str(item.url)
        return None

    def source_hashes(self, urls: Iterable[str]) -> dict[str, str]:
        """url → the sha256 of the bytes it was uploaded from, for media URLs this state does not know (another
        machine's uploads): read from the backend (GET /v1/media/:key, its `sourceSha256`), once per URL a run."""

        for url in dict.fromkeys(urls):
            if url not in self._sources:
                try:
                    item = self.client.get_media(url.rstrip("/").rsplit("/", 1)[-1])
                except ApiError:
                    item = None
                self._sources[url] = item.source_sha256 if item is not None and item.url == url else None
        return {url: sha for url, sha in self._sources.items() if sha}

    def _upload(self, path: Path, sha: str) -> str:
        media = self.client.upload_media_file(path)
        self.state.remember(sha, Remembered(media.url, media.key, None, media.bytes, str(path)))
        self.uploaded += 1
        return str(media.url)

"""The content guard (issue 15): a configurable policy every prompt passes before a provider is called.

It runs in the worker, on the generation job, before production (backend/services/generations.py): a refused
prompt was accepted (202, credits charged, as spec 3.3 says) and ends `failed` with an `error` that names what was
refused and what to do, and a full refund. A provider's own refusal (`ProviderRefused`) ends the same way.

The policy is a list of terms, matched case-insensitively on whole words (and whole phrases for terms of several
words) after Unicode normalisation (NFKC, case folding, accents and punctuation ignored), so `GORE`, `Gore!` and
`göre` all match `gore`, while `gorgeous` does not:

* a small built-in list (`DEFAULT_TERMS`: sexual content, minors, graphic violence, weapons and attacks, self-harm,
  hate symbols, deepfakes), unless `SOCIALPUB_GENERATION_GUARD_DEFAULTS=false`;
* plus `SOCIALPUB_GENERATION_GUARD_TERMS` (comma-separated);
* plus `SOCIALPUB_GENERATION_GUARD_FILE`, one term per line (`#` starts a comment); a line `!term` removes a
  built-in term (e.g. `!suicide` for a prevention charity).

The file is read again when it changes (its modification time), so an operator can edit it without a restart.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TERMS: tuple[str, ...] = (
    # sexual content, and anything sexual about minors
    "porn",
    "porno",
    "pornography",
    "pornographic",
    "nsfw",
    "hentai",
    "explicit sex",
    "sex scene",
    "sexual content",
    "csam",
    "child abuse",
    "child nudity",
    "naked child",
    "nude child",
    "underage nude",
    # graphic violence
    "gore",
    "gory",
    "beheading",
    "decapitation",
    "decapitated",
    "dismemberment",
    "dismembered",
    "mutilation",
    "mutilated",
    "massacre",
    "torture",
    # weapons and attacks
    "bomb making",
    "build a bomb",
    "make a bomb",
    "school shooting",
    "mass shooting",
    "terrorist attack",
    # self-harm
    "self harm",
    "suicide",
    # hate
    "swastika",
    "white power",
    "ethnic cleansing",
    # impersonation
    "deepfake",
    "deep fake",
)


def normalise(text: str) -> str:
    """NFKC, case-folded, accents dropped, every run of non-alphanumerics one space, padded with spaces."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " " + " ".join(re.split(r"[\W_]+", bare)).strip() + " "


@dataclass(frozen=True)
class Refusal:
    term: str

    @property
    def reason(self) -> str:
        return (
            f"the prompt was refused by the content policy (it mentions \u201c{self.term}\u201d): "
            "rephrase it without such content and create it again"
        )


@dataclass(frozen=True)
class GuardPolicy:
    terms: tuple[str, ...]

    @classmethod
    def build(
        cls, *, defaults: bool = True, extra: Iterable[str] = (), removed: Iterable[str] = ()
    ) -> GuardPolicy:
        gone = {normalise(t) for t in removed if t.strip()}
        chosen: dict[str, str] = {}
        for term in [*(DEFAULT_TERMS if defaults else ()), *extra]:
            key = normalise(term)
            if key.strip() and key not in gone:
                chosen.setdefault(key, term.strip())
        return cls(tuple(chosen.values()))

    def check(self, *texts: str) -> Refusal | None:
        """The first term found in any of `texts`, None when they pass."""
        for text in texts:
            hay = normalise(text)
            for term in self.terms:
                if normalise(term) in hay:
                    return Refusal(term)
        return None


def _read_file(path: Path) -> tuple[list[str], list[str]]:
    extra: list[str] = []
    removed: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        (removed if line.startswith("!") else extra).append(line.lstrip("!"))
    return extra, removed


_cache: dict[tuple[object, ...], GuardPolicy] = {}
_lock = threading.Lock()


def policy(settings) -> GuardPolicy:  # type: ignore[no-untyped-def]  # settings: backend.config.Settings or a test's stand-in with the same fields
    """The policy the settings describe (built once per configuration and version of the file). A guard file that
    cannot be read is an error (OSError): the generation job retries, and the operator sees it in the log, rather
    than prompts passing unchecked."""
    path = settings.generation_guard_file
    stamp = None
    if path is not None:
        st = Path(path).stat()
        stamp = (str(path), st.st_mtime_ns, st.st_size)
    key = (settings.generation_guard_defaults, settings.generation_guard_terms, stamp)
    with _lock:
        found = _cache.get(key)
    if found is not None:
        return found
    extra = [t for t in (settings.generation_guard_terms or "").split(",") if t.strip()]
    removed: list[str] = []
    if path is not None:
        more, removed = _read_file(Path(path))
        extra += more
    built = GuardPolicy.build(defaults=settings.generation_guard_defaults, extra=extra, removed=removed)
    with _lock:
        _cache[key] = built
    return built

"""Bluesky's text: its length in graphemes and UTF-8 bytes (app.bsky.feed.post `text`: maxGraphemes 300,
maxLength 3000), and its rich-text facets (app.bsky.richtext.facet: links, mentions, hashtags on UTF-8 byte
offsets, start inclusive, end exclusive), detected as the official client `@atproto/api` does (rich-text
detection.ts): a link is an http(s) URL after a start, a space or "(", one trailing . , ; : ! ? cut and an
unbalanced ")" cut; a mention is "@handle" (a domain name) resolved to its DID, left out when it does not resolve;
a tag is "#word" (or "＃"), not all digits, trailing punctuation cut, at most 64 graphemes. Bare domains (without
http(s)://) are not made links: the official client checks them against the list of top-level domains, which
socialpub does not carry. Pure code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex

from backend.schemas.text import graphemes, utf8_len

MAX_GRAPHEMES = 300
MAX_BYTES = 3000
MAX_TAG_GRAPHEMES = 64
MAX_TAG_BYTES = 640

_URL = regex.compile(r"(^|\s|\()(https?://\S+)", regex.IGNORECASE | regex.MULTILINE)
_MENTION = regex.compile(r"(^|\s|\()(@)([a-zA-Z0-9.-]+)(\b)", regex.MULTILINE)
_HANDLE = regex.compile(
    r"^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$"
)
_INVISIBLE = "\u00ad\u2060\u200a\u200b\u200c\u200d\u20e2"
_TAG = regex.compile(
    rf"(^|\s)[#＃]((?!\ufe0f)[^\s{_INVISIBLE}]*[^\d\s\p{{P}}{_INVISIBLE}]+[^\s{_INVISIBLE}]*)?",
    regex.MULTILINE,
)
_TRAILING_PUNCT = regex.compile(r"\p{P}+$")


@dataclass(frozen=True)
class Span:
    """A facet candidate: its feature kind (link / mention / tag), its value (the URI, the handle, the tag) and its
    UTF-8 byte range in the text."""

    kind: str
    value: str
    byte_start: int
    byte_end: int


def _bytes_at(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def _span(text: str, kind: str, value: str, start: int, end: int) -> Span:
    return Span(kind, value, _bytes_at(text, start), _bytes_at(text, end))


def detect(text: str) -> list[Span]:
    """Links, mentions and tags of `text`, in text order, never overlapping."""
    found: list[tuple[int, int, Span]] = []
    for m in _MENTION.finditer(text):
        handle = m.group(3)
        if not _HANDLE.match(handle):
            continue
        start = m.start(2)
        end = m.end(3)
        found.append((start, end, _span(text, "mention", handle.lower(), start, end)))
    for m in _URL.finditer(text):
        uri = m.group(2)
        start = m.start(2)
        if uri[-1] in ".,;:!?":
            uri = uri[:-1]
        if uri.endswith(")") and "(" not in uri:
            uri = uri[:-1]
        found.append((start, start + len(uri), _span(text, "link", uri, start, start + len(uri))))
    for m in _TAG.finditer(text):
        tag = m.group(2)
        if not tag:
            continue
        tag = _TRAILING_PUNCT.sub("", tag.strip())
        if not tag or graphemes(tag) > MAX_TAG_GRAPHEMES or utf8_len(tag) > MAX_TAG_BYTES:
            continue
        start = m.start(2) - 1  # the "#"
        end = m.start(2) + len(tag)
        found.append((start, end, _span(text, "tag", tag, start, end)))
    found.sort(key=lambda f: (f[0], -f[1]))
    out: list[Span] = []
    last_end = -1
    for start, end, span in found:
        if start >= last_end:  # facets can not overlap (docs.bsky.app post-richtext)
            out.append(span)
            last_end = end
    return out


def facets(spans: list[Span], resolve: Callable[[str], str | None]) -> list[dict[str, Any]]:
    """app.bsky.richtext.facet objects; `resolve(handle)` gives a mention's DID (None: the mention is left out —
    the official client would send an empty DID, which the PDS refuses)."""
    out: list[dict[str, Any]] = []
    for s in spans:
        if s.kind == "link":
            feature = {"$type": "app.bsky.richtext.facet#link", "uri": s.value}
        elif s.kind == "tag":
            feature = {"$type": "app.bsky.richtext.facet#tag", "tag": s.value}
        else:
            did = resolve(s.value)
            if not did:
                continue
            feature = {"$type": "app.bsky.richtext.facet#mention", "did": did}
        out.append({"index": {"byteStart": s.byte_start, "byteEnd": s.byte_end}, "features": [feature]})
    return out


def first_link(spans: list[Span]) -> str | None:
    return next((s.value for s in spans if s.kind == "link"), None)

"""A status's length as a Mastodon instance counts it (app/validators/status_length_validator.rb): the extended
grapheme clusters of `spoiler_text` joined with the text, where each URL with a scheme counts
URL_PLACEHOLDER_CHARS (23) characters whatever its length, and a remote mention `@user@domain` counts as `@user`.
Over the instance's `max_characters` the instance answers 422 "Validation failed: Text character limit of N
exceeded"; socialpub refuses such a target at creation instead (rules)."""

from __future__ import annotations

import regex

# StatusLengthValidator::URL_PLACEHOLDER_CHARS; /api/v2/instance reports it as characters_reserved_per_url
URL_PLACEHOLDER_CHARS = 23

# URLs with their scheme (extract_url_without_protocol: false): up to white space, without the trailing
# punctuation twitter-text leaves out of a URL (belief on the exact set: the strictest common reading).
_URL = regex.compile(r"(?<![\p{L}\p{N}_/@.])https?://[^\s<>\"]+", regex.IGNORECASE)
_TRAILING = ".,:;!?'\")]}"
# Account::MENTION_RE: @user or @user@domain, not inside a word or a path
_MENTION = regex.compile(
    r"(?<=^|[^/\p{L}\p{N}_])@([a-z0-9_]+)(?:@[\p{L}\p{N}_.-]+[\p{L}\p{N}_]+)?", regex.IGNORECASE
)


def graphemes(text: str) -> int:
    """User-perceived characters (Unicode extended grapheme clusters), Ruby's each_grapheme_cluster.size."""
    return len(regex.findall(r"\X", text))


def _strip_url(url: str) -> str:
    while url and url[-1] in _TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break  # a balanced parenthesis belongs to the URL (Wikipedia links)
        url = url[:-1]
    return url


def countable_text(text: str, url_chars: int = URL_PLACEHOLDER_CHARS) -> str:
    """The text as the instance measures it: each URL replaced by `url_chars` placeholder characters and each
    remote mention by its local part."""
    if not text.strip():
        return ""
    out: list[str] = []
    pos = 0
    for m in _URL.finditer(text):
        url = _strip_url(m.group(0))
        if not regex.match(r"https?://[^/\s]+\.[^/\s]+|https?://[^/\s]*localhost", url, regex.IGNORECASE):
            continue  # no host with a dot: twitter-text does not see a URL there, its characters count
        out.append(text[pos : m.start()])
        out.append("x" * url_chars)
        pos = m.start() + len(url)
    rest = "".join(out) + text[pos:]
    return str(_MENTION.sub(lambda m: "@" + m.group(1), rest))


def status_length(text: str, spoiler_text: str = "", url_chars: int = URL_PLACEHOLDER_CHARS) -> int:
    """The length the instance compares with its `max_characters`: graphemes of the content warning and the text."""
    return graphemes(spoiler_text + countable_text(text, url_chars))

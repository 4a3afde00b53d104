"""The link card of a post whose first link has no media (app.bsky.embed.external: `uri`, `title`,
`description` required, `thumb` an image blob ≤ 1,000,000 bytes), read from the page's Open Graph tags as the
docs' "website card embeds" recipe does (og:title, og:description, og:image; else <title>). Pure code: the page's
bytes are fetched by the caller (through the SSRF-guarded fetcher)."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

PAGE_MAX_BYTES = 1_000_000  # the head of a page is enough; a larger page is not read for a card
TITLE_MAX = 300
DESCRIPTION_MAX = 1000


@dataclass(frozen=True)
class Card:
    uri: str
    title: str
    description: str
    image: str | None


class _Meta(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, str] = {}
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            key = (a.get("property") or a.get("name") or "").lower()
            if key and key not in self.meta and "content" in a:
                self.meta[key] = a["content"].strip()
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def parse(uri: str, page: bytes) -> Card:
    p = _Meta()
    p.feed(page.decode("utf-8", "replace"))
    m = p.meta
    title = m.get("og:title") or m.get("twitter:title") or p.title.strip()
    description = m.get("og:description") or m.get("twitter:description") or m.get("description") or ""
    image = m.get("og:image") or m.get("twitter:image") or None
    return Card(
        uri,
        " ".join(title.split())[:TITLE_MAX],
        " ".join(description.split())[:DESCRIPTION_MAX],
        urljoin(uri, image) if image else None,
    )

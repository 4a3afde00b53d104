"""From a prompt and a brand to a design: palette, composition, typography, texts and mood. Pure and deterministic.

The rules, in order (docs/configuration.md, "Generation providers", says the same to users):
- Theme: the prompt's words are matched against THEMES' keywords; the theme with the most hits wins (ties: the
  one whose first hit comes first). No hit: a theme-less design whose hue, composition and typeface come from a
  hash of the prompt and the seed.
- Palette: colours named in the prompt ("red", "teal", "#1e90ff") first, then the brand's colours (most important
  first), then the theme's; the first is the background, the next two the accents. Text is white or near-black,
  whichever contrasts more with the background; missing accents are derived from the background's hue.
- Composition (the decorative layout): the theme's, unless the prompt names one of COMPOSITIONS' keywords.
- Typography: the theme's typeface (sans, serif, mono), weight and case, unless the prompt asks ("serif",
  "elegant", "code", "bold", ...).
- Texts: text in quotes in the prompt is used as written (the first quote the headline, the others the following
  lines); otherwise the prompt's sentences, stripped of a leading instruction ("create a poster of ..."), are the
  headline and the lines. The brand's name and tagline close the piece.
- Mood (the soundtrack's key and tempo): the theme's, else from the hash.
"""

from __future__ import annotations

import colorsys
import hashlib
import re
from dataclasses import dataclass

from backend.generation.provider import Brand

RGB = tuple[int, int, int]


def hex_to_rgb(value: str) -> RGB | None:
    v = value.strip().lstrip("#")
    if len(v) == 3:
        v = "".join(c * 2 for c in v)
    if not re.fullmatch(r"[0-9a-fA-F]{6}", v):
        return None
    return int(v[0:2], 16), int(v[2:4], 16), int(v[4:6], 16)


def luminance(c: RGB) -> float:
    """WCAG relative luminance."""

    def chan(x: int) -> float:
        s = x / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (chan(x) for x in c)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: RGB, b: RGB) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def shade(c: RGB, lightness_delta: float, hue_delta: float = 0.0, sat_scale: float = 1.0) -> RGB:
    h, light, s = colorsys.rgb_to_hls(*(x / 255 for x in c))
    h = (h + hue_delta) % 1.0
    light = min(1.0, max(0.0, light + lightness_delta))
    s = min(1.0, max(0.0, s * sat_scale))
    r, g, b = colorsys.hls_to_rgb(h, light, s)
    return round(r * 255), round(g * 255), round(b * 255)


def hsl(h: float, s: float, light: float) -> RGB:
    r, g, b = colorsys.hls_to_rgb(h % 1.0, light, s)
    return round(r * 255), round(g * 255), round(b * 255)


COLOR_WORDS: dict[str, str] = {
    "red": "#d7263d",
    "crimson": "#b0172f",
    "scarlet": "#e0301e",
    "orange": "#f46036",
    "amber": "#ffb000",
    "yellow": "#ffd23f",
    "gold": "#c9a227",
    "golden": "#d4a017",
    "green": "#2e9e5b",
    "lime": "#a4de02",
    "olive": "#708238",
    "mint": "#98e2c6",
    "teal": "#0f8b8d",
    "turquoise": "#1fc7c1",
    "cyan": "#00b7eb",
    "blue": "#1e5fd6",
    "navy": "#14213d",
    "indigo": "#3f37c9",
    "purple": "#7b2cbf",
    "violet": "#8f5cf7",
    "lavender": "#b8a9e8",
    "pink": "#ff5d8f",
    "magenta": "#d0218f",
    "rose": "#e8798f",
    "coral": "#ff6f59",
    "peach": "#ffb38a",
    "brown": "#7a4b2a",
    "beige": "#e8dcc4",
    "cream": "#f6eedf",
    "white": "#f7f7f2",
    "black": "#111111",
    "grey": "#7d8491",
    "gray": "#7d8491",
    "silver": "#c0c5cc",
    "charcoal": "#2b2d31",
    "burgundy": "#7a1f2b",
    "emerald": "#07975f",
    "sky": "#7cc6fe",
    "sand": "#e6cfa1",
}


@dataclass(frozen=True)
class Theme:
    keywords: tuple[str, ...]
    colors: tuple[str, ...]  # background first, then accents
    composition: str
    typeface: str  # sans, serif, mono
    bold: bool
    uppercase: bool
    mood: str  # the soundtrack's: bright, calm, dark, energetic, warm


THEMES: dict[str, Theme] = {
    "ocean": Theme(
        (
            "ocean",
            "sea",
            "beach",
            "wave",
            "waves",
            "surf",
            "water",
            "marine",
            "coast",
            "island",
            "swim",
            "summer",
            "tropical",
        ),
        ("#0b4f6c", "#01baef", "#f4d8a5", "#20bf55"),
        "waves",
        "sans",
        True,
        False,
        "calm",
    ),
    "sunset": Theme(
        ("sunset", "sunrise", "dusk", "dawn", "evening", "warm", "horizon", "desert"),
        ("#3d1e6d", "#ff7b54", "#ffb26b", "#ffd56b"),
        "sun",
        "serif",
        True,
        False,
        "warm",
    ),
    "forest": Theme(
        (
            "forest",
            "nature",
            "green",
            "plant",
            "plants",
            "garden",
            "eco",
            "organic",
            "leaf",
            "leaves",
            "tree",
            "trees",
            "sustainable",
            "hiking",
            "outdoor",
        ),
        ("#1b4332", "#95d5b2", "#d8f3dc", "#f4a259"),
        "blobs",
        "sans",
        True,
        False,
        "calm",
    ),
    "night": Theme(
        (
            "night",
            "midnight",
            "space",
            "star",
            "stars",
            "galaxy",
            "moon",
            "cosmic",
            "dream",
            "sleep",
            "astronomy",
        ),
        ("#0d1b2a", "#e0e1dd", "#778da9", "#ffd166"),
        "stars",
        "serif",
        False,
        False,
        "dark",
    ),
    "tech": Theme(
        (
            "tech",
            "technology",
            "ai",
            "data",
            "digital",
            "software",
            "code",
            "coding",
            "cloud",
            "app",
            "saas",
            "future",
            "cyber",
            "developer",
            "api",
            "startup",
            "robot",
            "crypto",
        ),
        ("#0a0f24", "#00e5ff", "#7c4dff", "#e8eaf6"),
        "grid",
        "mono",
        True,
        False,
        "energetic",
    ),
    "luxury": Theme(
        (
            "luxury",
            "elegant",
            "premium",
            "jewelry",
            "jewellery",
            "wedding",
            "fashion",
            "classic",
            "perfume",
            "exclusive",
            "gala",
            "vintage",
        ),
        ("#111111", "#c9a227", "#f6eedf", "#8c6d1f"),
        "frame",
        "serif",
        False,
        True,
        "warm",
    ),
    "sale": Theme(
        (
            "sale",
            "discount",
            "offer",
            "deal",
            "deals",
            "off",
            "promo",
            "promotion",
            "friday",
            "clearance",
            "limited",
            "launch",
            "announcing",
            "announcement",
            "new",
            "save",
        ),
        ("#d7263d", "#ffd23f", "#111111", "#ffffff"),
        "diagonal",
        "sans",
        True,
        True,
        "energetic",
    ),
    "food": Theme(
        (
            "coffee",
            "food",
            "cafe",
            "bakery",
            "restaurant",
            "recipe",
            "chocolate",
            "breakfast",
            "pizza",
            "cook",
            "cooking",
            "kitchen",
            "tea",
            "bread",
            "dinner",
            "menu",
        ),
        ("#4a2c2a", "#f2cc8f", "#e07a5f", "#f4f1de"),
        "rings",
        "serif",
        True,
        False,
        "warm",
    ),
    "fresh": Theme(
        (
            "spring",
            "fresh",
            "flower",
            "flowers",
            "pastel",
            "soft",
            "bloom",
            "easter",
            "baby",
            "skincare",
            "beauty",
        ),
        ("#fde2e4", "#e2ece9", "#bee1e6", "#cdb4db"),
        "blobs",
        "serif",
        False,
        False,
        "bright",
    ),
    "winter": Theme(
        (
            "winter",
            "snow",
            "christmas",
            "holiday",
            "holidays",
            "cold",
            "ice",
            "frost",
            "xmas",
            "ski",
            "new year",
        ),
        ("#0b3954", "#f7f7f2", "#bfd7ea", "#e63946"),
        "confetti",
        "serif",
        True,
        False,
        "bright",
    ),
    "party": Theme(
        (
            "party",
            "celebrate",
            "celebration",
            "birthday",
            "fun",
            "festival",
            "music",
            "concert",
            "dance",
            "anniversary",
            "carnival",
        ),
        ("#240046", "#ff006e", "#ffbe0b", "#3a86ff"),
        "confetti",
        "sans",
        True,
        True,
        "energetic",
    ),
    "minimal": Theme(
        ("minimal", "minimalist", "clean", "simple", "modern", "quiet", "white"),
        ("#f5f5f0", "#222222", "#e63946", "#a8a8a8"),
        "minimal",
        "sans",
        False,
        False,
        "calm",
    ),
    "fitness": Theme(
        (
            "fitness",
            "sport",
            "sports",
            "gym",
            "run",
            "running",
            "energy",
            "workout",
            "training",
            "marathon",
            "strong",
            "yoga",
        ),
        ("#101010", "#c6ff00", "#ffffff", "#ff3d00"),
        "diagonal",
        "sans",
        True,
        True,
        "energetic",
    ),
    "health": Theme(
        (
            "health",
            "care",
            "medical",
            "wellness",
            "clinic",
            "doctor",
            "mindful",
            "calm",
            "relax",
            "meditation",
            "spa",
        ),
        ("#e8f6f3", "#2a9d8f", "#264653", "#e9c46a"),
        "rings",
        "sans",
        False,
        False,
        "calm",
    ),
}

COMPOSITIONS: dict[str, tuple[str, ...]] = {
    "waves": ("waves", "wavy", "flowing", "flow"),
    "sun": ("sun", "sunny", "circle", "horizon"),
    "blobs": ("blobs", "organic", "shapes", "playful"),
    "stars": ("stars", "starry", "sparkle", "sparkles", "glitter"),
    "grid": ("grid", "dots", "geometric", "blueprint"),
    "frame": ("frame", "framed", "border", "editorial", "invitation"),
    "diagonal": ("diagonal", "stripes", "dynamic", "bold", "sporty"),
    "confetti": ("confetti", "festive", "bubbles"),
    "rings": ("rings", "ripples", "concentric", "target"),
    "minimal": ("minimal", "minimalist", "whitespace", "simple"),
}
ALL_COMPOSITIONS = tuple(COMPOSITIONS)
TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "serif": (
        "serif",
        "elegant",
        "classic",
        "editorial",
        "vintage",
        "book",
        "literary",
        "invitation",
        "wedding",
    ),
    "mono": ("mono", "monospace", "code", "terminal", "typewriter", "developer", "coding"),
}
BOLD_WORDS = ("bold", "loud", "big", "huge", "strong", "impact", "shout")
MOODS = ("bright", "calm", "dark", "energetic", "warm")

_WORD = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|[\w%']+", re.UNICODE)
_QUOTE = re.compile(r"\"([^\"]{1,200})\"|“([^”]{1,200})”|«\s?([^»]{1,200}?)\s?»")
_LEAD = re.compile(
    r"^\s*(?:please\s+)?(?:(?:create|make|generate|design|render|produce|draw|build|give me|show)\s+)?"
    r"(?:(?:a|an|the|some|me)\s+)?(?:(?:short|simple|nice|beautiful|vertical|square|horizontal|animated|"
    r"cinematic|bold|clean|modern|minimal|vibrant|colou?rful)\s+)*"
    r"(?:(?:image|picture|photo|poster|video|clip|post|banner|graphic|story|reel|ad|advert|illustration|"
    r"visual|flyer|card|thumbnail|cover|announcement|teaser|slide)s?\s+)?"
    r"(?:(?:of|about|for|showing|with|that says|saying|announcing|featuring|on)\s+)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Palette:
    background: RGB
    background2: RGB  # the gradient's other end
    accent: RGB
    accent2: RGB
    text: RGB
    muted: RGB  # secondary text


@dataclass(frozen=True)
class Design:
    theme: str | None
    palette: Palette
    composition: str
    typeface: str
    bold: bool
    uppercase: bool
    mood: str
    headline: str
    lines: tuple[str, ...]
    brand_name: str | None
    tagline: str | None
    digest: bytes  # 32 bytes from the prompt, the brand and the seed: every random choice comes from it

    def rand(self, salt: str) -> float:
        """A deterministic number in [0, 1) for `salt`."""
        h = hashlib.sha256(self.digest + salt.encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64


def words_of(prompt: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(prompt)]


def _pick_theme(words: list[str], prompt_lower: str) -> str | None:
    best: tuple[int, int, str] | None = None
    for name, theme in THEMES.items():
        hits = [i for i, w in enumerate(words) if w in theme.keywords]
        hits += [prompt_lower.find(k) for k in theme.keywords if " " in k and k in prompt_lower]
        if not hits:
            continue
        key = (-len(hits), min(hits), name)
        if best is None or key < best:
            best = key
    return best[2] if best else None


def _colors_named(words: list[str]) -> list[RGB]:
    out: list[RGB] = []
    for w in words:
        c = hex_to_rgb(w) if w.startswith("#") else (hex_to_rgb(COLOR_WORDS[w]) if w in COLOR_WORDS else None)
        if c is not None and c not in out:
            out.append(c)
    return out


def _palette(colors: list[RGB], digest_rand: float) -> Palette:
    bg = colors[0]
    h, light, s = colorsys.rgb_to_hls(*(x / 255 for x in bg))
    # the gradient's other end: a little darker for a light background, lighter for a dark one, hue nudged
    bg2 = shade(bg, -0.10 if light > 0.55 else 0.09, hue_delta=0.03 if digest_rand < 0.5 else -0.03)
    text = (250, 250, 246) if contrast(bg, (250, 250, 246)) >= contrast(bg, (20, 20, 24)) else (20, 20, 24)

    def usable(c: RGB) -> bool:
        return contrast(c, bg) >= 1.6

    accents = [c for c in colors[1:] if usable(c)]
    if len(accents) < 2:
        # derived from the background's hue: complementary, then a split-complementary, lightness away from bg
        target = 0.72 if light < 0.5 else 0.38
        for dh in (0.5, 0.42, 0.58, 0.12):
            cand = hsl(h + dh, max(0.55, s), target)
            if usable(cand) and cand not in accents:
                accents.append(cand)
            if len(accents) >= 2:
                break
    while len(accents) < 2:
        accents.append(text)
    muted = shade(text, -0.22 if luminance(text) > 0.5 else 0.25)
    return Palette(bg, bg2, accents[0], accents[1], text, muted)


def _clean_sentence(s: str, max_words: int) -> str:
    s = _LEAD.sub("", s.strip(), count=1).strip(" ,:;-–—")
    words = s.split()
    if len(words) > max_words:
        words = words[:max_words]
        while words and words[-1].lower() in (
            "a",
            "an",
            "the",
            "and",
            "or",
            "of",
            "for",
            "to",
            "with",
            "in",
            "on",
        ):
            words.pop()
    s = " ".join(words).strip(" ,:;-–—")
    return s[:1].upper() + s[1:] if s else s


def texts_of(prompt: str) -> tuple[str, tuple[str, ...]]:
    """The headline and the following lines (at most 3) to set, from the prompt."""
    quotes = [next(g for g in m.groups() if g) for m in _QUOTE.finditer(prompt)]
    quotes = [q.strip() for q in quotes if q.strip()]
    if quotes:
        return quotes[0][:120], tuple(q[:140] for q in quotes[1:4])
    sentences = [s for s in re.split(r"(?<=[.!?;])\s+|\n+", prompt) if s.strip()]
    cleaned = [
        c
        for c in (_clean_sentence(s.rstrip(".;"), 9 if i == 0 else 14) for i, s in enumerate(sentences))
        if c
    ]
    if not cleaned:
        return prompt.strip()[:60], ()
    return cleaned[0], tuple(cleaned[1:4])


def _brand_text(brand: Brand, *keys: str) -> str | None:
    lowered = {k.lower().replace("_", ""): v for k, v in brand.extra.items()}
    for key in keys:
        v = lowered.get(key.lower().replace("_", ""))
        if v and v.strip():
            return v.strip()[:120]
    return None


def design_for(prompt: str, brand: Brand, seed: int) -> Design:
    digest = hashlib.sha256(
        "\x1f".join([prompt, brand.name or "", ",".join(brand.colors), str(seed)]).encode()
    ).digest()

    def rand(salt: str) -> float:
        return int.from_bytes(hashlib.sha256(digest + salt.encode()).digest()[:8], "big") / 2**64

    words = words_of(prompt)
    lower = prompt.lower()
    theme_name = _pick_theme(words, lower)
    theme = THEMES.get(theme_name) if theme_name else None

    colors = _colors_named(words)
    for c in brand.colors:
        rgb = hex_to_rgb(c)
        if rgb is not None and rgb not in colors:
            colors.append(rgb)
    if theme:
        colors += [c for c in (hex_to_rgb(x) for x in theme.colors) if c is not None and c not in colors]
    if not colors:
        hue = rand("hue")
        dark = rand("dark") < 0.5
        colors = [
            hsl(hue, 0.55, 0.18 if dark else 0.9),
            hsl(hue + 0.5, 0.8, 0.6 if dark else 0.45),
            hsl(hue + 0.1, 0.7, 0.7 if dark else 0.35),
        ]
    palette = _palette(colors, rand("bg2"))

    composition = (
        theme.composition if theme else ALL_COMPOSITIONS[int(rand("composition") * len(ALL_COMPOSITIONS))]
    )
    for name, keys in COMPOSITIONS.items():
        if any(w in keys for w in words):
            composition = name
            break

    typeface = theme.typeface if theme else ("sans", "serif", "mono")[int(rand("typeface") * 3) % 3]
    bold = theme.bold if theme else rand("bold") < 0.6
    uppercase = theme.uppercase if theme else rand("upper") < 0.25
    for face, keys in TYPE_WORDS.items():
        if any(w in keys for w in words):
            typeface = face
            break
    if any(w in BOLD_WORDS for w in words):
        bold, uppercase = True, True

    mood = theme.mood if theme else MOODS[int(rand("mood") * len(MOODS))]
    headline, lines = texts_of(prompt)
    tagline = _brand_text(brand, "tagline", "slogan", "uniqueValueProp")
    return Design(
        theme=theme_name,
        palette=palette,
        composition=composition,
        typeface=typeface,
        bold=bold,
        uppercase=uppercase,
        mood=mood,
        headline=headline,
        lines=lines,
        brand_name=(brand.name or "").strip()[:60] or None,
        tagline=tagline,
        digest=digest,
    )

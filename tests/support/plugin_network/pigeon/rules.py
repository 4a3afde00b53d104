"""A message of 280 characters at most, with up to 4 media; something to carry is needed."""

from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.rules.common import CONTENT_REQUIRED, CONTENT_TOO_LONG, NetworkRules
from pigeon import NETWORK
from pigeon.options import PigeonOptions


def validate(content: str, media: Sequence[MediaRef], options: PigeonOptions | None) -> list[str]:
    codes = []
    if len(content) > NETWORK.limits.max_text:
        codes.append(CONTENT_TOO_LONG)
    if not content.strip() and not media:
        codes.append(CONTENT_REQUIRED)
    return codes


def build(content: str, media: Sequence[MediaRef], options: PigeonOptions | None) -> Payload:
    opts = options or PigeonOptions()
    kind = "text" if not media else "image" if len(media) == 1 else "carousel"
    return Payload(
        "pigeon", kind, content, None, tuple(media[:4]), {"altitude": opts.altitude, "ring": bool(opts.ring)}
    )


RULES = NetworkRules("pigeon", NETWORK.limits.max_text, 0, 4, None, validate, build)

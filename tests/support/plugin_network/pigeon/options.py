"""`options.pigeon`."""

from typing import Literal

from pydantic import Field

from backend.schemas.options import WireModel


class PigeonOptions(WireModel):
    """`options.pigeon`: how high the pigeon flies, and whether it rings on arrival."""

    altitude: Literal["low", "high"] = Field(default="low", title="Altitude")
    ring: bool | None = Field(default=None, title="Ring on arrival")

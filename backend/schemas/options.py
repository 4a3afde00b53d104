"""The base of every network's options model (`options.<network>` of POST /v1/posts): camelCase on the wire,
snake_case in Python, unknown fields refused (`extra='forbid'`), each value of its field's JSON type (`strict`, as
the request bodies that embed them: backend/schemas/common.py CamelModel).

Each network's model lives in its package (backend/networks/<name>/options.py); the API builds `options` of its
request bodies from the registry (backend/services/networks.py), and GET /v1/networks gives each model's JSON
Schema to the front end.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel, strict=True)

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)

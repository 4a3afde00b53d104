"""The networks a server publishes to, as the front end sees them: GET /v1/networks (an extension), read once per
client (`client.networks()`), so that the CLI's choices, the TUI's badges and colours, the compose screen's checks
and the recipes' targets and options are those of the server in use — a plugin network of a remote server
included. Tolerant of what it does not know: a network missing from the list (an old post's, a newer server's)
still shows, with its name's first two letters as its badge, and is checked by the server only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from backend.schemas.text import text_length

if TYPE_CHECKING:
    from backend.schemas.networks import NetworkLimits, NetworkOut


class Networks:
    """The list of GET /v1/networks, by name."""

    def __init__(self, items: Iterable[NetworkOut] = ()) -> None:
        self.items: tuple[NetworkOut, ...] = tuple(items)
        self._by_name = {n.name: n for n in self.items}

    def __iter__(self) -> Iterator[NetworkOut]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return f"<Networks {', '.join(self.names())}>"

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def sandbox_names(self) -> tuple[str, ...]:
        """The networks a sandbox account can be connected on."""
        return tuple(n.name for n in self.items if n.sandbox)

    def get(self, name: str) -> NetworkOut | None:
        return self._by_name.get(name)

    def badge(self, name: str) -> str:
        found = self._by_name.get(name)
        return found.badge if found is not None else name[:2].upper()

    def colour(self, name: str) -> str:
        found = self._by_name.get(name)
        return found.colour if found is not None else "white"

    def label(self, name: str) -> str:
        found = self._by_name.get(name)
        return found.label if found is not None else name

    def limits(self, name: str) -> NetworkLimits | None:
        found = self._by_name.get(name)
        return found.limits if found is not None else None

    def options_schema(self, name: str) -> dict[str, Any] | None:
        """The JSON Schema of `options.<name>`, None when the network takes no options (or is unknown)."""
        found = self._by_name.get(name)
        return found.options if found is not None else None

    def text_length(self, name: str, text: str) -> int:
        """The text's length as the network counts it (its `textUnit`; characters for a unit not known here: the
        server's own check is the one that counts)."""
        limits = self.limits(name)
        return text_length(limits.text_unit if limits is not None else "characters", text)


def parse(body: Any) -> Networks:
    """The answer of GET /v1/networks."""
    from backend.schemas.networks import NetworkList

    return Networks(NetworkList.model_validate(body).items)

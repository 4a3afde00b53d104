"""The socialpub backend client: one client that speaks /v1 and nothing else, for the CLI, the TUI and recipes.

    from socialpub_tui.client import connect, ApiError
    with connect() as api:                      # profile / env / embedded, as `socialpub` resolves it
        print(api.get_workspace().name)

Transports: embedded (the backend in-process, `socialpub_tui.client.embedded`), remote (base URL + API key),
and any `httpx` transport (e.g. `httpx.MockTransport`) for tests. Errors: `ApiError` (see `errors`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from socialpub_tui.client.errors import ApiError, ConfigError, NetworkError

if TYPE_CHECKING:
    from socialpub_tui.client._core import RetryPolicy
    from socialpub_tui.client.aio import AsyncClient
    from socialpub_tui.client.config import Profile
    from socialpub_tui.client.sync import Client

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "ConfigError",
    "NetworkError",
    "RetryPolicy",
    "connect",
    "connect_async",
]


def __getattr__(name: str) -> Any:
    if name == "Client":
        from socialpub_tui.client.sync import (
            Client,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
        )

        return Client
    if name == "AsyncClient":
        from socialpub_tui.client.aio import (
            AsyncClient,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
        )

        return AsyncClient
    if name == "RetryPolicy":
        from socialpub_tui.client._core import (
            RetryPolicy,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
        )

        return RetryPolicy
    raise AttributeError(name)


def _remote_kwargs(profile: Profile, use_session: bool) -> dict[str, Any]:
    from socialpub_tui.client.config import (
        load_session,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
    )

    session = load_session(profile) if use_session else None
    if not profile.api_key and not session:
        hint = f"set ${profile.api_key_env}" if profile.api_key_env else "add api_key_env to the profile"
        raise ConfigError(f"no API key for {profile.url}: {hint}", code="no_api_key")
    return {
        "base_url": profile.url,
        "api_key": profile.api_key,
        "session_token": session.get("token") if session else None,
    }


def connect(
    profile: str | Profile | None = None, *, worker: bool = True, use_session: bool = True, **options: Any
) -> Client:
    """A sync client for a profile (name, Profile, or None to resolve from the environment and config).

    Embedded profiles start the backend in-process (with a worker thread unless `worker=False`); remote ones
    use the profile's API key and the session saved by `socialpub login` for key management.
    """
    from socialpub_tui.client.config import (  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
        Profile,
        resolve_profile,
    )
    from socialpub_tui.client.sync import (
        Client,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
    )

    prof = profile if isinstance(profile, Profile) else resolve_profile(profile)
    if prof.kind == "embedded":
        from socialpub_tui.client import (
            embedded,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
        )

        kwargs = embedded.client_kwargs(prof.data_dir, worker=worker)
    else:
        kwargs = _remote_kwargs(prof, use_session)
    return Client(**(kwargs | options))


def connect_async(
    profile: str | Profile | None = None, *, worker: bool = True, use_session: bool = True, **options: Any
) -> AsyncClient:
    """The async twin of `connect()` (the TUI's)."""
    from socialpub_tui.client.aio import (
        AsyncClient,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
    )
    from socialpub_tui.client.config import (  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
        Profile,
        resolve_profile,
    )

    prof = profile if isinstance(profile, Profile) else resolve_profile(profile)
    if prof.kind == "embedded":
        from socialpub_tui.client import (
            embedded,  # deferred: httpx, pydantic, the schemas (~200 ms) until a client is made
        )

        kwargs = embedded.client_kwargs(prof.data_dir, worker=worker, asynchronous=True)
    else:
        kwargs = _remote_kwargs(prof, use_session)
    return AsyncClient(**(kwargs | options))

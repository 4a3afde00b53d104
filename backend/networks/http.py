"""Transport-level helpers shared by the adapters: sending with classified transport failures, Retry-After."""

from __future__ import annotations

from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from backend import clock
from backend.networks.base import NetworkError


def send(
    client: httpx.Client, method: str, url: str, *, network: str, write: bool = False, **kw: Any
) -> httpx.Response:
    """One HTTP call. Transport failures become retriable NetworkErrors; a write call that may have reached
    the network (timeout after sending, connection cut) is marked ambiguous: check find_existing first."""
    try:
        return client.request(method, url, **kw)
    except httpx.ConnectError as exc:
        raise NetworkError(
            "retriable",
            f"could not connect to {network} ({exc.__class__.__name__}); it will be retried",
            code="connect_error",
        ) from exc
    except httpx.TimeoutException as exc:
        raise NetworkError(
            "retriable",
            f"{network} did not answer in time; it will be retried",
            code="timeout",
            ambiguous=write,
        ) from exc
    except httpx.TransportError as exc:
        raise NetworkError(
            "retriable",
            f"the connection to {network} failed ({exc.__class__.__name__}); it will be retried",
            code="transport_error",
            ambiguous=write,
        ) from exc


def retry_after_s(resp: httpx.Response) -> float | None:
    return parse_retry_after(resp.headers.get("retry-after"))


def parse_retry_after(value: str | None) -> float | None:
    """A Retry-After header (seconds, or an HTTP date read on the project's clock) as seconds from now."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - clock.now()).total_seconds())


def json_or_none(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None

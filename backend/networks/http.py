"""Transport-level helpers shared by the adapters: sending with classified transport failures, Retry-After."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks import fence
from backend.networks.base import NetworkError
from backend.outbound.guarded import AddressRefused

READS = frozenset(
    {"GET", "HEAD", "OPTIONS"}
)  # the only methods sent without the fence (backend/networks/fence)


def send(
    client: httpx.Client, method: str, url: str, *, network: str, write: bool = False, **kw: Any
) -> httpx.Response:
    """One HTTP call. Transport failures become retriable NetworkErrors; a write call that may have reached
    the network (timeout after sending, connection cut) is marked ambiguous: check find_existing first. A host
    the address rule refuses (backend/outbound/guarded.py: the networks whose hosts come from users) is a
    permanent failure, `address_refused`, nothing sent.

    Every request that is not a read passes the fence first (backend/networks/fence.py): inside a job, it is
    sent only while the job's claim still holds it, with part of its lease left (as the store says, or with a
    local store as it last said while the clock is far enough from the lease's end); otherwise fence.LeaseLost is
    raised and nothing is sent."""
    if method.upper() not in READS:
        fence.check()
    try:
        return client.request(method, url, **kw)
    except AddressRefused as exc:  # a host from a user that the address rule refuses: nothing was sent
        raise NetworkError("permanent", f"{network}: {exc.refusal.message}", code="address_refused") from exc
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


def json_or_none(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None

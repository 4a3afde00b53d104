"""Who an account is and where it lives (https://atproto.com/specs/handle, /specs/did, read 2026-11-28): a handle
resolves to a DID (`com.atproto.identity.resolveHandle` on a PDS or the entryway), the DID to its document
(did:plc from the PLC directory, did:web from https://<host>/.well-known/did.json), whose first `#atproto_pds`
service of type `AtprotoPersonalDataServer` is the account's PDS; the handle is the account's only if the document
links back to it (`alsoKnownAs: at://<handle>`).

A PDS named by a document on a loopback or private address is called only when it is one of the configured hosts
(an operator's own test PDS): a document is anyone's data, socialpub's worker does not follow it onto this
machine's network."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from backend.networks.base import NetworkError
from backend.networks.bluesky.xrpc import classify
from backend.networks.http import json_or_none, send
from backend.outbound.guard import host_is_local

PLATFORM = "bluesky"


def origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}".lower()


def permitted(url: str, hosts: Mapping[str, str]) -> str | None:
    """Why socialpub will not call this server named by a DID document, or None."""
    p = urlsplit(url)
    if origin(url) in {origin(h) for h in hosts.values() if h}:
        return None
    if p.scheme != "https" or not p.hostname:
        return f"the account's server {url!r} is not an https URL"
    if host_is_local(p.hostname, private=True) or p.hostname.endswith(".local"):
        return f"the account's server {url!r} is on a loopback or private address"
    return None


def resolve_handle(client: httpx.Client, base: str, handle: str) -> str:
    resp = send(
        client,
        "GET",
        f"{base.rstrip('/')}/xrpc/com.atproto.identity.resolveHandle",
        network=PLATFORM,
        params={"handle": handle},
    )
    body = json_or_none(resp)
    if resp.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("did"), str):
        raise classify(resp)
    return str(body["did"])


def did_document(client: httpx.Client, hosts: Mapping[str, str], did: str) -> dict[str, Any]:
    if did.startswith("did:plc:"):
        url = f"{hosts['plc'].rstrip('/')}/{quote(did, safe=':')}"
    elif did.startswith("did:web:"):
        host = did[len("did:web:") :]
        if ":" in host:  # a path-level did:web: atproto takes hostname-level ones only
            raise NetworkError(
                "permanent", f"{did} is not a hostname-level did:web", code="InvalidDid", http_status=400
            )
        url = f"https://{host}/.well-known/did.json"
    else:
        # the caller's identifier, refused before any call: a 400 of theirs, not a network's failure
        raise NetworkError(
            "permanent", f"{did} is not a did:plc or did:web", code="InvalidDid", http_status=400
        )
    refusal = permitted(url, hosts)
    if refusal is not None:
        raise NetworkError("permanent", refusal, code="pds_not_allowed")
    resp = send(client, "GET", url, network=PLATFORM)
    body = json_or_none(resp)
    if resp.status_code == 404:
        raise NetworkError("permanent", f"no DID document for {did}", code="DidNotFound", http_status=404)
    if resp.status_code != 200 or not isinstance(body, dict):
        raise NetworkError(
            "retriable" if resp.status_code >= 500 else "permanent",
            f"the DID document of {did} could not be read (HTTP {resp.status_code})",
            code=f"http_{resp.status_code}",
            http_status=resp.status_code,
        )
    return body


def pds_of(doc: Mapping[str, Any]) -> str | None:
    """The first service `#atproto_pds` of type AtprotoPersonalDataServer (its id relative or absolute)."""
    for service in doc.get("service") or []:
        if not isinstance(service, dict):
            continue
        sid = str(service.get("id") or "")
        if sid.endswith("#atproto_pds") and service.get("type") == "AtprotoPersonalDataServer":
            endpoint = service.get("serviceEndpoint")
            return str(endpoint).rstrip("/") if isinstance(endpoint, str) else None
    return None


def handles_of(doc: Mapping[str, Any]) -> list[str]:
    return [
        str(a)[len("at://") :].lower()
        for a in doc.get("alsoKnownAs") or []
        if isinstance(a, str) and a.startswith("at://")
    ]


def pds_for(client: httpx.Client, hosts: Mapping[str, str], did: str) -> str:
    """The account's PDS, from its DID document; NetworkError when it has none socialpub may call."""
    pds = pds_of(did_document(client, hosts, did))
    if not pds:
        raise NetworkError(
            "permanent", f"the DID document of {did} names no PDS (#atproto_pds)", code="PdsNotFound"
        )
    refusal = permitted(pds, hosts)
    if refusal is not None:
        raise NetworkError("permanent", refusal, code="pds_not_allowed")
    return pds

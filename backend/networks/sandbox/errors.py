"""Fault injection: a switch per error code of ../shared/NETWORKS.md's tables (issue 17 item 6).

    configure_errors("facebook", "190/463", times=1)           # Python (the sandbox database opened last)
    POST /_sandbox/errors {"code": "190/463", "times": 1}       # a served emulator (`socialpub sandbox serve`)

Arms the emulator to answer the next `times` matching calls with exactly that network's error body and HTTP status
(and its Retry-After or `is_transient` where the network sends one), instead of serving them. A call matches when
its path matches `path`: an endpoint name of the network (ENDPOINTS; the default is the network's publishing call,
its first `write` of a publication) or a regular expression searched in the request path (any method). Several
switches may be armed at once; a call consumes the first that matches. Kept in the sandbox database
(`emulator_setting`, key `errors:<network>`) like the OAuth switches, so a served emulator and a test share them.

Each network's emulator holds its catalogue (`FAULTS`, its package's emulator_errors.py): each code as NETWORKS.md
names it → its HTTP status, body builder, and NETWORKS.md's action (`ACTIONS`): what the product must make of it,
and its endpoint names (`ERROR_ENDPOINTS`). Codes marked `extra` are not in NETWORKS.md's tables (a network's
token refusals as docs/sandbox.md describes them, a plain 5xx where the table has none).
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from backend.networks.sandbox.core import DEFAULT_ENDPOINT, emulator_type, json_response, switch_key, write
from backend.networks.sandbox.faults import Fault
from backend.networks.sandbox.store import SandboxSetting

MAX_TIMES = 1000


def _catalogue(platform: str) -> dict[str, Fault]:
    """The network's codes (ValueError for a network the sandbox does not know)."""
    faults: dict[str, Fault] = emulator_type(platform).FAULTS
    return faults


def _endpoints(platform: str) -> dict[str, tuple[tuple[str, ...], str]]:
    return emulator_type(platform).ERROR_ENDPOINTS


def errors_settings(platform: str) -> dict[str, Any]:
    """What is armed (in order), the endpoint names and the network's codes."""
    catalogue = _catalogue(platform)
    row = SandboxSetting.get_or_none(SandboxSetting.key == switch_key(platform))
    armed = list((row.value or {}).get("armed") or []) if row else []
    return {
        "armed": armed,
        "endpoints": sorted(_endpoints(platform)),
        "codes": {code: f.public() for code, f in catalogue.items()},
    }


def configure_errors(
    platform: str, code: str | None = None, *, times: int = 1, path: str | None = None, reset: bool = False
) -> dict[str, Any]:
    """Arm `code` (NETWORKS.md's name) for the next `times` calls matching `path` (an endpoint name of ENDPOINTS,
    default "publish", or a regular expression searched in the request path). reset=True first disarms
    everything (alone: just that). Raises ValueError for an unknown code (naming the known ones), a bad `times` or
    `path`. Returns errors_settings(platform)."""
    catalogue = _catalogue(platform)
    endpoints = _endpoints(platform)
    if code is not None:
        if code not in catalogue:
            raise ValueError(f"unknown {platform} error code {code!r}: one of {', '.join(catalogue)}")
        if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= MAX_TIMES:
            raise ValueError(f"times: an integer from 1 to {MAX_TIMES}")
        if path is not None:
            if not isinstance(path, str) or not path:
                raise ValueError("path: an endpoint name or a regular expression")
            if path not in endpoints:
                try:
                    re.compile(path)
                except re.error as exc:
                    raise ValueError(
                        f"path: not an endpoint name ({', '.join(sorted(endpoints))}) "
                        f"nor a valid regular expression ({exc})"
                    ) from None
    elif not reset:
        raise ValueError("give a code to arm (or reset)")
    key = switch_key(platform)
    with write():
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        armed = [] if reset or row is None else list((row.value or {}).get("armed") or [])
        if code is not None:
            armed.append({"code": code, "times": times, "path": path or DEFAULT_ENDPOINT})
        if row is None:
            SandboxSetting.create(key=key, value={"armed": armed})
        else:
            SandboxSetting.update(value={"armed": armed}).where(SandboxSetting.key == key).execute()
    return errors_settings(platform)


def control(platform: str, method: str, body: Any) -> httpx.Response:
    """`/_sandbox/errors` on a served emulator (not a real network path): GET lists what is armed and the codes;
    POST {"code", "times"?, "path"?} arms one, {"reset": true} disarms everything (both: reset, then arm)."""
    if method == "GET":
        return json_response(200, errors_settings(platform))
    body = body if isinstance(body, dict) else {}
    unknown = set(body) - {"code", "times", "path", "reset"}
    try:
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}: code, times, path, reset")
        return json_response(
            200,
            configure_errors(
                platform,
                body.get("code"),
                times=body.get("times", 1),
                path=body.get("path"),
                reset=bool(body.get("reset", False)),
            ),
        )
    except ValueError as exc:
        return json_response(
            400,
            {
                "error": "invalid_request",
                "error_description": str(exc),
                "codes": sorted(_catalogue(platform)),
            },
        )

"""What the HTTP providers share: one httpx client per provider, calls with a timeout and bounded retries.

Transient failures (a timeout or a connection error, 429, 500, 502, 503, 504) are retried up to `max_attempts`
in all, waiting as the response's `Retry-After` says (seconds or an HTTP date, capped at `max_retry_wait_s`) or
else an exponential backoff; after the last one the call raises ProviderUnavailable (with the last Retry-After, so
the job can wait that long). Any other answer is returned to the provider, which classifies it. API keys travel
only in headers, are kept as SecretStr (never in a repr, a log line or an error message).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from backend.generation.provider import ProviderUnavailable
from backend.outbound.retry_after import retry_after_s

log = logging.getLogger("socialpub.generation")
TRANSIENT = {429, 500, 502, 503, 504}


class RemoteSettings(BaseSettings):
    """The settings every HTTP provider has (each subclass sets its env_prefix)."""

    base_url: str
    api_key: SecretStr | None = Field(default=None, repr=False)
    model: str
    timeout_s: float = Field(default=120.0, gt=0)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    max_attempts: int = Field(default=4, ge=1, le=10)
    backoff_s: float = Field(default=1.0, ge=0)
    max_retry_wait_s: float = Field(default=60.0, ge=0)


class Caller:
    """Calls one service with its settings; `sleep` is injectable so tests do not wait."""

    def __init__(
        self,
        settings: RemoteSettings,
        service: str,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        headers: dict[str, str] | None = None,
        send_key: bool = True,
    ) -> None:
        """send_key=False: a client for downloads from another host (a CDN's signed URL): no API key sent."""
        self.settings = settings
        self.service = service
        self.sleep = sleep
        auth = (
            {"Authorization": f"Bearer {settings.api_key.get_secret_value()}"}
            if settings.api_key and send_key
            else {}
        )
        self.client = httpx.Client(
            base_url=settings.base_url.rstrip("/") + "/",
            transport=transport,
            headers={**auth, **(headers or {})},
            timeout=httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s),
            follow_redirects=True,
        )

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        last_wait: float | None = None
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                response = self.client.request(method, url, **kw)
            except httpx.TimeoutException:
                reason, last_wait = "timed out", None
            except httpx.TransportError as exc:
                reason, last_wait = f"could not be reached ({type(exc).__name__})", None
            else:
                if response.status_code not in TRANSIENT:
                    return response
                reason = f"answered {response.status_code}"
                last_wait = retry_after_s(response)
            log.warning(
                "generation: %s %s (attempt %d of %d)",
                self.service,
                reason,
                attempt,
                self.settings.max_attempts,
            )
            if attempt < self.settings.max_attempts:
                wait = last_wait if last_wait is not None else self.settings.backoff_s * 2 ** (attempt - 1)
                self.sleep(min(wait, self.settings.max_retry_wait_s))
        raise ProviderUnavailable(
            f"The {self.service} service is unavailable right now ({reason}); try again later.",
            retry_after_s=last_wait,
        )

    def close(self) -> None:
        self.client.close()


def error_of(response: httpx.Response) -> tuple[str, str, str]:
    """(message, type, code) of an OpenAI-style error body `{"error": {"message", "type", "code"}}`, tolerant of
    other shapes."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300], "", ""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or ""), str(err.get("type") or ""), str(err.get("code") or "")
    if isinstance(err, str):
        return err, "", ""
    if isinstance(body, dict):
        return str(body.get("message") or body.get("detail") or ""), "", str(body.get("code") or "")
    return "", "", ""

"""Schemathesis against the ASGI app, inside the suite (bounded examples): fails on any 5xx and on any
status the OpenAPI document does not declare. New routes are fuzzed automatically."""

from __future__ import annotations

import pytest
import schemathesis
import schemathesis.specs.openapi.checks  # noqa: F401  (registers the OpenAPI checks)
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from schemathesis.checks import CHECKS

from backend.api.app import create_app

CHECK_FUNCS = CHECKS.get_by_names(["not_a_server_error", "status_code_conformance"])
MAX_EXAMPLES = 20


@pytest.fixture
def fuzz_app(settings, owner, monkeypatch):  # type: ignore[no-untyped-def]
    """Random `url` values must never become DNS look-ups or traffic: the fetcher's resolver is stubbed."""
    from backend.media import fetch

    def no_dns(host: str, port: int) -> list[str]:
        raise OSError("no DNS in tests")

    monkeypatch.setattr(fetch, "RESOLVER", no_dns)
    settings.rate_limit_per_minute = 1_000_000
    return create_app(settings), owner


def _headers(path: str, method: str, owner) -> dict[str, str]:  # type: ignore[no-untyped-def]
    session = path.startswith("/v1/api-keys") or path.startswith("/v1/auth") or method == "PATCH" and path == "/v1/workspace"
    if session:
        return {"Authorization": f"Bearer {owner.session_token}"}
    return {"x-api-key": owner.api_key}


def test_no_5xx_and_only_declared_statuses(fuzz_app):
    app, owner = fuzz_app
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 5
    for operation in operations:
        _fuzz(operation, _headers(operation.path, operation.method.upper(), owner), failures)
    assert not failures, "\n".join(failures[:15])


def _fuzz(operation, headers: dict[str, str], failures: list[str]) -> None:  # type: ignore[no-untyped-def]
    @hsettings(max_examples=MAX_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck),
               derandomize=True)
    @given(case=operation.as_strategy())
    def run(case) -> None:  # type: ignore[no-untyped-def]
        response = case.call(headers=headers)
        try:
            case.validate_response(response, checks=CHECK_FUNCS)
        except Exception as exc:  # noqa: BLE001  (collect every failure, report them together)
            failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: {str(exc)[:300]}")

    run()

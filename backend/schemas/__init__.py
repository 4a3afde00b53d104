"""The wire format: pydantic models of every request and response body, one module per resource.

Pure pydantic: no store, no services. The API, the client, the CLI and the TUI all import these,
so the wire format is defined once (camelCase on the wire, snake_case in Python).
"""

from backend.schemas.common import CamelModel, CamelOut, ErrorBody, Ok

__all__ = ["CamelModel", "CamelOut", "ErrorBody", "Ok"]

"""Cheaper construction of the genuine httpx objects exchanged with the in-process emulators.

An `httpx.Request` built from a URL string re-parses and re-validates the URL character by character (with the
query parameters merged in by a second parse), and both `Request` and `Response` run their generic body
encoding and header defaulting: together ~2/3 of what an in-process sandbox call costs outside the emulator.
For the shapes the adapters and emulators use (an http(s) URL on a plain host, a dict of str headers, one body
given as bytes, a form dict of str values or JSON), `request` and `json_response` build the same objects
directly: same URL components, same raw headers in the same order, same body bytes, read like httpx reads
them (`empty_response` likewise for bodyless answers). Anything else goes through httpx's own constructors.

Doing so sets a few of httpx's private attributes (the parsed-URL tuple, the read body, the content decoder)
to what httpx itself sets. Each shortcut is therefore compared once, attribute by attribute, with httpx's own
constructors on sample inputs when first used (`_fast_ok`); if the installed httpx builds anything
differently (another version), every call takes httpx's own path.
"""

from __future__ import annotations

import json as _json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import httpx

# the characters httpx leaves as they are in a path / a query (RFC 3986 unreserved + its path / query safe sets:
# printable ASCII but space " # < > and, in a path, ? ` { }); '%' is kept as is by httpx in both
_PATH = r"[!$%&'()*+,\-./0-9:;=@A-Z\[\\\]^_a-z|~]"
_QUERY = r"[!$%&'()*+,\-./0-9:;=?@A-Z\[\\\]^_`a-z{|}~]"
_SIMPLE_URL = re.compile(rf"(https?)://([a-z0-9-]+(?:\.[a-z0-9-]+)*)((?:/{_PATH}*)?)(?:\?({_QUERY}*))?")
_IPV4_STYLE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")


def _private_type(make: Any) -> Any:
    """A type httpx uses internally (its parsed-URL tuple, its identity decoder), or None if this httpx has
    none such: the shortcut needing it then stays off."""
    try:
        return make()
    except Exception:  # noqa: BLE001
        return None


_ParseResult: Any = _private_type(lambda: type(httpx.URL("https://example.invalid/")._uri_reference))
_IdentityDecoder: Any = _private_type(lambda: type(httpx.Response(200, content=b"x")._decoder))
_new_response = httpx.Response.__new__
_dumps = _json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_BODY_METHODS = ("POST", "PUT", "PATCH")
_JSON_CT = (b"Content-Type", b"application/json")
_FORM_CT = (b"Content-Type", b"application/x-www-form-urlencoded")


def _parts(url: str) -> tuple[str, str, str, str | None] | None:
    """(scheme, host, path, query) of a plain http(s) URL whose components httpx keeps as they are, else None."""
    m = _SIMPLE_URL.fullmatch(url)
    if m is None:
        return None
    scheme, host, path, query = m.groups()
    if _IPV4_STYLE.fullmatch(host):
        return None
    if "." in path:  # httpx drops "." and ".." segments
        segments = path.split("/")
        if "." in segments or ".." in segments:
            return None
    return scheme, host, path, query


_PARTS: dict[str, tuple[str, str, str, str | None] | None] = {}


def _url(url: str, params: Any) -> tuple[httpx.URL, str] | None:
    """(httpx.URL(url, params=params), its host) for a plain http(s) URL, or None (use httpx)."""
    parts = _PARTS.get(url)
    if parts is None:
        parts = _parts(url)
        if parts is None or _ParseResult is None:
            return None
        if len(_PARTS) >= 1024:  # the endpoints repeat; ids in paths make the rest churn
            _PARTS.clear()
        _PARTS[url] = parts
    scheme, host, path, query = parts
    if params is not None:  # httpx: the given params replace the URL's query (none at all when empty); the
        # urlencoded text holds only unreserved characters, %XX, + = and &, all kept as they are by httpx
        if not params:
            query = None
        elif isinstance(params, dict) and all(type(v) is str for v in params.values()):
            query = urlencode(list(params.items()))  # str(QueryParams(params)) for str values
        else:
            query = str(httpx.QueryParams(params))
    u = httpx.URL.__new__(httpx.URL)
    u._uri_reference = _ParseResult(scheme, "", host, None, path, query, None)
    return u, host


def _raw_headers(headers: Mapping[str, str] | None) -> list[tuple[bytes, bytes]] | None:
    if not headers:
        return []
    try:
        return [(k.encode("ascii"), v.encode("ascii")) for k, v in headers.items()]
    except (AttributeError, UnicodeEncodeError):  # bytes, non-str or non-ASCII: httpx decides
        return None


def _build_request(method: str, url: httpx.URL | str, *, content: Any = None, data: Any = None, files: Any = None,
                   json: Any = None, params: Any = None, headers: Any = None) -> httpx.Request | None:
    if files or (data is not None and not isinstance(data, dict)) or not isinstance(url, str) \
            or (headers is not None and not isinstance(headers, dict)):
        return None
    url_host = _url(url, params)
    raw = _raw_headers(headers)
    if url_host is None or raw is None:
        return None
    u, host = url_host
    # the body and its default headers, as httpx.encode_request makes them (content > data > json)
    if content is not None:
        if isinstance(content, str):
            content = content.encode("utf-8")
        elif not isinstance(content, bytes):
            return None
        body = content
        defaults = [(b"Content-Length", str(len(body)).encode())] if body else []
    elif data:
        if not all(isinstance(v, str) for v in data.values()):
            return None
        body = urlencode(list(data.items()), doseq=True).encode("utf-8")
        defaults = [(b"Content-Length", str(len(body)).encode()), _FORM_CT]
    elif json is not None:
        body = _dumps(json).encode("utf-8")
        defaults = [(b"Content-Length", str(len(body)).encode()), _JSON_CT]
    else:
        body = b""
        defaults = []
    given = {k.lower() for k, _v in raw}
    for key, value in defaults:  # setdefault: a header the caller gave wins
        if key.lower() not in given:
            raw.append((key, value))
            given.add(key.lower())
    method = method.upper()
    auto = []
    if b"host" not in given:
        auto.append((b"Host", host.encode("ascii")))  # url.netloc: the host alone (no port, not IPv6)
    if method in _BODY_METHODS and b"content-length" not in given and b"transfer-encoding" not in given:
        auto.append((b"Content-Length", b"0"))
    request = httpx.Request(method, u, headers=auto + raw if auto else raw, stream=httpx.ByteStream(body))
    request._content = body  # what read() leaves (a ByteStream is kept as it is); checked by _fast_ok
    return request


def _build_json_response(status: int, body: Any, headers: Mapping[str, str] | None) -> httpx.Response | None:
    """Response(status, json=body, headers=headers): the given headers, then Content-Length and Content-Type
    unless given."""
    raw = _raw_headers(headers)
    if raw is None:
        return None
    content = _dumps(body).encode("utf-8")
    if raw:
        given = {k.lower() for k, _v in raw}
        if b"content-encoding" in given:  # the body would go through a decoder: httpx's business
            return None
        if b"content-length" not in given:
            raw.append((b"Content-Length", str(len(content)).encode()))
        if b"content-type" not in given:
            raw.append(_JSON_CT)
    else:
        raw = [(b"Content-Length", str(len(content)).encode()), _JSON_CT]
    return _read_response(status, raw, content)


def _build_empty_response(status: int, headers: Mapping[str, str] | None) -> httpx.Response | None:
    """Response(status, headers=headers): no body, no header added."""
    raw = _raw_headers(headers)
    if raw is None or any(k.lower() == b"content-encoding" for k, _v in raw):
        return None
    return _read_response(status, raw, b"")


def _read_response(status: int, raw: list[tuple[bytes, bytes]], content: bytes) -> httpx.Response | None:
    """The Response httpx makes from a status, raw headers (no Content-Encoding) and body bytes, once read
    (as its constructor reads it): identity decoder, stream consumed and closed, the downloaded-bytes count
    back at 0. Set attribute by attribute; _fast_ok compares every attribute with httpx's own result."""
    if _IdentityDecoder is None:
        return None
    h = httpx.Headers(raw)
    h.encoding = "ascii"  # what httpx finds when it first looks a header up (every value here is ASCII)
    r = _new_response(httpx.Response)
    r.status_code = status
    r.headers = h
    r._request = None
    r.next_request = None
    r.extensions = {}
    r.history = []
    r.is_closed = True
    r.is_stream_consumed = True
    r.default_encoding = "utf-8"
    r.stream = httpx.ByteStream(content)
    r._num_bytes_downloaded = 0
    r._decoder = _IdentityDecoder()
    r._content = content
    return r


def _same_state(a: Any, b: Any) -> bool:
    """Two httpx objects hold the same state: every attribute, compared by value (URLs by their parsed
    components, headers by their raw list and encoding, (re-iterable) streams by type and bytes, decoders by
    type)."""
    va, vb = vars(a), vars(b)
    if set(va) != set(vb):
        return False
    for key, x in va.items():
        y = vb[key]
        if type(x) is not type(y):
            return False
        if isinstance(x, httpx.URL):
            same = x._uri_reference == y._uri_reference and str(x) == str(y)
        elif isinstance(x, httpx.Headers):
            same = vars(x) == vars(y)
        elif isinstance(x, httpx.ByteStream | httpx.SyncByteStream):
            same = b"".join(x) == b"".join(y)
        elif key == "_decoder":
            same = True  # same type, stateless for identity content
        else:
            same = x == y
        if not same:
            return False
    return True


_SAMPLES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "https://open.tiktokapis.sandbox.invalid/v2/post/publish/video/init/",
     {"json": {"a": [1, 2.5, None, True], "é": "ü 🎉 \u2028"},
      "headers": {"Authorization": "Bearer x", "Content-Type": "application/json; charset=UTF-8"}}),
    ("post", "https://graph.facebook.sandbox.invalid/v21.0/123/photos", {"data": {"url": "https://x/y?a=1&b=é",
                                                                                  "access_token": "T"}}),
    ("GET", "https://graph.facebook.sandbox.invalid/v21.0/123_456", {"params": {"fields": "a,b", "t": "x y/z"}}),
    ("GET", "https://h.invalid/p?x=1", {"params": {}}),
    ("GET", "https://h.invalid/p?x=1&y=%2F", {}),
    ("GET", "https://h.invalid", {}),
    ("PUT", "https://www.linkedin.sandbox.invalid/dms-uploads/a-b_c.d", {"content": b"\xff\xd8\xff",
                                                                          "headers": {"Content-Length": "3"}}),
    ("PUT", "https://h.invalid/u", {"content": "", "headers": {"Host": "other"}}),
    ("POST", "https://h.invalid/rest/images/urn%3Ali%3Aimage%3AC4E", {"headers": {"X-A": "1"}}),
    ("DELETE", "https://h.invalid/v1/x", {"params": {"access_token": "t"}}),
]
_CHECKED: dict[str, bool] = {}


def _fast_ok(kind: str) -> bool:
    ok = _CHECKED.get(kind)
    if ok is None:
        try:
            if kind == "request":
                ok = True
                for method, url, kw in _SAMPLES:
                    fast = _build_request(method, url, **kw)
                    ok = ok and fast is not None and _same_state(fast, httpx.Request(method, url, **kw))
            else:
                body = {"data": {"x": [1, None, "é 🎉"]}, "error": {"code": "ok"}}
                ok = True
                for headers in (None, {"X-Restli-Id": "urn:li:share:1"}, {"Content-Type": "text/plain"}, {}):
                    fast = _build_json_response(201, body, headers)
                    ok = ok and fast is not None and _same_state(fast, httpx.Response(201, json=body,
                                                                                      headers=headers))
                    fast = _build_empty_response(308, headers)
                    ok = ok and fast is not None and _same_state(fast, httpx.Response(308, headers=headers))
        except Exception:  # noqa: BLE001 - any difference in httpx internals: use httpx's own constructors
            ok = False
        _CHECKED[kind] = ok
    return ok


def request(method: str, url: httpx.URL | str, *, content: Any = None, data: Any = None, files: Any = None,
            json: Any = None, params: Any = None, headers: Any = None) -> httpx.Request:
    """httpx.Request(method, url, ...) (read), built directly when the shapes allow."""
    if _fast_ok("request"):
        built = _build_request(method, url, content=content, data=data, files=files, json=json, params=params,
                               headers=headers)
        if built is not None:
            return built
    return httpx.Request(method, url, content=content, data=data, files=files, json=json, params=params,
                         headers=headers)


def empty_response(status: int, headers: Mapping[str, str] | None = None) -> httpx.Response:
    """httpx.Response(status, headers=headers), built directly when the shapes allow."""
    if _fast_ok("response"):
        built = _build_empty_response(status, headers)
        if built is not None:
            return built
    return httpx.Response(status, headers=headers)


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> httpx.Response:
    """httpx.Response(status, json=body, headers=headers), built directly when the shapes allow."""
    if _fast_ok("response"):
        built = _build_json_response(status, body, headers)
        if built is not None:
            return built
    return httpx.Response(status, json=body, headers=headers)

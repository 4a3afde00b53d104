"""The fetcher against a real server on 127.0.0.1; the address rule on other ranges with a stubbed resolver
(and the network layer booby-trapped), so no test ever sends traffic off the loopback range."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpcore
import pytest

from backend.config import Settings
from backend.errors import ApiError
from backend.media import fetch
from backend.outbound import guard
from tests.media import corpus
from tests.media.httpserver import MB, LocalServer, Route, big_body

MP4_HEAD = corpus.video("mp4")[:64]


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


def make_settings(tmp_path: Path, **kw: object) -> Settings:
    base: dict[str, object] = dict(
        data_dir=tmp_path / "data",
        allow_private_urls=True,
        fetch_connect_timeout_s=2.0,
        fetch_total_timeout_s=5.0,
        fetch_rate_window_s=0.5,
        fetch_min_rate_bytes_s=5000,
    )
    base.update(kw)
    return Settings(**base)  # type: ignore[arg-type]


@pytest.fixture
def loose(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def strict(tmp_path: Path) -> Settings:
    return make_settings(tmp_path, allow_private_urls=False)


def _fails(rule: str, fn, *args, **kw) -> ApiError:  # type: ignore[no-untyped-def]
    with pytest.raises(ApiError) as err:
        fn(*args, **kw)
    assert err.value.status == 400
    assert err.value.code == "fetch_failed", err.value.message
    expected = {"rule": rule, **({"setting": "private-urls"} if rule == "address" else {})}
    assert err.value.details == [expected], (err.value.details, err.value.message)
    return err.value


def _temp_files(settings: Settings) -> list[Path]:
    d = settings.data_dir / "tmp" / "fetch"
    return list(d.iterdir()) if d.exists() else []


def test_200_downloads_to_a_file(server: LocalServer, loose: Settings) -> None:
    body = corpus.jpeg(200, 100)
    server.routes["/photo.jpg"] = Route(body=body, content_type="image/jpeg")
    got = fetch.fetch_to_file(server.url("/photo.jpg"), loose)
    try:
        assert got.path.read_bytes() == body and got.size == len(body)
        assert got.detected is not None and got.detected.format == "jpeg"
        assert got.content_type == "image/jpeg"
    finally:
        got.discard()
    assert _temp_files(loose) == []


def test_200_without_content_length(server: LocalServer, loose: Settings) -> None:
    body = corpus.video("webm")
    server.routes["/v"] = Route(body=body, send_length=False)
    assert fetch.fetch_bytes(server.url("/v"), loose, 10 * MB) == body


def test_probe_reads_the_type(server: LocalServer, loose: Settings) -> None:
    server.routes["/clip"] = Route(stream=big_body(MP4_HEAD, 20 * MB))
    found = fetch.probe(server.url("/clip"), loose)
    assert found is not None and found.kind == "video" and found.format == "mp4"


def test_404(server: LocalServer, loose: Settings) -> None:
    err = _fails("status", fetch.fetch_to_file, server.url("/missing"), loose)
    assert "404" in err.message


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_is_not_followed(server: LocalServer, loose: Settings, status: int) -> None:
    server.routes["/moved"] = Route(status=status, headers={"Location": server.url("/target")})
    server.routes["/target"] = Route(body=corpus.jpeg())
    err = _fails("redirect", fetch.fetch_to_file, server.url("/moved"), loose)
    assert "redirect" in err.message
    assert server.hits == ["/moved"]


def test_total_timeout_cuts_a_server_that_never_answers(server: LocalServer, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, fetch_total_timeout_s=0.8, fetch_rate_window_s=30)
    server.routes["/hang"] = Route(stall_s=4, body=b"late")
    start = time.monotonic()
    err = _fails("timeout", fetch.fetch_to_file, server.url("/hang"), settings)
    assert time.monotonic() - start < 2.5
    assert "total timeout" in err.message


def test_read_timeout_when_nothing_comes(server: LocalServer, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, fetch_total_timeout_s=10, fetch_rate_window_s=0.5)
    server.routes["/hang"] = Route(stall_s=4, body=b"late")
    start = time.monotonic()
    err = _fails("timeout", fetch.fetch_to_file, server.url("/hang"), settings)
    assert time.monotonic() - start < 2.5
    assert "timed out" in err.message


def test_slow_drip_is_cut_off(server: LocalServer, loose: Settings) -> None:
    server.routes["/drip"] = Route(body=MP4_HEAD + b"\x00" * 5000, drip_s=0.005)  # ~200 bytes/s
    start = time.monotonic()
    err = _fails("slow", fetch.fetch_to_file, server.url("/drip"), loose)
    assert time.monotonic() - start < 2.5
    assert "too slow" in err.message
    assert _temp_files(loose) == []


def test_header_drip_is_cut_by_the_total_deadline(server: LocalServer, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, fetch_total_timeout_s=1.0, fetch_rate_window_s=30)
    server.routes["/drip"] = Route(body=b"x" * 100, drip_s=0.05, send_length=True)
    start = time.monotonic()
    _fails("timeout", fetch.fetch_to_file, server.url("/drip"), settings)
    assert time.monotonic() - start < 2.5


def test_129_mb_with_content_length_refused_before_reading(server: LocalServer, loose: Settings) -> None:
    total = 129 * MB
    server.routes["/big"] = Route(stream=big_body(MP4_HEAD, total), declared_length=total)
    start = time.monotonic()
    with pytest.raises(ApiError) as err:
        fetch.fetch_to_file(server.url("/big"), loose, 128 * MB)
    assert err.value.code == "media_too_large"
    assert time.monotonic() - start < 3
    assert _temp_files(loose) == []


def test_129_mb_without_content_length_aborted_at_128(server: LocalServer, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, fetch_total_timeout_s=60)
    server.routes["/big"] = Route(stream=big_body(MP4_HEAD, 129 * MB))
    with pytest.raises(ApiError) as err:
        fetch.fetch_to_file(server.url("/big"), settings, 128 * MB)
    assert err.value.code == "media_too_large"
    assert _temp_files(settings) == []


def test_sniff_lowers_the_limit(server: LocalServer, loose: Settings) -> None:
    server.routes["/img"] = Route(stream=big_body(corpus.jpeg()[:64], 3 * MB))
    with pytest.raises(ApiError) as err:
        fetch.fetch_to_file(server.url("/img"), loose, 128 * MB, sniff=lambda head: 1 * MB)
    assert err.value.code == "media_too_large"


def test_truncated_body_is_a_failure(server: LocalServer, loose: Settings) -> None:
    server.routes["/short"] = Route(body=b"abc", headers={"Content-Length": "100"}, send_length=False)
    _fails("connect", fetch.fetch_to_file, server.url("/short"), loose)


def test_connection_refused(loose: Settings) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    _fails("connect", fetch.fetch_to_file, f"http://127.0.0.1:{port}/x", loose)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/x",
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
        "javascript:alert(1)",
        "//127.0.0.1/x",
        "http://",
        "http://user:pw@127.0.0.1/x",
        "not a url",
        "",
    ],
)
def test_scheme_rule(loose: Settings, url: str) -> None:
    _fails("scheme", fetch.fetch_to_file, url, loose)


LOOPBACK_SPELLINGS = [
    "127.0.0.1",
    "localhost",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "2130706433",
    "0x7f000001",
    "127.1",
    "0177.0.0.1",
    "127.0.0.2",
]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_loopback_in_every_spelling_is_refused(server: LocalServer, strict: Settings, host: str) -> None:
    server.routes["/secret"] = Route(body=b"internal data")
    err = _fails("address", fetch.fetch_to_file, server.url("/secret", host=host), strict)
    assert "address rule" in err.message
    assert server.hits == []  # refused before any connection to the (real, listening) server


@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "127.1"])
def test_numeric_spellings_mean_loopback(server: LocalServer, loose: Settings, host: str) -> None:
    # With the address rule lifted, the same spellings do reach the local server: they are loopback.
    server.routes["/ok"] = Route(body=b"fine")
    assert fetch.fetch_bytes(server.url("/ok", host=host), loose, 100) == b"fine"


@pytest.fixture
def no_traffic(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kw: object) -> None:
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", refuse)


REFUSED = [
    "10.0.0.5",
    "10.255.255.255",
    "172.16.3.4",
    "172.31.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "224.0.0.1",
    "239.255.255.250",
    "0.0.0.0",
    "100.64.0.1",
    "198.18.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "fd00::1",
    "fe80::1",
    "ff02::1",
    "::",
    "::ffff:10.0.0.1",
    "2002:7f00:1::1",
    "2002:a00:1::1",
    "64:ff9b::a00:1",
]


@pytest.mark.parametrize("address", REFUSED)
def test_private_ranges_refused_by_the_address_guard(
    strict: Settings, monkeypatch: pytest.MonkeyPatch, no_traffic: None, address: str
) -> None:
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: [address])
    err = _fails("address", fetch.fetch_to_file, "https://cdn.example.com/photo.jpg", strict)
    assert address.split("::ffff:")[-1] in err.message or "address" in err.message


@pytest.mark.parametrize(
    "literal",
    [
        "http://10.0.0.1/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://192.168.0.1:8080/",
        "http://0xa9fea9fe/",
        "http://[::ffff:169.254.169.254]/",
    ],
)
def test_private_literals_refused(strict: Settings, no_traffic: None, literal: str) -> None:
    _fails("address", fetch.fetch_to_file, literal, strict)


def test_every_resolved_address_must_be_public(
    strict: Settings, monkeypatch: pytest.MonkeyPatch, no_traffic: None
) -> None:
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["93.184.216.34", "10.1.2.3"])
    _fails("address", fetch.fetch_to_file, "https://mixed.example.com/a.jpg", strict)


def test_public_addresses_pass_the_guard() -> None:
    import ipaddress

    for a in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "1.1.1.1"]:
        assert guard.address_refusal(ipaddress.ip_address(a)) is None


def test_dns_failure(strict: Settings, monkeypatch: pytest.MonkeyPatch, no_traffic: None) -> None:
    def fail(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    monkeypatch.setattr(guard, "RESOLVER", fail)
    _fails("dns", fetch.fetch_to_file, "https://nowhere.example/x", strict)


def test_connection_goes_to_the_checked_address_with_the_host_kept(
    server: LocalServer, loose: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    answers = iter([["127.0.0.1"], ["10.9.9.9"]])  # a rebinding resolver: a second lookup would get elsewhere

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers)

    monkeypatch.setattr(guard, "RESOLVER", resolver)
    server.routes["/p"] = Route(body=b"pinned")
    url = f"http://media.example:{server.port}/p"
    assert fetch.fetch_bytes(url, loose, 100) == b"pinned"
    assert calls == ["media.example"]  # resolved once; the socket went to that address
    assert server.hosts == [f"media.example:{server.port}"]


def test_log_policy_warns_when_private_urls_allowed(
    loose: Settings, strict: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="socialpub.media.fetch"):
        fetch.log_policy(loose)
        fetch.log_policy(strict)
    assert any(r.levelname == "WARNING" and "ALLOW_PRIVATE_URLS" in r.getMessage() for r in caplog.records)
    assert any(r.levelname == "INFO" and "public" in r.getMessage() for r in caplog.records)

"""The open files of the operator's processes (backend/operator/openfiles.py): a worker's pool and the limit."""

from __future__ import annotations

import logging
import resource

import pytest

from backend.operator import openfiles
from backend.operator.httpserver import ServerLimits, bounded_config


class _Limits:
    """resource's open-files limit, stubbed: what getrlimit answers, what setrlimit was asked."""

    def __init__(self, soft: int, hard: int) -> None:
        self.soft, self.hard = soft, hard
        self.set: list[tuple[int, int]] = []

    def getrlimit(self, which: int) -> tuple[int, int]:
        assert which == resource.RLIMIT_NOFILE
        return self.soft, self.hard

    def setrlimit(self, which: int, limits: tuple[int, int]) -> None:
        assert which == resource.RLIMIT_NOFILE
        if limits[0] > self.hard != resource.RLIM_INFINITY:
            raise ValueError("not allowed to raise maximum limit")
        self.set.append(limits)
        self.soft = limits[0]


def _stub(monkeypatch: pytest.MonkeyPatch, soft: int, hard: int) -> _Limits:
    limits = _Limits(soft, hard)
    monkeypatch.setattr(resource, "getrlimit", limits.getrlimit)
    monkeypatch.setattr(resource, "setrlimit", limits.setrlimit)
    return limits


def test_a_worker_pool_raises_the_open_files_limit_to_fit_its_threads(monkeypatch, settings):
    """512 threads may hold ~1,400 open files under a burst: over the usual soft limit of 1,024, under which the
    pool's SQLite connections failed to open only once a burst had grown it."""
    limits = _stub(monkeypatch, 1024, 65536)
    assert openfiles.worker_pool(settings, 512) == 512
    assert limits.set == [(512 * openfiles.FDS_PER_WORKER_THREAD + openfiles.FD_RESERVE, 65536)]
    assert openfiles.worker_pool(settings) == settings.worker_concurrency  # the setting, by default


def test_a_pool_the_hard_limit_cannot_fit_is_made_smaller_saying_so(monkeypatch, settings, caplog):
    limits = _stub(monkeypatch, 1024, 1024)
    with caplog.at_level(logging.WARNING, logger="socialpub.serve"):
        threads = openfiles.worker_pool(settings, 512)
    assert threads == (1024 - openfiles.FD_RESERVE) // openfiles.FDS_PER_WORKER_THREAD
    assert limits.set == []  # already at the hard limit: nothing to raise
    assert "ulimit -n" in caplog.text and f"a pool of {threads};" in caplog.text


def test_an_unlimited_open_files_limit_is_left_as_it_is(monkeypatch, settings):
    limits = _stub(monkeypatch, resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    assert openfiles.worker_pool(settings, 512) == 512
    assert limits.set == []  # never lowered to a number


def test_a_server_with_its_worker_in_process_keeps_the_pools_files_beside_its_connections(
    monkeypatch, settings, caplog
):
    """`serve --worker-in-process`: the server's connections are bounded by what the worker's pool leaves."""
    _stub(monkeypatch, 2048, 2048)
    pool_files = 256 * openfiles.FDS_PER_WORKER_THREAD
    with caplog.at_level(logging.WARNING, logger="socialpub.serve"):
        config = bounded_config(
            None, settings, host="127.0.0.1", port=0, reserve=openfiles.FD_RESERVE + pool_files
        )
    fitted = 2048 - openfiles.FD_RESERVE - pool_files
    assert config.limit_concurrency == fitted + 1
    assert f"{fitted} connections at most" in caplog.text
    assert ServerLimits.of(settings).max_connections > fitted

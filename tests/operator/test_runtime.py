"""The operator's runtime: the collector of a worker process."""

from __future__ import annotations

import gc

from backend.operator import runtime


def test_a_started_worker_freezes_what_it_built_and_collects_its_first_generation_less_often():
    before = gc.get_threshold()
    try:
        runtime.worker_collector()
        assert gc.get_threshold() == (runtime.WORKER_GC_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)

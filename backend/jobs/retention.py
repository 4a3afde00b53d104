"""The periodic retention job (spec 8): delete files past their deadline, stray temporaries and orphans.

The rule itself (deadline from upload date and references) lives in backend.services.media.
"""

from __future__ import annotations

import logging

from backend.jobs.registry import JobContext, periodic
from backend.media import fetch
from backend.media.storage import get_storage
from backend.services import media as media_service

log = logging.getLogger("socialpub.media.retention")

TEMP_MAX_AGE_S = 3600.0


@periodic("media.retention", every_s=3600)
def enforce_retention(ctx: JobContext) -> None:
    settings = ctx.settings
    now = ctx.now()
    report = media_service.enforce_retention(settings, now)
    report.orphans = media_service.sweep_orphans(settings, now)
    report.temp_removed = get_storage(settings).cleanup_temp(TEMP_MAX_AGE_S) + fetch.clean_temp(
        settings, TEMP_MAX_AGE_S
    )
    if report.deleted or report.failed or report.orphans:
        log.info(
            "media retention: %d deleted, %d failed, %d orphans removed, %d temporaries removed",
            len(report.deleted),
            len(report.failed),
            len(report.orphans),
            report.temp_removed,
        )

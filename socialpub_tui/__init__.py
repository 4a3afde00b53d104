"""The socialpub front end: the /v1 client, the `socialpub` CLI and the TUI.

The garbage collector while starting: a front-end process builds ~150,000 objects that live as long as it does
(the modules of Textual, pydantic, httpx, and in the embedded mode FastAPI and the backend). With Python's default
thresholds the collector walks them ~300 times while they are built — 120-200 ms of the TUI's launch, for almost
no garbage (reference counting frees the rest). So the first generation's threshold is raised at the package's
first import (the CLI's entry point, or whoever builds the app), and `startup_done()` ends the start-up: the objects
built so far are frozen (gc.freeze: never walked again; reference counting still frees them) and the default
thresholds come back. The TUI calls it once its first screen is drawn; the CLI when it dispatches an operator
command (`serve`, `worker`: long-running). A short front-end command ends before it matters.
"""

import gc

DEFAULT_GC_THRESHOLD = gc.get_threshold()
STARTUP_GC_THRESHOLD = (1_000_000, *DEFAULT_GC_THRESHOLD[1:])  # ~5x what the TUI's launch allocates

gc.set_threshold(*STARTUP_GC_THRESHOLD)
_started = False


def startup_done() -> None:
    """The process has started: freeze what the start-up built and restore the default thresholds (once)."""
    global _started
    if not _started:
        _started = True
        gc.freeze()
        gc.set_threshold(*DEFAULT_GC_THRESHOLD)

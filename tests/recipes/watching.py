"""`socialpub recipes watch` as a real subprocess, its log lines read as they come."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOCIALPUB = str(Path(sys.executable).with_name("socialpub"))


class WatchProcess:
    def __init__(self, folder: Path, *args: str, env: dict[str, str] | None = None) -> None:
        env = (dict(os.environ) if env is None else env) | {
            "PYTHONPATH": str(ROOT),
            "SOCIALPUB_LOG_LEVEL": "WARNING",
        }
        self.proc = subprocess.Popen(
            [SOCIALPUB, "recipes", "watch", str(folder), *args],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            bufsize=1,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, *texts: str, timeout: float = 30.0) -> str:
        """The next line containing every one of `texts` (lines before it are kept in `seen`)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    break
                continue
            self.seen.append(line)
            if all(t in line for t in texts):
                return line
        raise AssertionError(
            f"watch never printed a line with {texts!r}; it printed:\n" + "\n".join(self.seen)
        )

    def quiet(self, seconds: float) -> list[str]:
        """The lines printed over the next `seconds`."""
        out = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                out.append(self.lines.get(timeout=0.05))
            except queue.Empty:
                pass
        self.seen += out
        return out

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

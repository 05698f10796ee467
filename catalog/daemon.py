"""A catalog daemon (Doris's MasterDaemon): a thread that runs `step()` every `interval_s`
until stopped; a failing step is logged and the next one runs on schedule."""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class Daemon:
    NAME = "daemon"  # the thread's name

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def step(self):
        raise NotImplementedError

    def after_step(self, result) -> None:
        """What a subclass reports of a step's result (nothing by default)."""

    def start(self, interval_s: float) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(interval_s,), name=self.NAME,
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            try:
                self.after_step(self.step())
            except Exception:  # a daemon's boundary: log and keep going (as Doris's daemons)
                log.exception("%s step failed", self.NAME)

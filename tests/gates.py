"""A gate like ``threading.Event`` that processes forked from the test (the web app's move processes) see
too: ``set()`` makes a file at ``path`` (a fresh one for each test, given before the app forks)."""

from __future__ import annotations

import os
import time


class FileGate:
    path = None

    def set(self):
        open(self.path, "w").close()

    def clear(self):
        if os.path.exists(self.path):
            os.remove(self.path)

    def is_set(self) -> bool:
        return os.path.exists(self.path)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.is_set()

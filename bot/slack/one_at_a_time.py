"""One run of a piece of work at a time for each key (a post's counts, a member's App Home), in this process.
A request while one is under way is not run beside it: it asks the running one to run once more when it ends,
so that what is shown last is read after the last request, never an older state published after a newer one."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable


class OneAtATime:
    """Work run one at a time a key. Requests while a run is under way (Slack's 429s waited out, up to minutes)
    leave it to run once more after it, reading what is stored by then: a burst of requests costs two runs, and
    holds one thread, not one a request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._again: dict[Hashable, bool] = {}  # keys being run: whether a request came meanwhile

    def again_if_running(self, key: Hashable) -> bool:
        """True, after asking it to run once more, when a run of ``key`` is under way; False when none is."""
        with self._lock:
            if key not in self._again:
                return False
            self._again[key] = True
            return True

    def run(self, key: Hashable, work: Callable[[], None]) -> None:
        with self._lock:
            if key in self._again:
                self._again[key] = True
                return
            self._again[key] = False
        try:
            while True:
                work()
                with self._lock:
                    if not self._again[key]:
                        del self._again[key]
                        return
                    self._again[key] = False
        except BaseException:  # the next request runs it again
            with self._lock:
                self._again.pop(key, None)
            raise

"""Sources for ``dataset._target_=custom_sources.<Class>`` in the tests' subprocess jobs (importable:
tests/support/ is on their PYTHONPATH); kept free of the test modules' imports, which compose configs."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from bench.sources import Shipped

KILL_AFTER = "BENCH_TEST_KILL_AFTER_ROWS"


@dataclass(kw_only=True)
class KilledWhileReading(Shipped):
    """The shipped sample, read by a process that is killed (SIGKILL: no cleanup) after
    ``$BENCH_TEST_KILL_AFTER_ROWS`` rows, when that is set."""

    def rows(self):
        after = os.environ.get(KILL_AFTER)
        for number, row in enumerate(super().rows()):
            if after is not None and number == int(after):
                os.kill(os.getpid(), signal.SIGKILL)
            yield row

"""Named points of an audit where a test kills the process for real. Test-only.

``CRAWLER_FAILPOINT=<name>`` (or several names, comma-separated) makes the process send itself
SIGKILL when it reaches that point: no handler, no ``finally``, no flush, exactly what an OOM
kill or ``kill -9`` does there. Nobody sets it in production; unset, a point costs one
dictionary lookup. The points, in the order an audit reaches them:

* ``batch-recorded``: a batch's results are in the database, the audit still ``running``;
* ``report-written``: the report files are written, the audit not yet finished;
* ``audit-finished``: the audit is finished (a baseline), nothing delivered yet;
* ``delivered``: the notifications are sent, the audit not yet marked delivered.
"""

from __future__ import annotations

import os
import signal

FAILPOINT_ENV = "CRAWLER_FAILPOINT"
POINTS = frozenset({"batch-recorded", "report-written", "audit-finished", "delivered"})


def failpoint(name: str) -> None:
    """SIGKILL this process here if ``CRAWLER_FAILPOINT`` names ``name``."""
    assert name in POINTS, name
    wanted = os.environ.get(FAILPOINT_ENV)
    if wanted and name in (part.strip() for part in wanted.split(",")):
        os.kill(os.getpid(), signal.SIGKILL)

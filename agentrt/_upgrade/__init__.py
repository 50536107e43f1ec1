"""Deploying new code under running agents: judge each unfinished run per suspended frame, and move
the frames that can move to the new code (``agentrt upgrade``, ``@agentrt.migrate``).

The frame-level work (site descriptions, matching, rewriting frame records) lives in
:mod:`agentrt._frames._sites` and :mod:`agentrt._frames._migrate`; this package reads
blobs and stores and reports.
"""

from typing import TYPE_CHECKING

from agentrt._lazy import lazy_exports
from agentrt._upgrade._registry import migrate as migrate

__all__ = [
    "RunReport",
    "StaticResolver",
    "check_store",
    "frame_records",
    "migrate",
    "upgrade_store",
]


# What other packages use, imported on first access (agentrt._lazy): the front of this package.
if TYPE_CHECKING:
    from agentrt._upgrade._blob import frame_records as frame_records
    from agentrt._upgrade._runs import RunReport as RunReport
    from agentrt._upgrade._runs import check_store as check_store
    from agentrt._upgrade._runs import upgrade_store as upgrade_store
    from agentrt._upgrade._static import StaticResolver as StaticResolver

_FRONT = {
    "RunReport": "agentrt._upgrade._runs",
    "check_store": "agentrt._upgrade._runs",
    "upgrade_store": "agentrt._upgrade._runs",
    "StaticResolver": "agentrt._upgrade._static",
    "frame_records": "agentrt._upgrade._blob",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _FRONT)

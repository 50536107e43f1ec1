"""Deploying new code under running agents: judge each unfinished run per suspended frame, and move
the frames that can move to the new code (``agentrt upgrade``, ``@agentrt.migrate``).

The frame-level work (site descriptions, matching, rewriting frame records) lives in
:mod:`agentrt._frames._sites` and :mod:`agentrt._frames._migrate`; this package reads
blobs and stores and reports.
"""

from agentrt._upgrade._registry import migrate as migrate

__all__ = ["migrate"]

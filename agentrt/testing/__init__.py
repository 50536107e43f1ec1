"""Test helpers shipped with agentrt.

- :func:`roundtrip_every_suspension`: while the ``with`` block runs, every
  :class:`~agentrt.lowlevel.Machine` is checkpointed and restored at every
  suspension (``Machine.get()`` then ``Machine.set()``), and continues on the
  restored copy; a value that does not survive raises :class:`RoundtripFailure`
  with the frame dump of the chain.
- :func:`capture_trace`: a context manager collecting every trace event any
  runtime reports while it is open (like structlog's ``testing.capture_logs``).
- ``agentrt.testing.pytest_plugin``: the same for a whole pytest session
  (``--agentrt-roundtrip``) or one test (the ``agentrt_roundtrip`` fixture).
"""

from agentrt.testing._roundtrip import RoundtripFailure as RoundtripFailure
from agentrt.testing._roundtrip import RoundTripper as RoundTripper
from agentrt.testing._roundtrip import roundtrip_every_suspension as roundtrip_every_suspension
from agentrt.testing._trace import capture_trace as capture_trace

__all__ = ["RoundTripper", "RoundtripFailure", "capture_trace", "roundtrip_every_suspension"]

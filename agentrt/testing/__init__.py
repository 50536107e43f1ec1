"""Test helpers shipped with agentrt.

- :func:`roundtrip_every_suspension`: while the ``with`` block runs, every
  :class:`~agentrt.lowlevel.Machine` is checkpointed and restored at every
  suspension (``Machine.get()`` then ``Machine.set()``), and continues on the
  restored copy; a value that does not survive raises :class:`RoundtripFailure`
  with the frame dump of the chain.
- ``agentrt.testing.pytest_plugin``: the same for a whole pytest session
  (``--agentrt-roundtrip``) or one test (the ``agentrt_roundtrip`` fixture).
"""

from agentrt.testing._roundtrip import RoundtripFailure as RoundtripFailure
from agentrt.testing._roundtrip import RoundTripper as RoundTripper
from agentrt.testing._roundtrip import roundtrip_every_suspension as roundtrip_every_suspension

__all__ = ["RoundTripper", "RoundtripFailure", "roundtrip_every_suspension"]

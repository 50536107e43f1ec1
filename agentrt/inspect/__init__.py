"""Read a suspended run like a stack in a debugger: ``agentrt dump``, ``diff`` and ``fork``.

- :func:`dump_blob` decodes a checkpoint (without stepping it) into a :class:`Dump`;
  :func:`dump_chain` does the same for a live suspended coroutine chain.
- :func:`render_text` / :func:`to_json` print a dump; ``disasm=True`` adds the
  bytecode around each suspension with the suspended instruction marked ``-->``.
- :func:`diff_dumps` compares two checkpoints of a run; :func:`fork_run` starts a
  new run from an earlier checkpoint.
"""

from agentrt.inspect._build import dump_blob as dump_blob
from agentrt.inspect._build import dump_chain as dump_chain
from agentrt.inspect._diff import diff_dumps as diff_dumps
from agentrt.inspect._diff import diff_to_json as diff_to_json
from agentrt.inspect._diff import render_diff as render_diff
from agentrt.inspect._fork import ForkError as ForkError
from agentrt.inspect._fork import ForkResult as ForkResult
from agentrt.inspect._fork import fork_run as fork_run
from agentrt.inspect._model import Dump as Dump
from agentrt.inspect._model import FrameView as FrameView
from agentrt.inspect._model import Source as Source
from agentrt.inspect._render import render_text as render_text
from agentrt.inspect._render import to_json as to_json
from agentrt.inspect._values import Limits as Limits

__all__ = [
    "Dump",
    "ForkError",
    "ForkResult",
    "FrameView",
    "Limits",
    "Source",
    "diff_dumps",
    "diff_to_json",
    "dump_blob",
    "dump_chain",
    "fork_run",
    "render_diff",
    "render_text",
    "to_json",
]

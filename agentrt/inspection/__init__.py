"""Read a suspended run like a stack in a debugger: what ``agentrt dump``, ``diff`` and ``fork`` show.

- :func:`dump_blob` decodes a checkpoint (without stepping it) into a :class:`Dump`;
  :func:`dump_chain` does the same for a live suspended coroutine chain.
- :func:`render_text` / :func:`to_json` print a dump; ``disasm=True`` adds the
  bytecode around each suspension with the suspended instruction marked ``-->``.
- :func:`diff_dumps` compares two checkpoints of a run; :func:`fork_run` starts a
  new run from an earlier checkpoint.
"""

from agentrt.inspection._build import dump_blob as dump_blob
from agentrt.inspection._build import dump_chain as dump_chain
from agentrt.inspection._diff import diff_dumps as diff_dumps
from agentrt.inspection._diff import diff_to_json as diff_to_json
from agentrt.inspection._diff import render_diff as render_diff
from agentrt.inspection._fork import ForkError as ForkError
from agentrt.inspection._fork import ForkResult as ForkResult
from agentrt.inspection._fork import fork_run as fork_run
from agentrt.inspection._model import Dump as Dump
from agentrt.inspection._model import FrameView as FrameView
from agentrt.inspection._model import Source as Source
from agentrt.inspection._move import move_run as move_run
from agentrt.inspection._render import render_text as render_text
from agentrt.inspection._render import to_json as to_json
from agentrt.inspection._runs import dump_run as dump_run
from agentrt.inspection._upgrades import render_upgrade_diff as render_upgrade_diff
from agentrt.inspection._upgrades import upgrade_diff as upgrade_diff
from agentrt.inspection._upgrades import upgrade_diff_to_json as upgrade_diff_to_json
from agentrt.inspection._values import Limits as Limits

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
    "dump_run",
    "fork_run",
    "move_run",
    "render_diff",
    "render_text",
    "render_upgrade_diff",
    "to_json",
    "upgrade_diff",
    "upgrade_diff_to_json",
]

"""Agents whose checkpoints are committed as golden blobs (tests/golden/3.X/*.blob).

Changing any of these functions changes its code digest and makes its golden blobs
incompatible -- which is exactly what ``changed_since_checkpoint`` demonstrates on
purpose.  Regenerate with ``python -m tests.golden.make_golden`` after a deliberate
format change, and say so in the CHANGELOG.
"""

import attrs

from agentrt import serializable
from agentrt.lowlevel import suspend


@serializable
@attrs.define
class Note:
    text: str
    tags: list[str]


async def helper(n):
    got = await suspend(("helper", n))
    return got * 2


async def mixed_state(items):
    note = Note("start", ["a"])
    shared = [1, 2]
    alias = shared
    total = 0
    for i, item in enumerate(items):
        try:
            total += await helper(item)
        except KeyError as error:
            note.tags.append(str(error.args[0]))
        shared.append(i)
    return total, note, alias is shared, shared


async def changed_since_checkpoint(x):
    # The committed incompatible blob was made from a version of this function whose
    # body differed; restoring it must raise IncompatibleBlob naming this function.
    y = await suspend(("changed", x))
    return y + 1

"""AR104: weak references live at a suspension."""

import weakref
from typing import Any

from agentrt import suspend
from tests.validate.hazards._helpers import RemoteMarked


async def weak_things(obj: RemoteMarked) -> Any:
    r = weakref.ref(obj)  # expect: AR104
    keys: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()  # expect: AR104
    values = weakref.WeakValueDictionary()  # expect: AR104
    members = weakref.WeakSet()  # expect: AR104
    fin = weakref.finalize(obj, print)  # expect: AR104
    await suspend(1)
    return r, keys, values, members, fin


async def weak_dead(obj: RemoteMarked) -> Any:
    r = weakref.ref(obj)  # negative: AR104
    strong = r()
    await suspend(1)
    return strong

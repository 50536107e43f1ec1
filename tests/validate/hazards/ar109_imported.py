"""AR109: awaiting an async function imported from another module (portability)."""

from typing import Any

from agentrt import suspend
from tests.validate.hazards import _helpers
from tests.validate.hazards._helpers import ask, fetch_remote


async def local_helper(x: Any) -> Any:
    return await suspend(x)


async def uses_imported(x: Any) -> Any:
    a = await fetch_remote(x)  # expect: AR109p
    b = await _helpers.fetch_remote(x)  # expect: AR109p
    c = await ask(x)  # negative: AR109
    d = await local_helper(x)  # negative: AR109
    return a, b, c, d

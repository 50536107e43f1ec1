"""AR107: `async def` with `yield` (portability)."""

from typing import Any

from agentrt import suspend


async def numbers(n: int) -> Any:  # expect: AR107p
    for i in range(n):
        yield await suspend(i)


async def not_a_generator(n: int) -> Any:  # negative: AR107
    def sync_gen() -> Any:
        yield n

    return [x async for x in numbers(n)], list(sync_gen())

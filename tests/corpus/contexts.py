"""``with`` over a @serializable context manager and ``async with`` over an async context
manager whose __aenter__/__aexit__ themselves suspend (no contextlib)."""

import dataclasses

from tests.corpus.protocol import ask, fail, serializable
from tests.corpus.registry import case


@serializable
@dataclasses.dataclass
class Recorder:
    log: list
    name: str
    suppress: bool = False

    def __enter__(self):
        self.log.append(("enter", self.name))
        return self

    def __exit__(self, et, ev, tb):
        self.log.append(("exit", self.name, None if et is None else et.__name__))
        return self.suppress


@serializable
@dataclasses.dataclass
class Session:
    log: list
    name: str
    suppress: bool = False

    async def __aenter__(self):
        self.log.append(await ask(("aenter", self.name)))
        return self

    async def __aexit__(self, et, ev, tb):
        self.log.append(await ask(("aexit", self.name, None if et is None else et.__name__)))
        return self.suppress


@case("v", expect=[("enter", "a"), "v", ("a-body", "a"), ("exit", "a", None), "after"])
async def ctx_with(x):
    log = []
    with Recorder(log, "a") as r:
        log.append(await ask(x))
        log.append(await ask((r.name + "-body", r.name)))
    log.append(await ask("after"))
    return log


@case(
    expect=[
        ("enter", "a"),
        ("enter", "b"),
        ("a", "b"),
        ("enter", "c"),
        "deep",
        ("exit", "c", None),
        "mid",
        ("exit", "b", None),
        ("exit", "a", None),
    ]
)
async def ctx_with_multi_nested():
    log = []
    with Recorder(log, "a") as a, Recorder(log, "b") as b:
        log.append(await ask((a.name, b.name)))
        with Recorder(log, "c"):
            log.append(await ask("deep"))
        log.append(await ask("mid"))
    return log


@case(
    expect=[
        ("enter", "s"),
        "in suppressing",
        ("exit", "s", "ValueError"),
        ("enter", "p"),
        "in propagating",
        ("exit", "p", "KeyError"),
        ("caught", ("out",)),
    ]
)
async def ctx_with_exceptions():
    log = []
    with Recorder(log, "s", suppress=True):
        log.append(await ask("in suppressing"))
        await fail("swallowed")
        log.append("not reached")
    try:
        with Recorder(log, "p"):
            log.append(await ask("in propagating"))
            raise KeyError("out")
    except KeyError as e:
        log.append(("caught", await ask(e.args)))
    return log


async def _find_first_even(items, log):
    for x in items:
        with Recorder(log, f"item{x}"):
            v = await ask(x)
            if v % 2 == 0:
                return ("found", v)  # return from inside with inside for
    return None


@case(
    [1, 2, 3],
    expect=(
        ("found", 2),
        [("enter", "item1"), ("exit", "item1", None), ("enter", "item2"), ("exit", "item2", None)],
        "tail",
    ),
)
async def ctx_with_in_loop_return(items):
    log = []
    r = await _find_first_even(items, log)
    return r, log, await ask("tail")


@case("x", expect=[("aenter", "s"), "x", ("body", "s"), ("aexit", "s", None)])
async def ctx_async_with(x):
    log = []
    async with Session(log, "s") as s:
        log.append(await ask(x))
        log.append(await ask(("body", s.name)))
    return log


@case(
    expect=[
        ("aenter", "quiet"),
        ("aexit", "quiet", "ValueError"),
        ("aenter", "loud"),
        ("aenter", "inner"),
        "body",
        ("aexit", "inner", "LookupError"),
        ("aexit", "loud", "LookupError"),
        ("caught", ("bubbles",)),
    ]
)
async def ctx_async_with_exceptions():
    log = []
    async with Session(log, "quiet", suppress=True):
        await fail("hidden")
    try:
        async with Session(log, "loud"), Session(log, "inner"):
            log.append(await ask("body"))
            raise LookupError("bubbles")
    except LookupError as e:
        log.append(("caught", e.args))
    return log

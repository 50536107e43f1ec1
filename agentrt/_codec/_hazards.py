"""Why a value cannot cross an await: the AR1xx code and the fix, per kind of value.

Only consulted on the error path, after the encoder has refused a value, so it
can afford ``isinstance`` chains.  Optional modules (asyncio, sqlite3, sockets,
executors...) are looked up in ``sys.modules`` rather than imported: if a module
was never imported, no value of its types can exist.
"""

from __future__ import annotations

import contextvars
import io
import re
import sys
import types
import weakref
from typing import Any  # Any: _thread's lock types are not importable

import attrs

from agentrt._codec._compat import TPFLAGS_HEAPTYPE, TPFLAGS_IMMUTABLETYPE


@attrs.frozen
class Refusal:
    """The verdict on one value: hazard code, readable type name and the fix to suggest.

    ``generic`` marks the verdicts that say only "agentrt has no reducer of its own for this
    type" (AR105 unmarked instances, AR111 other C types): a signed blob tries the pickle
    protocol for those; every other verdict (resources, awaitables, weak references...) stands
    in both modes.
    """

    code: str
    type_name: str
    fix: str
    generic: bool = False


FIX_PLAIN_DATA = (
    "Convert it to plain data (str, int, float, list, dict, dataclass marked @agentrt.serializable) "
    "before the await, or move the work that needs it into a tool."
)
FIX_RESOURCE = (
    "Open it inside a tool, or close it / `del` it before the await; agentrt leaves dead locals "
    "out of the checkpoint."
)
FIX_AWAITABLE = (
    "Await it before the suspension, or use task.gather / task.sleep / a tool instead of holding "
    "asyncio tasks, futures or foreign awaitables across an await."
)
FIX_INTERNAL_AWAITABLE = (
    "{name} is an awaitable of Python's generator machinery (such as the one aclose() or athrow() "
    "returns) that agentrt cannot checkpoint; let it finish before the next suspension."
)
FIX_MATCH = (
    "Keep the matched text instead (m.group(...), m.groupdict(), m.span()); "
    "a re.Match cannot be checkpointed."
)
FIX_TOKEN = (
    "A contextvars.Token belongs to the context it was made in, which a restore does not bring back. "
    "Call var.reset(token) before the await, or keep the value to restore instead and set it again "
    "with var.set(value); the variable itself is checkpointed when the run set it."
)
FIX_WEAKREF = "Hold a strong reference or plain data instead; weak references cannot be checkpointed."
#: itertools objects pickle on 3.11, warn (DeprecationWarning) on 3.12/3.13 and stop pickling in
#: 3.14: agentrt refuses them on every interpreter alike, so a blob's fate does not depend on it.
FIX_ITERTOOLS = (
    "{name} cannot be checkpointed on any Python (pickling itertools objects is deprecated since 3.12 "
    "and removed in 3.14). Materialise what is left into a list (or keep the counter as an int) "
    "before the await, or build the iterator after it."
)
FIX_GENERATOR = (
    "Exhaust it into a list before the await, or close it / `del` it; only generators that are part "
    "of the suspended chain are checkpointed."
)

_HTTP_PREFIXES = ("httpx", "requests", "aiohttp", "urllib3", "http.client", "httpcore")
_RESOURCE_PREFIXES = (
    "socket",
    "ssl",
    "selectors",
    "mmap",
    "subprocess",
    "multiprocessing",
    "concurrent.futures",
    "threading",
    "_thread",
    "queue",
    "sqlite3",
    "psycopg",
    "psycopg2",
    "asyncpg",
    "aiosqlite",
    "redis",
    "sqlalchemy",
    "pymongo",
    "botocore",
    "boto3",
    "grpc",
    "websockets",
    "asyncio",
)


def type_name(tp: type) -> str:
    """``module.QualName`` of a type, or just the name for builtins."""
    module = getattr(tp, "__module__", None)
    qualname = getattr(tp, "__qualname__", None) or getattr(tp, "__name__", "?")
    return str(qualname) if module in (None, "builtins") else f"{module}.{qualname}"


def _module_type(module: str, name: str) -> type | None:
    mod = sys.modules.get(module)
    found = getattr(mod, name, None) if mod is not None else None
    return found if isinstance(found, type) else None


def _instance_of(obj: object, module: str, *names: str) -> bool:
    for name in names:
        tp = _module_type(module, name)
        if tp is not None and isinstance(obj, tp):
            return True
    return False


def _has_prefix(module: object, prefixes: tuple[str, ...]) -> bool:
    return isinstance(module, str) and any(module == p or module.startswith(p + ".") for p in prefixes)


def _is_resource(obj: object) -> bool:
    if isinstance(obj, io.IOBase):
        return True
    lock_types = (type(_lock()) for _lock in (_allocate_lock, _make_rlock))
    if isinstance(obj, tuple(lock_types)):
        return True
    checks: list[tuple[str, tuple[str, ...]]] = [
        ("socket", ("socket",)),
        ("threading", ("Thread", "Event", "Condition", "Semaphore", "BoundedSemaphore", "Barrier", "Timer")),
        ("concurrent.futures", ("Executor", "Future")),
        ("sqlite3", ("Connection", "Cursor")),
        ("asyncio", ("AbstractEventLoop", "StreamReader", "StreamWriter", "Queue", "Lock", "Event")),
        ("subprocess", ("Popen",)),
        ("mmap", ("mmap",)),
    ]
    if any(_instance_of(obj, module, *names) for module, names in checks):
        return True
    module = getattr(type(obj), "__module__", None)
    return _has_prefix(module, _HTTP_PREFIXES) or _has_prefix(module, _RESOURCE_PREFIXES)


def _allocate_lock() -> Any:
    import _thread

    return _thread.allocate_lock()


def _make_rlock() -> Any:
    import _thread

    return _thread.RLock()


def _is_weak(obj: object) -> bool:
    if isinstance(obj, (weakref.ref, weakref.ProxyType, weakref.CallableProxyType)):
        return True
    return isinstance(
        obj, (weakref.WeakKeyDictionary, weakref.WeakValueDictionary, weakref.WeakSet, weakref.finalize)
    )


#: The marker a ``suspend()`` trap yields is meant for the runtime alone; user code holds it only by
#: driving a trap by hand (``suspend(x).send(None)``), and the class name would suggest a wrong fix.
FIX_TRAP_MARKER = (
    "It is the marker a suspend() trap yields to the runtime: this value was taken out of a trap driven "
    "by hand (send()/next() on suspend(x) or a request's __await__()). Await the request instead "
    "(await suspend(x), await task.tools.NAME(...)), and keep only what it returns."
)


def _is_future(obj: object) -> bool:
    return _instance_of(obj, "asyncio", "Future") or _instance_of(obj, "_asyncio", "Future")


def _has_await(tp: type) -> bool:
    return any("__await__" in vars(base) for base in tp.__mro__ if base is not object)


def classify(obj: object) -> Refusal:
    """The hazard of a value the encoder has no way to hold."""
    tp = type(obj)
    name = type_name(tp)
    if isinstance(obj, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        return Refusal("AR112", name, FIX_GENERATOR)
    if _is_future(obj):
        return Refusal("AR101", name, FIX_AWAITABLE)
    if _instance_of(obj, "agentrt.lowlevel", "_Request"):
        return Refusal("AR111", name, FIX_TRAP_MARKER)
    if isinstance(obj, re.Match):
        return Refusal("AR103", name, FIX_MATCH)
    if isinstance(obj, contextvars.Token):
        return Refusal("AR111", name, FIX_TOKEN)
    if _is_weak(obj):
        return Refusal("AR104", name, FIX_WEAKREF)
    if _is_resource(obj):
        return Refusal("AR112", name, FIX_RESOURCE)
    if _has_await(tp):
        if not tp.__flags__ & TPFLAGS_HEAPTYPE:  # Python's own machinery (aclose()/athrow() awaitables ...)
            return Refusal("AR111", name, FIX_INTERNAL_AWAITABLE.format(name=name))
        return Refusal("AR101", name, FIX_AWAITABLE)
    if isinstance(obj, (types.BuiltinMethodType, types.MethodWrapperType, types.MethodType)):
        owner = getattr(obj, "__self__", None)
        exits = ("__exit__", "__aexit__")
        if getattr(obj, "__name__", None) in exits and owner is not None and _is_resource(owner):
            # ``with lock:`` / ``with open(...)`` across an await keeps the bound __exit__ on the
            # stack: the problem is the lock or file, as ``agentrt check`` reports it (AR112)
            return Refusal("AR112", type_name(type(owner)), FIX_RESOURCE)
        return Refusal("AR106", name, bound_method_fix(obj))
    if isinstance(obj, types.ModuleType):
        return Refusal(
            "AR111",
            name,
            f"Module {obj.__name__!r} is not in sys.modules, so it cannot be found again by name. "
            + FIX_PLAIN_DATA,
        )
    if _has_prefix(getattr(tp, "__module__", None), ("itertools",)):
        return Refusal("AR111", name, FIX_ITERTOOLS.format(name=name))
    # a class of Python code (one @agentrt.serializable could mark); C types are AR111 on every
    # Python, whether the interpreter made them static or heap types
    if (
        tp.__flags__ & TPFLAGS_HEAPTYPE
        and not tp.__flags__ & TPFLAGS_IMMUTABLETYPE
        and not isinstance(obj, type)
    ):
        return Refusal(
            "AR105",
            name,
            f"Mark class {tp.__qualname__} with @agentrt.serializable (an unsigned blob holds instances "
            "of marked classes only), write the blob signed (the default: a signed blob carries "
            "instances of any importable class), or convert it to plain data before the await.",
            generic=True,
        )
    return Refusal(
        "AR111",
        name,
        f"agentrt cannot checkpoint a {name} in an unsigned blob (a signed blob tries the pickle "
        "protocol). " + FIX_PLAIN_DATA,
        generic=True,
    )


def bound_method_fix(method: object) -> str:
    owner = getattr(method, "__self__", None)
    owner_type = type_name(type(owner))
    return (
        f"It is bound to a {owner_type}, which cannot be checkpointed. Call it before the await, keep "
        f"plain data instead, mark the class of the object with @agentrt.serializable if it is yours, "
        "or move the call into a tool."
    )


def not_referable(kind: str, qualified: str, reason: str) -> str:
    """Fix text for functions/classes that cannot be found again by module:qualname."""
    return (
        f"The {kind} {qualified} {reason}. Define it at module level (or inside a function of an "
        "importable module), or keep plain data instead."
    )

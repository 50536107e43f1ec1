"""What well-known library calls return, as far as crossing an ``await`` goes.

The validator does not read the standard library or site-packages (see
``_resolve``); this table is what it knows about them instead.  Keys are the
dotted names an import resolves to (``from asyncio import gather as g`` makes
``g(...)`` a call of ``asyncio.gather``).  The kinds mirror the runtime's
``agentrt/_codec/_hazards.py``, so a value named here is one the checkpoint refuses.
"""

from __future__ import annotations

from agentrt.validate._values import Kind, Value, a

__all__ = [
    "AR102_FIXES",
    "FOREIGN_ASYNC_PREFIXES",
    "SCHEDULING_CALLS",
    "attribute_value",
    "awaited_value",
    "call_value",
    "is_agentrt",
    "is_foreign_async",
    "is_reopenable",
    "method_value",
]


def _resource(what: str, family: str, *, enter_self: bool = True, origin: str | None = None) -> Value:
    return Value(Kind.RESOURCE, what, family=family, enter_self=enter_self, origin=origin)


def _future(what: str, origin: str) -> Value:
    return Value(Kind.FUTURE, what, origin=origin)


_CALLS: dict[str, Value] = {}


def _add(names: str, make: object) -> None:
    for name in names.split():
        value = make(name) if callable(make) else make
        assert isinstance(value, Value)
        _CALLS[name] = value


# --- AR101: asyncio futures and tasks -------------------------------------------------
_add(
    "asyncio.create_task asyncio.ensure_future asyncio.Task", lambda n: _future(f"asyncio Task from {n}()", n)
)
_add(
    "asyncio.Future asyncio.wrap_future asyncio.shield asyncio.gather",
    lambda n: _future(f"asyncio Future from {n}()", n),
)
_add(
    "asyncio.run_coroutine_threadsafe concurrent.futures.Future",
    lambda n: _resource(f"concurrent.futures.Future from {n}()", "future", origin=n),
)

# --- AR103: regular expressions -------------------------------------------------------
_add("re.match re.search re.fullmatch", lambda n: Value(Kind.MATCH, f"re.Match from {n}()", origin=n))
_add(
    "re.finditer",
    lambda n: Value(
        Kind.MATCH_ITERATOR,
        f"iterator of re.Match from {n}()",
        origin=n,
        element=Value(Kind.MATCH, f"re.Match from {n}()", origin=n),
    ),
)
_add("re.compile", lambda n: Value(Kind.PATTERN, f"re.Pattern from {n}()", origin=n))

# --- AR104: weak references -----------------------------------------------------------
_add(
    "weakref.ref weakref.proxy weakref.WeakKeyDictionary weakref.WeakValueDictionary weakref.WeakSet "
    "weakref.finalize weakref.WeakMethod",
    lambda n: Value(Kind.WEAKREF, f"{n}()" if n.split(".")[-1][0].islower() else f"{n} object", origin=n),
)

# --- AR111: values the codec can hold for no reason at all ----------------------------
_add("sys._getframe inspect.currentframe", lambda n: Value(Kind.FRAME, f"frame object from {n}()", origin=n))
_add("builtins.memoryview", lambda n: Value(Kind.FRAME, "memoryview", origin=n))
# a ContextVar itself cannot cross in a local (a checkpoint carries the variables a run *set*, not
# the variable objects); the Token its set() returns belongs to the Context it was made in
_add(
    "contextvars.ContextVar",
    lambda n: Value(Kind.FRAME, "contextvars.ContextVar object", family="contextvar", origin=n),
)
TOKEN = Value(
    Kind.FRAME, "contextvars.Token from ContextVar.set()", family="token", origin="contextvars.Token"
)

# --- AR112: open resources ------------------------------------------------------------
_add(
    "builtins.open io.open io.FileIO os.fdopen codecs.open gzip.open bz2.open lzma.open",
    lambda n: _resource(f"file object from {n.removeprefix('builtins.')}()", "file", origin=n),
)
_add(
    "tempfile.TemporaryFile tempfile.NamedTemporaryFile tempfile.SpooledTemporaryFile",
    lambda n: _resource(f"temporary file from {n}()", "file", origin=n),
)
_add("tarfile.open zipfile.ZipFile", lambda n: _resource(f"archive file from {n}()", "file", origin=n))
_add(
    "socket.socket socket.create_connection socket.fromfd ssl.wrap_socket",
    lambda n: _resource(f"socket from {n}()", "socket", origin=n),
)
_add(
    "threading.Lock threading.RLock threading.Condition threading.Semaphore threading.BoundedSemaphore "
    "_thread.allocate_lock multiprocessing.Lock multiprocessing.RLock",
    lambda n: _resource(f"lock from {n}()", "lock", enter_self=False, origin=n),
)
_add(
    "threading.Event threading.Barrier multiprocessing.Event",
    lambda n: _resource(f"{n} object", "lock", origin=n),
)
_add(
    "threading.Thread threading.Timer multiprocessing.Process",
    lambda n: _resource(f"thread from {n}()", "thread", origin=n),
)
_add(
    "concurrent.futures.ThreadPoolExecutor concurrent.futures.ProcessPoolExecutor multiprocessing.Pool",
    lambda n: _resource(f"executor from {n}()", "executor", origin=n),
)
_add(
    "queue.Queue queue.SimpleQueue queue.LifoQueue queue.PriorityQueue multiprocessing.Queue",
    lambda n: _resource(f"thread queue from {n}()", "queue", origin=n),
)
_add(
    "sqlite3.connect psycopg.connect psycopg2.connect pymysql.connect redis.Redis redis.StrictRedis "
    "pymongo.MongoClient sqlalchemy.create_engine",
    lambda n: _resource(f"database connection from {n}()", "db", origin=n),
)
_add(
    "httpx.Client httpx.AsyncClient requests.Session requests.session aiohttp.ClientSession "
    "urllib3.PoolManager http.client.HTTPConnection http.client.HTTPSConnection",
    lambda n: _resource(f"HTTP client from {n}()", "http", origin=n),
)
_add(
    "openai.OpenAI openai.AsyncOpenAI anthropic.Anthropic anthropic.AsyncAnthropic",
    lambda n: _resource(f"API client from {n}()", "http", origin=n),
)
_add(
    "requests.get requests.post requests.put requests.patch requests.delete requests.head requests.options "
    "requests.request httpx.get httpx.post httpx.put httpx.patch httpx.delete httpx.head httpx.options "
    "httpx.request httpx.stream urllib.request.urlopen",
    lambda n: _resource(f"HTTP response from {n}()", "http", origin=n),
)
_add("subprocess.Popen", lambda n: _resource(f"process from {n}()", "process", origin=n))
_add(
    "mmap.mmap selectors.DefaultSelector select.epoll select.poll",
    lambda n: _resource(f"{n} object", "os", origin=n),
)
_add(
    "boto3.client boto3.resource boto3.Session grpc.insecure_channel grpc.secure_channel",
    lambda n: _resource(f"client from {n}()", "http", origin=n),
)
_add(
    "asyncio.get_event_loop asyncio.get_running_loop asyncio.new_event_loop",
    lambda n: _resource(f"event loop from {n}()", "loop", origin=n),
)
_add(
    "asyncio.Lock asyncio.Semaphore asyncio.BoundedSemaphore asyncio.Condition",
    lambda n: _resource(f"asyncio lock from {n}()", "asyncio", enter_self=False, origin=n),
)
_add(
    "asyncio.Event asyncio.Queue asyncio.PriorityQueue asyncio.LifoQueue asyncio.Barrier",
    lambda n: _resource(f"{n} object", "asyncio", origin=n),
)
_add(
    "asyncio.TaskGroup asyncio.timeout asyncio.timeout_at asyncio.Runner",
    lambda n: _resource(f"{n} object", "asyncio", origin=n),
)

#: Results of ``await X(...)`` that hold a resource (the call itself is AR102 as well).
_AWAITED: dict[str, Value] = {
    "asyncio.open_connection": Value(
        Kind.CONTAINER,
        "stream pair",
        elements=(
            _resource("asyncio.StreamReader from asyncio.open_connection()", "stream"),
            _resource("asyncio.StreamWriter from asyncio.open_connection()", "stream"),
        ),
        element=_resource("asyncio stream from asyncio.open_connection()", "stream"),
    ),
    "asyncio.create_subprocess_exec": _resource(
        "asyncio process from asyncio.create_subprocess_exec()", "process"
    ),
    "asyncio.create_subprocess_shell": _resource(
        "asyncio process from asyncio.create_subprocess_shell()", "process"
    ),
    "asyncpg.connect": _resource("database connection from asyncpg.connect()", "db"),
    "asyncpg.create_pool": _resource("database pool from asyncpg.create_pool()", "db"),
    "aiosqlite.connect": _resource("database connection from aiosqlite.connect()", "db"),
    "aiofiles.open": _resource("file object from aiofiles.open()", "file"),
    "websockets.connect": _resource("websocket from websockets.connect()", "socket"),
}
_AWAITED["asyncio.open_unix_connection"] = _AWAITED["asyncio.open_connection"]
# `async with aiofiles.open(...) as f` / `websockets.connect(...)` as context managers:
_add("aiofiles.open", lambda n: _resource(f"file object from {n}()", "file", origin=n))
_add("websockets.connect", lambda n: _resource(f"websocket from {n}()", "socket", origin=n))


def is_reopenable(dotted: str | None) -> bool:
    """Whether ``dotted`` names a class a signed blob re-creates on restore (``agentrt.reopenable``:
    the built-in httpx, openai and anthropic clients and whatever this process registered)."""
    if dotted is None:
        return False
    from agentrt._codec import REOPENABLE_REGISTRY as _REGISTRY

    return any(name.replace(":", ".") == dotted for name in _REGISTRY)


def call_value(dotted: str) -> Value | None:
    """The value of ``dotted(...)``, if it is a known hazard."""
    return _CALLS.get(dotted)


def awaited_value(dotted: str) -> Value | None:
    """The value of ``await dotted(...)``, if it is a known hazard."""
    return _AWAITED.get(dotted)


#: Methods of resource families whose result is itself a resource (or future).
_METHODS: dict[tuple[str, str], Value] = {
    ("db", "cursor"): _resource("database cursor", "db"),
    ("db", "execute"): _resource("database cursor", "db"),
    ("db", "executemany"): _resource("database cursor", "db"),
    ("db", "executescript"): _resource("database cursor", "db"),
    ("db", "connect"): _resource("database connection", "db"),
    ("socket", "makefile"): _resource("file object from socket.makefile()", "file"),
    ("socket", "dup"): _resource("socket from socket.dup()", "socket"),
    ("executor", "submit"): _resource("concurrent.futures.Future from executor.submit()", "future"),
    ("http", "stream"): _resource("HTTP response stream", "http"),
    ("http", "get"): _resource("HTTP response", "http"),
    ("http", "post"): _resource("HTTP response", "http"),
    ("http", "put"): _resource("HTTP response", "http"),
    ("http", "patch"): _resource("HTTP response", "http"),
    ("http", "delete"): _resource("HTTP response", "http"),
    ("http", "request"): _resource("HTTP response", "http"),
    ("http", "getresponse"): _resource("HTTP response", "http"),
    ("loop", "create_future"): _future("asyncio Future from loop.create_future()", "loop.create_future"),
    ("loop", "create_task"): _future("asyncio Task from loop.create_task()", "loop.create_task"),
    ("loop", "run_in_executor"): _future(
        "asyncio Future from loop.run_in_executor()", "loop.run_in_executor"
    ),
    ("asyncio", "create_task"): _future("asyncio Task from TaskGroup.create_task()", "TaskGroup.create_task"),
}
_METHODS[("socket", "accept")] = Value(
    Kind.CONTAINER,
    "(socket, address) pair",
    elements=(_resource("socket from socket.accept()", "socket"), None),
    element=_resource("socket from socket.accept()", "socket"),
)
_METHODS[("pattern", "match")] = Value(Kind.MATCH, "re.Match from Pattern.match()")
_METHODS[("pattern", "search")] = Value(Kind.MATCH, "re.Match from Pattern.search()")
_METHODS[("pattern", "fullmatch")] = Value(Kind.MATCH, "re.Match from Pattern.fullmatch()")
_METHODS[("pattern", "finditer")] = Value(
    Kind.MATCH_ITERATOR,
    "iterator of re.Match from Pattern.finditer()",
    element=Value(Kind.MATCH, "re.Match from Pattern.finditer()"),
)

#: Attributes of resources that are resources themselves (``proc.stdout``).
_ATTRIBUTES: dict[tuple[str, str], Value] = {
    ("process", "stdin"): _resource("pipe of a subprocess", "file"),
    ("process", "stdout"): _resource("pipe of a subprocess", "file"),
    ("process", "stderr"): _resource("pipe of a subprocess", "file"),
    ("http", "content"): _resource("HTTP response body stream", "http"),
    ("http", "raw"): _resource("HTTP response body stream", "http"),
}

#: Method names that, read off a resource without calling them, are bound methods.
_RESOURCE_METHOD_WORDS = (
    "read readline readlines write writelines close flush seek tell fileno send sendall recv recv_into "
    "sendto recvfrom accept connect acquire release wait notify notify_all set clear start join submit "
    "map shutdown cursor execute executemany commit rollback get post put patch delete head request "
    "stream json iter_lines iter_content communicate poll kill terminate create_task create_future "
    "run_in_executor call_soon call_later"
)
RESOURCE_METHODS = frozenset(_RESOURCE_METHOD_WORDS.split())


def method_value(base: Value, name: str) -> Value | None:
    """The value of ``base.name(...)``."""
    if base.kind is Kind.PATTERN:
        return _METHODS.get(("pattern", name))
    if base.kind is Kind.FRAME and base.family == "contextvar" and name == "set":
        return TOKEN
    if base.kind is Kind.RESOURCE and base.family is not None:
        return _METHODS.get((base.family, name))
    return None


def attribute_value(base: Value, name: str) -> Value | None:
    """The value of ``base.name`` (not called)."""
    if base.kind is Kind.RESOURCE and base.family is not None:
        found = _ATTRIBUTES.get((base.family, name))
        if found is not None:
            return found
        if name in RESOURCE_METHODS:
            return Value(Kind.BOUND_METHOD, f"bound method .{name} of {a(base.what)}", origin=base.what)
    if base.kind is Kind.INSTANCE and name in base.methods:
        # family "instance": bound to an object of an importable class, which a signed blob carries
        importable = "<locals>" not in (base.origin or "")
        return Value(
            Kind.BOUND_METHOD,
            f"bound method .{name} of {a(base.what)}",
            origin=base.what,
            family="instance" if importable else None,
        )
    return None


# --- AR102: foreign awaitables ---------------------------------------------------------

#: Awaiting anything from these packages inside agent code hands the driver an awaitable
#: that is not an agentrt request (the scheduler raises ForeignAwaitable, AR102).
FOREIGN_ASYNC_PREFIXES = (
    "asyncio",
    "anyio",
    "trio",
    "curio",
    "aiohttp",
    "httpx",
    "aiofiles",
    "aiosqlite",
    "asyncpg",
    "websockets",
    "aioredis",
    "redis.asyncio",
    "motor",
    "aiobotocore",
    "aiokafka",
    "aio_pika",
)

#: Calls that schedule work on the asyncio loop: AR102 even when not awaited on the spot.
SCHEDULING_CALLS = frozenset(
    {
        "asyncio.create_task",
        "asyncio.ensure_future",
        "asyncio.gather",
        "asyncio.shield",
        "asyncio.wait",
        "asyncio.wait_for",
        "asyncio.as_completed",
        "asyncio.sleep",
        "asyncio.run_coroutine_threadsafe",
        "asyncio.to_thread",
        "asyncio.run",
        "loop.create_task",
        "loop.run_in_executor",
        "loop.call_soon",
        "loop.call_later",
        "loop.call_at",
        "TaskGroup.create_task",
    }
)

_FIX_GATHER = "use `await task.gather([...])` with the calls written inline, or await each call in turn"
_FIX_DIRECT = "await the coroutine directly, or use `await task.gather([...])` for parallel tool calls"
AR102_FIXES: dict[str, str] = {
    "gather": _FIX_GATHER,
    "wait": _FIX_GATHER,
    "as_completed": _FIX_GATHER,
    "TaskGroup": _FIX_GATHER,
    "create_task": _FIX_DIRECT,
    "ensure_future": _FIX_DIRECT,
    "shield": "await the coroutine directly",
    "sleep": "use `await task.sleep(seconds)`, which the host turns into a durable timer",
    "wait_for": "give the tool call its own timeout instead of wrapping it in asyncio.wait_for",
    "timeout": "give the tool call its own timeout instead of an asyncio timeout block",
}
FIX_FOREIGN_DEFAULT = "do this I/O inside a tool and await the tool call instead"


def ar102_fix(dotted: str) -> str:
    return AR102_FIXES.get(dotted.rpartition(".")[2], FIX_FOREIGN_DEFAULT)


def _has_prefix(dotted: str, prefixes: tuple[str, ...]) -> bool:
    return any(dotted == p or dotted.startswith(p + ".") for p in prefixes)


def is_foreign_async(dotted: str) -> bool:
    """Whether ``dotted`` belongs to an async library other than agentrt."""
    return _has_prefix(dotted, FOREIGN_ASYNC_PREFIXES)


def is_agentrt(dotted: str) -> bool:
    """agentrt's own API: its awaitables are agentrt requests by construction."""
    return _has_prefix(dotted, ("agentrt",))

"""One function per hazard code: what makes it, why it breaks a checkpoint, the fix.

Two shapes of rule.  *Value rules* (AR101, AR103-AR106, AR111, AR112) judge an
abstract value that ``_flow`` found live at a suspension; they return a
:class:`Verdict` and the caller words the finding around the variable and the
await.  *Construct rules* (AR102, AR107, AR108, AR109) look at the function's
syntax -- what it awaits, how it iterates -- and yield :class:`Raw` findings.

The wording of ``why`` and ``fix`` follows the runtime's ``CannotCrossAwait`` fixes
(``agentrt/_codec/_hazards.py``) so that the static and the runtime message for the
same value read alike.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

import attrs

from agentrt.validate import _catalog
from agentrt.validate._bindings import FunctionScope
from agentrt.validate._infer import Inference
from agentrt.validate._model import ERROR, PORTABILITY, Severity
from agentrt.validate._resolve import is_async_generator, walk_scope
from agentrt.validate._values import Kind, Value, a

__all__ = [
    "Raw",
    "Verdict",
    "ar101_awaitable",
    "ar102_foreign_await",
    "ar103_regex",
    "ar104_weakref",
    "ar105_instance",
    "ar106_function",
    "ar107_async_generator",
    "ar108_streaming_async_for",
    "ar109_imported_async",
    "ar111_closing_async_generator",
    "ar111_unencodable",
    "ar112_resource",
    "first_suspension",
    "held_by_statement",
    "judge",
]


@attrs.frozen
class Verdict:
    """Why a live value is a hazard, and what to do about it."""

    code: str
    severity: Severity
    why: str
    fix: str


@attrs.frozen
class Raw:
    """A construct finding before it is given a path and a function."""

    code: str
    severity: Severity
    line: int
    col: int  # 0-based, as in the AST
    await_line: int | None
    variable: str | None
    message: str


# --- value rules -------------------------------------------------------------------------


def ar101_awaitable(value: Value) -> Verdict | None:
    """AR101: a promise held across an await.  An asyncio Future/Task belongs to an event
    loop and cannot be checkpointed; an agent coroutine not yet awaited can (agentrt
    captures its unstarted frame) but the compiled model cannot hold a pending promise."""
    if value.kind is Kind.FUTURE:
        return Verdict(
            "AR101",
            ERROR,
            "an asyncio future or task belongs to the event loop and cannot be checkpointed",
            "await it before the suspension, or use `await task.gather([...])` with the calls written inline",
        )
    if value.kind is Kind.COROUTINE:
        return Verdict(
            "AR101",
            PORTABILITY,
            "agentrt checkpoints the unstarted coroutine, but the compiled-agent model loses a promise held "
            "in a local",
            "await the call where it is made (`x = await f()`), or pass the calls inline to task.gather",
        )
    return None


def ar103_regex(value: Value) -> Verdict | None:
    """AR103: regular expressions.  A ``re.Match`` (and an iterator of them) cannot be
    rebuilt; a ``re.Pattern`` is rebuilt by agentrt from pattern and flags, which the
    s11n model does not do."""
    if value.kind in (Kind.MATCH, Kind.MATCH_ITERATOR):
        return Verdict(
            "AR103",
            ERROR,
            "a re.Match cannot be checkpointed",
            "keep the matched text instead (m.group(...), m.groupdict(), m.span()) or finish with the match "
            "before the await",
        )
    if value.kind is Kind.PATTERN:
        return Verdict(
            "AR103",
            PORTABILITY,
            "agentrt rebuilds a re.Pattern from its pattern and flags, the compiled-agent model does not",
            "keep the pattern string and compile it after the await (re caches compiled patterns)",
        )
    return None


def ar104_weakref(value: Value) -> Verdict | None:
    """AR104: weak references point at objects a checkpoint does not own."""
    if value.kind is Kind.WEAKREF:
        return Verdict(
            "AR104",
            ERROR,
            "weak references cannot be checkpointed",
            "hold a strong reference or plain data instead, or drop the weak reference before the await",
        )
    return None


def ar105_instance(value: Value) -> Verdict | None:
    """AR105: instances of classes whose authors did not opt in to being restored from a blob.

    A class importable by ``module:qualname`` is carried by a signed blob (the default) through
    the pickle protocol, so that is a portability finding (an unsigned blob, or the s11n model,
    does not carry it; ``Profile.default`` does not show it, ``--profile portable`` fails on it).
    A class defined inside a function cannot be found again in any blob: an error.
    """
    if value.kind is Kind.INSTANCE:
        name = (value.origin or "the class").rpartition(".")[2]
        if not importable_class(value):
            return Verdict(
                "AR105",
                ERROR,
                "agentrt cannot find a class defined inside a function again after a restore",
                f"define class {name} at module level, or convert it to plain data before the await",
            )
        return Verdict(
            "AR105",
            PORTABILITY,
            "a signed blob (the default) carries it through the pickle protocol, but an unsigned blob "
            "and the s11n model hold only instances of classes marked @agentrt.serializable",
            f"mark class {name} with @agentrt.serializable, or convert it to plain data before the await",
        )
    return None


def importable_class(value: Value) -> bool:
    """Whether the class of an INSTANCE value is defined at module level (found by module:qualname)."""
    return "<locals>" not in (value.origin or "")


def ar106_function(value: Value, *, called: bool = False) -> Verdict | None:
    """AR106: function values.  A bound method of an object that cannot be checkpointed is
    an error; a function agentrt can name by ``module:qualname`` (or a partial of one, or a
    callback parameter) is resumed by reference, which the compiled model cannot do.
    ``called`` says whether the function body calls the variable (the only evidence that an
    imported name of unknown kind is a function)."""
    if value.kind is Kind.BOUND_METHOD and value.family == "instance":
        return Verdict(
            "AR106",
            PORTABILITY,
            "a signed blob (the default) carries the bound method and its object (pickle protocol), but "
            "an unsigned blob and the compiled-agent model do not",
            "call it before the await and keep the result, or look the method up again after the await",
        )
    if value.kind is Kind.BOUND_METHOD:
        return Verdict(
            "AR106",
            ERROR,
            "a bound method holds its object, which cannot be checkpointed",
            "call it before the await and keep the result, or look the method up again after the await",
        )
    portable = (Kind.FUNCTION, Kind.PARTIAL, Kind.CALLABLE_PARAMETER)
    if value.kind in portable or (value.kind is Kind.EXTERNAL_NAME and called):
        return Verdict(
            "AR106",
            PORTABILITY,
            "agentrt resumes it by reference, but the compiled-agent model loses function values that come "
            "from outside the agent's own code",
            "wrap it in a lambda written in the agent (`f = lambda *a: helper(*a)`), or call it before the "
            "await and keep only its result",
        )
    return None


def ar111_unencodable(value: Value) -> Verdict | None:
    """AR111: values no serializer holds (frames, memory views, context variable tokens)."""
    if value.kind is Kind.FRAME and value.family == "token":
        return Verdict(
            "AR111",
            ERROR,
            "a contextvars.Token belongs to the context it was made in, which a restore does not bring back",
            "call var.reset(token) before the await, or keep the value to restore and set it again with "
            "var.set(value); the variable itself is checkpointed when the run set it",
        )
    if value.kind is Kind.FRAME:
        return Verdict(
            "AR111",
            ERROR,
            f"agentrt cannot checkpoint a {value.what.split(' from ')[0]}",
            "keep plain data (str, int, list, dict, a @serializable class) instead, or drop it before "
            "the await",
        )
    return None


def ar112_resource(value: Value) -> Verdict | None:
    """AR112: open resources (files, sockets, locks, threads, executors, connections,
    HTTP clients, event loops) belong to this process and cannot move to another one.  A client of a
    class registered with ``agentrt.reopenable`` (httpx, openai, anthropic built in) is a portability
    finding only: a signed blob re-creates it, which ``Profile.default`` does not show."""
    if value.kind is Kind.RESOURCE and _catalog.is_reopenable(value.origin):
        return Verdict(
            "AR112",
            PORTABILITY,
            "a signed blob re-creates this client on restore (agentrt.reopenable: its configuration is "
            "saved, never its connections or secrets), an unsigned blob refuses it",
            "keep the blobs signed (the default), or open the client inside a tool",
        )
    if value.kind is Kind.RESOURCE:
        return Verdict(
            "AR112",
            ERROR,
            "open resources belong to this process and cannot be checkpointed",
            "open it inside a tool, or close it / end the `with` block / `del` it before the await "
            "(agentrt leaves dead locals out of the checkpoint)",
        )
    return None


_VALUE_RULES = (
    ar101_awaitable,
    ar103_regex,
    ar104_weakref,
    ar105_instance,
    ar111_unencodable,
    ar112_resource,
)


def judge(value: Value | None, *, called: bool = False) -> Verdict | None:
    """The verdict on a value live at a suspension (containers: on what they hold)."""
    if value is None:
        return None
    if value.kind is Kind.CONTAINER:
        return judge(value.element, called=False)
    for rule in _VALUE_RULES:
        verdict = rule(value)
        if verdict is not None:
            return verdict
    return ar106_function(value, called=called)


# --- construct rules -----------------------------------------------------------------------


def first_suspension(body: Sequence[ast.AST], *, async_generator: bool) -> ast.AST | None:
    """The first place in ``body`` (same scope) where the frame can suspend."""
    found: list[ast.AST] = []
    for node in walk_scope(body):
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            found.append(node)
        elif isinstance(node, ast.comprehension) and node.is_async:
            found.append(node.iter)
        elif async_generator and isinstance(node, ast.Yield):
            found.append(node)
    if not found:
        return None
    return min(found, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))


def _scope_nodes(scope: FunctionScope) -> Iterator[ast.AST]:
    return walk_scope(scope.node.body)


def _awaited_calls(scope: FunctionScope) -> set[int]:
    return {id(n.value) for n in _scope_nodes(scope) if isinstance(n, ast.Await)}


def _foreign_call(infer: Inference, call: ast.Call) -> str | None:
    """The dotted name (or ``receiver.method``) of a call into a foreign async library."""
    dotted, _, receiver = infer.callee(call.func)
    if dotted is not None:
        return dotted if _catalog.is_foreign_async(dotted) else None
    if receiver is not None and receiver.kind is Kind.RESOURCE and isinstance(call.func, ast.Attribute):
        return f"{receiver.family or 'resource'}.{call.func.attr}"
    return None


def ar102_foreign_await(scope: FunctionScope, infer: Inference) -> Iterator[Raw]:
    """AR102: awaiting something that is not an agentrt request or a Python coroutine
    (asyncio.gather / wait / sleep / open_connection, a Task, an aiohttp call...), or
    scheduling asyncio work (create_task, ensure_future) from agent code.  agentrt suspends
    only on its own requests; the run would stop with ForeignAwaitable."""
    awaited = _awaited_calls(scope)
    for node in _scope_nodes(scope):
        if isinstance(node, ast.Await):
            target = node.value
            name: str | None = None
            if isinstance(target, ast.Call):
                name = _foreign_call(infer, target)
            else:
                value = infer.value(target)
                if value is not None and (value.kind is Kind.FUTURE or value.family == "future"):
                    yield Raw(
                        "AR102",
                        ERROR,
                        node.lineno,
                        node.col_offset,
                        node.lineno,
                        _name_of(target),
                        f"awaiting {a(value.what)} inside agent code: agentrt suspends only on its own "
                        "requests, so the run stops with ForeignAwaitable; fix: await the coroutine "
                        "itself, or use `await task.gather([...])`",
                    )
                    continue
            if name is not None:
                yield Raw(
                    "AR102",
                    ERROR,
                    node.lineno,
                    node.col_offset,
                    node.lineno,
                    None,
                    f"awaiting {name}() inside agent code hands the driver an awaitable that is not an "
                    f"agentrt request, so the run stops with ForeignAwaitable; fix: "
                    f"{_catalog.ar102_fix(name)}",
                )
        elif isinstance(node, ast.Call) and id(node) not in awaited:
            dotted, _, receiver = infer.callee(node.func)
            name = None
            if dotted in _catalog.SCHEDULING_CALLS:
                name = dotted
            elif receiver is not None and isinstance(node.func, ast.Attribute):
                key = {"loop": "loop", "asyncio": "TaskGroup"}.get(receiver.family or "")
                if key and f"{key}.{node.func.attr}" in _catalog.SCHEDULING_CALLS:
                    name = f"{key}.{node.func.attr}"
            if name is not None:
                yield Raw(
                    "AR102",
                    ERROR,
                    node.lineno,
                    node.col_offset,
                    None,
                    None,
                    f"calling {name}() inside agent code schedules work on the asyncio event loop, "
                    f"outside the chain agentrt checkpoints; fix: {_catalog.ar102_fix(name)}",
                )
        elif isinstance(node, ast.AsyncWith):
            for item in node.items:
                value = infer.value(item.context_expr)
                if value is not None and value.kind is Kind.RESOURCE:
                    yield Raw(
                        "AR102",
                        ERROR,
                        item.context_expr.lineno,
                        item.context_expr.col_offset,
                        node.lineno,
                        _name_of(item.optional_vars),
                        f"`async with` over {a(value.what)} awaits its __aenter__/__aexit__, which are "
                        "not agentrt requests, so the run stops with ForeignAwaitable; fix: "
                        f"{_catalog.ar102_fix(value.origin or '')}",
                    )


def _cleanup_suspension(node: ast.AST) -> ast.AST | None:
    """Where an async generator's ``finally`` (or a handler that catches ``GeneratorExit``) suspends."""
    for inner in walk_scope(getattr(node, "body", [])):
        if not isinstance(inner, ast.Try | ast.TryStar):
            continue
        bodies = [inner.finalbody]
        for handler in inner.handlers:
            caught = handler.type
            names = [caught] if not isinstance(caught, ast.Tuple) else list(caught.elts)
            if caught is None or any(_name_of(n) in ("GeneratorExit", "BaseException") for n in names):
                bodies.append(handler.body)
        for body in bodies:
            found = first_suspension(body, async_generator=False)
            if found is not None:
                return found
    return None


def ar111_closing_async_generator(scope: FunctionScope, infer: Inference) -> Iterator[Raw]:
    """AR111: ``await ag.aclose()`` (or ``athrow``) on an async generator of agent code whose
    cleanup suspends.  The frame then waits inside the awaitable ``aclose()`` returned, part of
    Python's generator machinery, which a checkpoint cannot hold (the runtime refuses it with
    the same code)."""
    for node in _scope_nodes(scope):
        if not (isinstance(node, ast.Await) and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        if not (isinstance(func, ast.Attribute) and func.attr in ("aclose", "athrow")):
            continue
        value = infer.value(func.value)
        symbol = value.symbol if value is not None and value.kind is Kind.ASYNC_GENERATOR else None
        inner = _cleanup_suspension(symbol.node) if symbol is not None and symbol.node is not None else None
        if symbol is None or inner is None:
            continue
        line = getattr(inner, "lineno", node.lineno)
        yield Raw(
            "AR111",
            ERROR,
            node.lineno,
            node.col_offset,
            node.lineno,
            _name_of(func.value),
            f"awaiting {_name_of(func.value) or 'the async generator'}.{func.attr}() runs the cleanup of "
            f"{symbol.qualified}(), which suspends at line {line}: the frame then waits inside the "
            f"awaitable {func.attr}() returned (async_generator_athrow), an awaitable of Python's generator "
            "machinery that agentrt cannot checkpoint; fix: let it finish before the next suspension -- "
            "do not suspend in the generator's finally, or consume the generator to its end instead of "
            f"calling {func.attr}()",
        )


def ar107_async_generator(scope: FunctionScope) -> Iterator[Raw]:
    """AR107: ``async def`` with ``yield``.  agentrt checkpoints async generators; the
    compiled-agent model rejects them at build time."""
    node = scope.node
    if is_async_generator(node):
        yield Raw(
            "AR107",
            PORTABILITY,
            node.lineno,
            node.col_offset,
            None,
            None,
            f"{scope.qualname}() is an async generator: agentrt checkpoints it, but the compiled-agent "
            "model rejects async generators; fix: return a list, or accumulate the results in the "
            "caller",
        )


def _foreign_iterable(infer: Inference, expr: ast.expr) -> str | None:
    """A description of ``expr`` if it is an async iterator agent code did not write."""
    value = infer.value(expr)
    if value is not None and value.kind is Kind.ASYNC_GENERATOR:
        return None
    if value is not None and value.kind in (Kind.RESOURCE, Kind.FUTURE):
        return value.what
    if isinstance(expr, ast.Call):
        dotted, _, receiver = infer.callee(expr.func)
        if dotted is not None and not _catalog.is_agentrt(dotted) and not dotted.startswith("builtins."):
            return f"{dotted}()"
        if receiver is not None and receiver.kind is Kind.RESOURCE and isinstance(expr.func, ast.Attribute):
            return f"{receiver.what}.{expr.func.attr}()"
    return None


def ar108_streaming_async_for(scope: FunctionScope, infer: Inference) -> Iterator[Raw]:
    """AR108: ``async for`` over an async iterator not written in agent code (a network
    stream) whose body suspends: the stream's position lives in a foreign object that a
    checkpoint cannot hold.  Without a suspension in the body, each step still awaits
    the foreign ``__anext__``: that is AR102."""
    agen = is_async_generator(scope.node)
    for node in _scope_nodes(scope):
        if not isinstance(node, ast.AsyncFor):
            continue
        what = _foreign_iterable(infer, node.iter)
        if what is None:
            continue
        inner = first_suspension(node.body, async_generator=agen)
        if inner is not None:
            line = getattr(inner, "lineno", node.lineno)
            yield Raw(
                "AR108",
                ERROR,
                node.lineno,
                node.col_offset,
                line,
                _name_of(node.iter),
                f"`async for` iterates over {what}, which is not an async generator written in agent "
                f"code, and its body suspends at line {line}: the stream cannot be checkpointed; fix: "
                "read the stream inside a tool and return a list, then iterate over the list",
            )
        else:
            yield Raw(
                "AR102",
                ERROR,
                node.lineno,
                node.col_offset,
                node.lineno,
                _name_of(node.iter),
                f"`async for` over {what} awaits its __anext__, which is not an agentrt request, so "
                "the run stops with ForeignAwaitable; fix: read the stream inside a tool and return a "
                "list",
            )


def ar109_imported_async(scope: FunctionScope, infer: Inference) -> Iterator[Raw]:
    """AR109: an async function from another module awaited by the agent.  agentrt
    checkpoints its frame like any other; the compiled model compiles only the agent's
    file, so the helper's state is lost if it suspends."""
    home = scope.module.info
    for node in _scope_nodes(scope):
        if not isinstance(node, (ast.Await, ast.AsyncFor)):
            continue
        call = node.value if isinstance(node, ast.Await) else node.iter
        if not isinstance(call, ast.Call):
            continue
        _, symbol, _ = infer.callee(call.func)
        if symbol is None or symbol.module is home:
            continue
        if symbol.kind not in ("async_function", "async_generator"):
            continue
        if symbol.module.name is not None and _catalog.is_agentrt(symbol.module.name):
            continue
        verb = "awaiting" if isinstance(node, ast.Await) else "`async for` over"
        yield Raw(
            "AR109",
            PORTABILITY,
            node.lineno,
            node.col_offset,
            node.lineno,
            None,
            f"{verb} {symbol.qualified}(), an async function from another module: agentrt checkpoints "
            "its frame, but the compiled-agent model compiles only the agent's own file and loses its "
            "state; fix: keep async code that crosses an await in the agent's module, and move only "
            "synchronous helpers out",
        )


def held_by_statement(
    scope: FunctionScope, infer: Inference
) -> Iterator[tuple[Raw, tuple[str, int, int] | None]]:
    """Hazards held on the value stack rather than in a local: the context manager of a
    ``with`` block (its ``__exit__`` is on the stack for the whole body) and the iterator
    of a ``for`` loop or comprehension, when the body suspends.  Liveness of the ``as``
    variable does not matter here -- the stack holds the object either way, and the
    runtime encodes the stack.  Yields each finding with the ``as`` binding it covers,
    so the same object is not reported twice."""
    agen = is_async_generator(scope.node)
    for node in _scope_nodes(scope):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inner = first_suspension(node.body, async_generator=agen)
            if inner is None:
                continue
            line = getattr(inner, "lineno", node.lineno)
            for item in node.items:
                value = infer.value(item.context_expr)
                verdict = judge(value)
                if verdict is None or value is None:
                    continue
                target = item.optional_vars
                covers = (
                    (target.id, target.lineno, target.col_offset) if isinstance(target, ast.Name) else None
                )
                yield (
                    Raw(
                        verdict.code,
                        verdict.severity,
                        item.context_expr.lineno,
                        item.context_expr.col_offset,
                        line,
                        _name_of(target),
                        f"the `with` block at line {node.lineno} holds {a(value.what)} (its __exit__ "
                        f"stays on the stack) across the await at line {line} in {scope.qualname}(): "
                        f"{verdict.why}; fix: {verdict.fix}",
                    ),
                    covers,
                )
        elif isinstance(node, ast.For):
            inner = first_suspension(node.body, async_generator=agen)
            if inner is not None:
                yield from _held_iterator(scope, infer, node.iter, node.lineno, inner, "`for` loop")
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
            elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            rest = [*elements, *node.generators[0].ifs, *node.generators[1:]]
            inner = first_suspension(rest, async_generator=False)
            if inner is not None and not node.generators[0].is_async:
                yield from _held_iterator(
                    scope, infer, node.generators[0].iter, node.lineno, inner, "comprehension"
                )


def _held_iterator(
    scope: FunctionScope, infer: Inference, iterable: ast.expr, line: int, inner: ast.AST, what: str
) -> Iterator[tuple[Raw, tuple[str, int, int] | None]]:
    value = infer.value(iterable)
    if value is None or value.kind is Kind.CONTAINER:
        return  # iterating a list keeps a list iterator: fine; its items are the loop variable's business
    verdict = judge(value)
    if verdict is None:
        return
    await_line = getattr(inner, "lineno", line)
    yield (
        Raw(
            verdict.code,
            verdict.severity,
            iterable.lineno,
            iterable.col_offset,
            await_line,
            _name_of(iterable),
            f"the {what} at line {line} iterates over {a(value.what)}, which stays on the stack across the "
            f"await at line {await_line} in {scope.qualname}(): {verdict.why}; fix: {verdict.fix}",
        ),
        None,
    )


def _name_of(expr: ast.AST | None) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else None

"""``@tool``: plain functions (sync or async) as tools with a JSON Schema; ``pick`` / ``omit``; ``ui_tools``.

A tool runs in the host, never in the agent's frame: the agent only builds a
request (``task.tools.NAME(**kwargs)``) and the runtime calls the function --
async tools on the event loop, sync tools in a bounded thread pool.  A tool that
declares a parameter named ``idempotency_key`` receives a key stable across
retries of the same call (``"RUN_ID:SEQ"``); it is not part of the schema.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, overload

import attrs

from agentrt._sdk.schema import json_schema

__all__ = ["IDEMPOTENCY_PARAM", "Tool", "UiTool", "omit", "pick", "tool", "tool_name", "ui_tools"]

IDEMPOTENCY_PARAM = "idempotency_key"
_ARGS_HEADERS = ("args:", "arguments:", "parameters:", "params:")
_SECTION_RE = re.compile(
    r"^\s*(returns?|raises?|yields?|examples?|notes?|see also|attributes?)\s*:\s*$", re.I
)
_PARAM_RE = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        if lines[i].strip().lower() in _ARGS_HEADERS:
            break
        if _SECTION_RE.match(lines[i]):
            break
        description.append(lines[i])
        i += 1
    if i < len(lines) and lines[i].strip().lower() in _ARGS_HEADERS:
        i += 1
        current: str | None = None
        indent: int | None = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            if _SECTION_RE.match(line) or (
                line[:1].strip() and line.strip().endswith(":") and " " not in line.strip()
            ):
                break
            this_indent = len(line) - len(line.lstrip())
            match = _PARAM_RE.match(line.strip())
            if match and (indent is None or this_indent <= indent):
                indent = this_indent
                current = match.group(1).lstrip("*")
                params[current] = match.group(3).strip()
            elif current is not None:
                params[current] = (params[current] + " " + line.strip()).strip()
            i += 1
    return "\n".join(description).strip(), params


@attrs.frozen(eq=False)
class Tool:
    """A function the agent may call as ``task.tools.<name>(**kwargs)``.

    Calling the ``Tool`` object directly calls the function (handy in tests).
    """

    fn: Callable[..., Any]
    name: str
    description: str
    parameters: dict[str, Any]
    is_async: bool
    takes_idempotency_key: bool
    #: Run policy (``@tool(timeout=, attempts=, backoff=, retry_on=)``): each attempt may take at
    #: most ``timeout`` seconds (``TimeoutError``); a failure of a ``retry_on`` type is tried
    #: again, up to ``attempts`` in all, after ``backoff * 2**(n-1)`` seconds.  Only the final
    #: outcome is journaled.
    timeout: float | None = None
    attempts: int = 1
    backoff: float = 0.0
    retry_on: tuple[type[BaseException], ...] = (Exception,)
    #: ``@tool(inline=True)``: a sync tool called on the event loop's thread instead of the thread
    #: pool (no thread hop), for quick functions that never block; a timeout cannot stop it there.
    inline: bool = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def json_schema(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}`` as LLM tool-use APIs expect."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        return f"<tool {self.name} ({kind}) {self.fn.__module__}.{self.fn.__qualname__}>"


@attrs.frozen
class UiTool:
    """A marker in an agent's tool list that enables ``task.ui`` (``ui_tools`` holds both)."""

    name: str
    description: str

    def json_schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": {"type": "object"}}


ui_tools: list[Any] = [
    UiTool("ui_notify", "Show a progress or status event to the user without waiting."),
    UiTool("ui_ask", "Ask the user a question and wait for the reply."),
]


def _check_inline(inline: Any, timeout: float | None) -> bool:
    if not isinstance(inline, bool):
        raise TypeError(f"@tool(inline=...) must be True or False, got {inline!r}")
    if inline and timeout is not None:
        raise ValueError(
            "@tool(inline=True, timeout=...): an inline call runs on the event loop's thread, where "
            "no timeout can stop it; drop timeout=, or drop inline=True to run the tool in the thread pool"
        )
    return inline


def _check_policy(
    timeout: float | None, attempts: int, backoff: float, retry_on: Any
) -> tuple[type[BaseException], ...]:
    if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"@tool(timeout=...) must be a number of seconds > 0, got {timeout!r}")
    if not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"@tool(attempts=...) must be an int >= 1, got {attempts!r}")
    if not isinstance(backoff, int | float) or backoff < 0:
        raise ValueError(f"@tool(backoff=...) must be seconds >= 0, got {backoff!r}")
    types = retry_on if isinstance(retry_on, tuple) else (retry_on,)
    if not all(isinstance(t, type) and issubclass(t, BaseException) for t in types):
        raise TypeError(f"@tool(retry_on=...) must be exception classes, got {retry_on!r}")
    return types


def _make_tool(
    fn: Callable[..., Any], name: str | None, description: str | None, policy: dict[str, Any] | None = None
) -> Tool:
    if isinstance(fn, Tool):
        return fn
    if not callable(fn):
        raise TypeError(f"@tool decorates functions, got {fn!r}")
    target = inspect.unwrap(fn)
    doc_description, param_docs = parse_docstring(inspect.getdoc(target))
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise TypeError(
            f"@tool {getattr(fn, '__qualname__', fn)!r}: cannot resolve its annotations: {exc}"
        ) from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    takes_key = False
    for param in inspect.signature(target).parameters.values():
        if param.name == IDEMPOTENCY_PARAM:
            takes_key = True
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(
                f"@tool {target.__qualname__}: parameter {param.name!r} is positional-only; "
                "tools are called with keyword arguments, so remove the '/'"
            )
        ann = hints.get(param.name, Any)
        try:
            prop = json_schema(ann)
        except TypeError as exc:
            raise TypeError(f"@tool {target.__qualname__}, parameter {param.name!r}: {exc}") from None
        if param.name in param_docs:
            prop = {**prop, "description": param_docs[param.name]}
        if param.default is param.empty:
            required.append(param.name)
        else:
            try:
                from agentrt._sdk.schema import to_jsonable

                prop = {**prop, "default": to_jsonable(param.default)}
            except TypeError:
                pass
        properties[param.name] = prop
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    parameters["additionalProperties"] = False
    if policy and policy.get("inline") and inspect.iscoroutinefunction(target):
        raise TypeError(
            f"@tool(inline=True) {target.__qualname__}: an async tool already runs on the event loop; "
            "inline=True is for sync (def) tools -- drop it"
        )
    return Tool(
        fn=fn,
        name=name or target.__name__,
        description=description if description is not None else doc_description,
        parameters=parameters,
        is_async=inspect.iscoroutinefunction(target),
        takes_idempotency_key=takes_key,
        **(policy or {}),
    )


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    attempts: int = 1,
    backoff: float = 0.0,
    retry_on: type[BaseException] | tuple[type[BaseException], ...] = (Exception,),
    inline: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    attempts: int = 1,
    backoff: float = 0.0,
    retry_on: type[BaseException] | tuple[type[BaseException], ...] = (Exception,),
    inline: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make ``fn`` (``def`` or ``async def``) a tool; its annotations and docstring become its JSON Schema.

    ``@tool`` or ``@tool(name="...", description="...")``.  The docstring's first
    part is the description and a Google-style ``Args:`` section describes the
    parameters.  Run policy: ``timeout`` (seconds per attempt; a sync tool's thread
    cannot be killed, only abandoned), ``attempts`` (in all), ``backoff`` (seconds before
    the 2nd attempt, doubling after), ``retry_on`` (the exception types worth another try).

    ``inline=True`` (sync tools only) calls the function on the event loop's thread instead
    of agentrt's thread pool: no thread hop (tens of microseconds a call), for quick pure
    functions.  The loop and every other run wait while it runs, so a tool that does I/O or
    may take long must stay in the pool; ``timeout`` cannot interrupt an inline call.
    """
    policy = {
        "timeout": timeout,
        "attempts": attempts,
        "backoff": float(backoff),
        "retry_on": _check_policy(timeout, attempts, backoff, retry_on),
        "inline": _check_inline(inline, timeout),
    }
    if fn is not None:
        return _make_tool(fn, name, description, policy)
    return lambda f: _make_tool(f, name, description, policy)


def tool_name(item: Any) -> str:
    name = getattr(item, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"{item!r} is not a tool: use @tool functions, agent(...) values or ui_tools")
    return name


def _as_list(tools: Iterable[Any] | Mapping[str, Any]) -> list[Any]:
    if isinstance(tools, Mapping):
        return list(tools.values())
    return [tool(t) if callable(t) and not hasattr(t, "name") else t for t in tools]


def pick(tools: Iterable[Any] | Mapping[str, Any], names: Iterable[str]) -> list[Any]:
    """The tools of ``tools`` named in ``names``, in the order of ``names``."""
    by_name = {tool_name(t): t for t in _as_list(tools)}
    out = []
    for n in names:
        if n not in by_name:
            raise KeyError(f"pick: no tool named {n!r}; the tools are: {', '.join(sorted(by_name))}")
        out.append(by_name[n])
    return out


def omit(tools: Iterable[Any] | Mapping[str, Any], names: Iterable[str]) -> list[Any]:
    """``tools`` without the ones named in ``names``."""
    items = _as_list(tools)
    drop = set(names)
    known = {tool_name(t) for t in items}
    unknown = drop - known
    if unknown:
        raise KeyError(
            f"omit: no tool named {sorted(unknown)[0]!r}; the tools are: {', '.join(sorted(known))}"
        )
    return [t for t in items if tool_name(t) not in drop]

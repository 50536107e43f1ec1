"""``agent(input=, output=, tools=, run=)`` and finding agents by ``MODULE:ATTR``."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import types
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any  # Any: an agent's input and output are its author's values

import attrs

from agentrt._sdk.schema import mark_serializable as _mark_serializable
from agentrt._sdk.schema import object_schema, structure, to_jsonable
from agentrt._sdk.task import Task
from agentrt._sdk.tools import Tool, UiTool, tool, tool_name
from agentrt.exceptions import AgentSpecError, SchemaError

__all__ = ["Agent", "agent", "agent_spec", "load_agent", "load_agent_of_run", "load_object"]

#: Set on modules that :func:`load_agent` loaded from a file path.
FILE_MARK = "__agentrt_file__"


@attrs.frozen(eq=False)
class Agent:
    """An agent definition: schemas, tools and the ``run`` coroutine function.

    Referable as ``MODULE:ATTR`` by the command line; listed in another agent's
    tools it becomes a sub-agent (``await task.tools.<name>(**input)``).
    """

    input: type
    output: type
    run: Callable[..., Coroutine[Any, Any, Any]]
    tools: Mapping[str, Any]
    name: str
    description: str

    # -- schemas

    def input_json_schema(self) -> dict[str, Any]:
        return object_schema(self.input)

    def output_json_schema(self) -> dict[str, Any]:
        return object_schema(self.output)

    def json_schema(self) -> dict[str, Any]:
        """This agent as a tool for another agent or an LLM."""
        return {"name": self.name, "description": self.description, "parameters": self.input_json_schema()}

    parameters = property(input_json_schema)

    # -- values

    def convert_input(self, value: Any) -> Any:
        """Validate and convert ``value`` (an ``input`` instance or JSON-like dict) to the input class."""
        try:
            return structure(value, self.input, "input")
        except SchemaError as exc:
            raise SchemaError(exc.path, exc.problem, agent=self.name) from None

    def convert_output(self, value: Any) -> Any:
        try:
            return structure(value, self.output, "output")
        except SchemaError as exc:
            raise SchemaError(exc.path, exc.problem, agent=self.name) from None

    def output_to_json(self, value: Any) -> Any:
        return to_jsonable(value)

    def input_to_json(self, value: Any) -> Any:
        return to_jsonable(value)

    # -- tools

    @property
    def has_ui(self) -> bool:
        return any(isinstance(t, UiTool) for t in self.tools.values())

    def make_task(self, run_id: str) -> Task:
        plain = tuple(n for n, t in self.tools.items() if isinstance(t, Tool))
        agents = tuple(n for n, t in self.tools.items() if isinstance(t, Agent))
        return Task(
            run_id=run_id, agent=self.name, tool_names=plain, agent_tool_names=agents, has_ui=self.has_ui
        )

    def __repr__(self) -> str:
        return f"<agent {self.name} ({self.run.__module__}.{self.run.__qualname__})>"


def _default_name(run: Callable[..., Any]) -> str:
    name: str = run.__name__
    if name not in ("run", "main"):
        return name
    module = sys.modules.get(run.__module__)
    file: str | None = getattr(module, "__file__", None)
    if file:
        return os.path.splitext(os.path.basename(file))[0]
    return run.__module__.rsplit(".", 1)[-1]


def agent(
    *,
    input: type,
    output: type,
    run: Callable[..., Coroutine[Any, Any, Any]] | None = None,
    tools: Iterable[Any] | Mapping[str, Any] = (),
    name: str | None = None,
    description: str | None = None,
    state: type | None = None,
    start: Callable[..., Any] | None = None,
    on_tool_results: Callable[..., Any] | None = None,
) -> Agent:
    """Define an agent.  ``input``/``output`` are attrs classes (dataclasses work too).

    ``run(input, task)`` is a plain ``async def``.  ``tools`` lists ``@tool``
    functions (plain functions are wrapped), other agents (sub-agents) and
    ``ui_tools``.  The input and output classes (and the record classes their
    fields mention) are marked ``@agentrt.serializable``, since the run holds
    them across awaits.

    A self-managed state agent gives ``state=StateClass``, ``start=`` and
    ``on_tool_results=`` instead of ``run`` (see :mod:`agentrt._sdk.stateful`).
    """
    if run is None:
        if start is None or on_tool_results is None or state is None:
            raise TypeError(
                "agent(...) needs run= (an async def taking (input, task)), or state=, start= and "
                "on_tool_results= together for a self-managed state agent"
            )
        from agentrt._sdk.stateful import stateful_run

        module = sys._getframe(1).f_globals.get("__name__", __name__)
        agent_name = name or getattr(start, "__module__", module).rsplit(".", 1)[-1]
        run = stateful_run(agent_name, state, start, on_tool_results, module)
        _mark_serializable(state, set())  # the state class travels in checkpoints
        name = agent_name
    elif state is not None or start is not None or on_tool_results is not None:
        raise TypeError("agent(...): give run= or state=/start=/on_tool_results=, not both")
    for role, cls in (("input", input), ("output", output)):
        if not (isinstance(cls, type) and (attrs.has(cls) or _is_dataclass(cls))):
            raise TypeError(
                f"agent({role}=...) must be an attrs class (or dataclass) so the schema has an object at "
                f"the root, got {cls!r}; wrap other types in a field: "
                f"@attrs.frozen class {role.title()}: value: ..."
            )
        try:
            object_schema(cls)
        except TypeError as exc:
            raise TypeError(f"agent({role}={cls.__qualname__}): {exc}") from None
    if not inspect.iscoroutinefunction(run):
        raise TypeError(f"agent(run=...) must be an 'async def' function taking (input, task), got {run!r}")
    by_name: dict[str, Any] = {}
    items = tools.values() if isinstance(tools, Mapping) else tools
    for item in items:
        if not isinstance(item, (Tool, Agent, UiTool)):
            if callable(item):
                item = tool(item)
            else:
                raise TypeError(
                    f"agent(tools=...): {item!r} is not a tool; use @tool functions, agents or ui_tools"
                )
        n = tool_name(item)
        if n in by_name and by_name[n] is not item:
            raise ValueError(f"agent(tools=...): two tools are named {n!r}; rename one with @tool(name=...)")
        if n.startswith("_"):
            raise ValueError(f"agent(tools=...): tool names cannot start with '_' ({n!r})")
        by_name[n] = item
    seen: set[type] = set()
    _mark_serializable(input, seen)
    _mark_serializable(output, seen)
    doc = description
    if doc is None:
        doc = inspect.getdoc(run) or ""
        doc = doc.split("\n\n")[0].strip()
    return Agent(
        input=input,
        output=output,
        run=run,
        tools=types.MappingProxyType(by_name),
        name=name or _default_name(run),
        description=doc,
    )


def _is_dataclass(cls: type) -> bool:
    import dataclasses

    return dataclasses.is_dataclass(cls)


# --------------------------------------------------------------------------- MODULE:ATTR


def _split_spec(spec: str) -> tuple[str, str]:
    if ":" not in spec:
        raise AgentSpecError(
            f"{spec!r} is not an agent spec: write MODULE:ATTR "
            "(for example examples.issue_summarizer:summarize_issue) "
            "or FILE.py:ATTR"
        )
    where, _, attr = spec.rpartition(":")
    if not where or not attr:
        raise AgentSpecError(f"{spec!r} is not an agent spec: write MODULE:ATTR or FILE.py:ATTR")
    return where, attr


def _module_name_for_file(path: str) -> str:
    """A stable module name for a file outside any package: ``agentrt_file_<stem>``... unless importable.

    If the file lies under a directory on ``sys.path`` (or the current directory)
    its dotted module name is used, so checkpoints name the same module whether
    the agent was started as ``examples/x.py:a`` or ``examples.x:a``.
    """
    path = os.path.realpath(path)
    roots = [os.path.realpath(p or os.getcwd()) for p in sys.path if isinstance(p, str)]
    roots.append(os.path.realpath(os.getcwd()))
    for root in sorted(set(roots), key=len, reverse=True):
        if path.startswith(root + os.sep):
            rel = os.path.relpath(path, root)[: -len(".py")]
            parts = rel.split(os.sep)
            if all(p.isidentifier() for p in parts):
                return ".".join(parts)
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem if stem.isidentifier() else "agentrt_file_" + "".join(c if c.isalnum() else "_" for c in stem)


def _import_module(where: str) -> types.ModuleType:
    if where.endswith(".py") or os.sep in where or "/" in where:
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise AgentSpecError(f"agent file {where!r} does not exist")
        name = _module_name_for_file(path)
        existing = sys.modules.get(name)
        if existing is not None:
            if os.path.realpath(getattr(existing, "__file__", "") or "") == os.path.realpath(path):
                return existing
            raise AgentSpecError(
                f"cannot load {where!r} as module {name!r}: another module of that name is already imported"
            )
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise AgentSpecError(f"cannot load {where!r} as a Python module")
        module = importlib.util.module_from_spec(spec)
        setattr(module, FILE_MARK, path)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name and (where == exc.name or where.startswith(exc.name + ".")):
            error = AgentSpecError(
                f"no module named {where!r} (from the agent spec): it is not on sys.path (the current "
                "directory is); check the spelling, or give the file (path/to/file.py:ATTR)"
            )
            error.missing_module = where
            raise error from None
        raise


def load_agent(spec: str) -> Agent:
    """The :class:`Agent` named by ``MODULE:ATTR`` or ``FILE.py:ATTR``; cwd is importable."""
    obj = load_object(spec, what="agent")
    if not isinstance(obj, Agent):
        raise AgentSpecError(f"{spec!r} is a {type(obj).__name__}, not an agent(...) value")
    return obj


def load_agent_of_run(recorded: str, where: str) -> Agent:
    """The agent a stored run names as ``recorded`` (``MODULE:ATTR``), loaded from the file ``where``.

    ``where`` is ``path/to/file.py`` or ``path/to/file.py:ATTR``, from any working directory.
    The file is imported *as MODULE*, the name the run's checkpoints use to find their code
    (a module inside a package with its package, from the directory above it), so a run
    started as ``agents/refund.py:refund`` in one directory resumes from any other.  A
    ``MODULE:ATTR`` or an ATTR other than the recorded ones is an :class:`AgentSpecError`.
    """
    module_name, attr = _split_spec(recorded)
    path, _, given = where.rpartition(":")
    if not path or not given.replace(".", "_").isidentifier():
        path, given = where, ""  # no ATTR: the recorded one
    if _is_path(module_name) and os.path.isfile(module_name):
        return load_agent(recorded)  # the run recorded its file, and the file is still there
    if not path.endswith(".py"):
        raise AgentSpecError(
            f"{where!r} is not an agent file: give the file that defines {recorded!r} "
            "(path/to/file.py or path/to/file.py:ATTR)"
        )
    if given and given != attr:
        raise AgentSpecError(f"the run's agent is {recorded!r}, not {given!r}; give {path}:{attr}")
    if _is_path(module_name):  # the file the run recorded has moved: load it from where it is now
        return load_agent(f"{path}:{attr}")
    _import_file_as(module_name, os.path.abspath(path))
    return load_agent(recorded)


def _is_path(where: str) -> bool:
    return where.endswith(".py") or os.sep in where or "/" in where


def _import_file_as(module_name: str, path: str) -> types.ModuleType:
    """Import the file ``path`` as the module ``module_name`` (see :func:`load_agent_of_run`)."""
    if not os.path.isfile(path):
        raise AgentSpecError(f"agent file {path!r} does not exist")
    existing = sys.modules.get(module_name)
    if existing is not None:
        if os.path.realpath(getattr(existing, "__file__", "") or "") != os.path.realpath(path):
            raise AgentSpecError(
                f"module {module_name!r} is already imported from {getattr(existing, '__file__', None)!r}, "
                f"not from {path!r}"
            )
        return existing
    parts = module_name.split(".")
    tail = os.path.join(*parts)
    stem = os.path.realpath(path)[: -len(".py")]
    if stem.endswith(os.sep + "__init__"):
        stem = stem[: -len(os.sep + "__init__")]
    if stem.endswith(os.sep + tail):  # the file is where the module's name says: import it by name
        root = stem[: -len(os.sep + tail)] or os.sep
        if root not in sys.path:
            sys.path.insert(0, root)
        module = importlib.import_module(module_name)
        if os.path.realpath(getattr(module, "__file__", "") or "") != os.path.realpath(path):
            raise AgentSpecError(f"module {module_name!r} was found at {module.__file__!r}, not {path!r}")
        return module
    if len(parts) > 1:
        raise AgentSpecError(
            f"the run's agent is in module {module_name!r}, which {path!r} cannot be (its path does not end "
            f"in {tail}.py); give the file of that module"
        )
    spec = importlib.util.spec_from_file_location(module_name, path)  # a file renamed since the run
    if spec is None or spec.loader is None:
        raise AgentSpecError(f"cannot load {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def load_object(spec: str, *, what: str = "object") -> Any:
    """The object named by ``MODULE:ATTR`` or ``FILE.py:ATTR`` (an agent, executors); cwd is importable."""
    where, attr = _split_spec(spec)
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = _import_module(where)
    except AgentSpecError as exc:
        exc.spec = exc.spec or spec
        raise
    except Exception as exc:  # the agent's module itself is broken: say where, not a traceback dump
        raise AgentSpecError(f"importing the {what} module of {spec!r} failed: {_where_failed(exc)}") from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            hint = ""
            if what == "agent":
                agents = sorted(k for k, v in vars(module).items() if isinstance(v, Agent))
                hint = f"; its agents are: {', '.join(agents)}" if agents else "; it defines no agent(...)"
            raise AgentSpecError(f"module {module.__name__!r} has no attribute {attr!r}{hint}") from None
    return obj


def _where_failed(exc: BaseException) -> str:
    import traceback

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError):
        return text
    frames = traceback.extract_tb(exc.__traceback__)
    user = [
        f
        for f in frames
        if "importlib" not in f.filename and f"{os.sep}agentrt{os.sep}_sdk" not in f.filename
    ]
    if user:
        return f"{text} ({user[-1].filename}:{user[-1].lineno})"
    return text


def agent_spec(agent_: Agent) -> str | None:
    """``MODULE:ATTR`` (or ``FILE.py:ATTR``) naming ``agent_`` for another process, or None."""
    module = sys.modules.get(agent_.run.__module__)
    if module is None:
        return None
    for name, value in vars(module).items():
        if value is agent_:
            file = getattr(module, FILE_MARK, None)
            return f"{file}:{name}" if file else f"{module.__name__}:{name}"
    return None

"""Context variables that libraries make on the fly or hide, carried in a form of their own.

Most context variables are module globals (``agentrt._context._names``).  Three kinds that
agent code sets without meaning to are not, and each is carried by what it means:

* **structlog** (``structlog.contextvars.bind_contextvars``) makes one variable per bound key,
  named ``structlog_<key>``, and keeps it in a private dict.  Carried as the key and its
  value; the restore asks structlog for the variable of that key (made by structlog itself
  when this process has not bound the key yet), so log context survives a restart.
* **OpenTelemetry** keeps its whole context (current span, baggage, flags) in one variable
  inside ``opentelemetry.context._RUNTIME_CONTEXT``.  Its keys are made per process
  (``create_key`` appends a random uuid) and a span is a live object of this process's
  tracer provider, so the context itself cannot cross.  What *can* cross is what W3C trace
  propagation carries between processes: the current span's trace id, span id, flags and
  trace state, and the baggage.  The restore makes that span the current one as a remote,
  non-recording parent, so spans the agent starts after the restore join the same trace as
  children of the span that was current at the checkpoint.  Restored only where
  ``opentelemetry.context`` is imported (or allowed): a process without it has no tracer.
* **decimal** keeps the current ``decimal.Context`` in a variable of its C module that no
  module global holds; any ``Decimal`` arithmetic in a run sets it.  Carried as the
  context's settings, flags and traps.

Each adapter is plain data in, plain data out: what it writes goes through the codec like
any local, and what it reads back is checked as strictly as any blob field.
"""

from __future__ import annotations

import contextvars
import importlib
import operator
import sys
from collections.abc import Collection
from typing import Any, Protocol  # Any: a context variable holds any value

from agentrt._codec import find_module, imported_module, module_dict
from agentrt.exceptions import CorruptBlob

__all__ = ["ADAPTERS", "Adapter", "adapter_for", "adapter_named", "private_copies"]


class Adapter(Protocol):
    scheme: str

    def names(self, var: contextvars.ContextVar[Any]) -> tuple[str, ...] | None:
        """How a checkpoint names ``var`` if this adapter carries it, else None."""
        ...

    def worth_carrying(self, value: Any) -> bool:
        """Whether a checkpoint should carry ``value`` at all (False: it says nothing a restore needs)."""
        ...

    def save(self, value: Any) -> Any:
        """What a checkpoint holds for the variable's ``value`` (the codec encodes it)."""
        ...

    def find(
        self, names: tuple[str, ...], allow_modules: Collection[str]
    ) -> contextvars.ContextVar[Any] | None:
        """The variable again, in the restoring process; None when it has no place here (dropped)."""
        ...

    def restore(self, saved: Any) -> Any:
        """The value to set from what :meth:`save` wrote (``CorruptBlob`` if it is not that)."""
        ...


def _malformed(what: str) -> CorruptBlob:
    return CorruptBlob(f"malformed context entry: {what}")


# --- structlog --------------------------------------------------------------------------------

_STRUCTLOG = "structlog.contextvars"
_STRUCTLOG_PREFIX = "structlog_"


class StructlogAdapter:
    """``bind_contextvars(key=value)``: the key and its value (``...`` once unbound)."""

    scheme = "structlog"

    def names(self, var: contextvars.ContextVar[Any]) -> tuple[str, ...] | None:
        if not var.name.startswith(_STRUCTLOG_PREFIX):
            return None
        module = imported_module(_STRUCTLOG)
        held = module_dict(module).get("_CONTEXT_VARS") if module is not None else None
        if not isinstance(held, dict) or held.get(var.name) is not var:
            return None
        return (var.name[len(_STRUCTLOG_PREFIX) :],)

    def worth_carrying(self, value: Any) -> bool:
        return True

    def save(self, value: Any) -> Any:
        return value

    def find(
        self, names: tuple[str, ...], allow_modules: Collection[str]
    ) -> contextvars.ContextVar[Any] | None:
        if len(names) != 1:  # any string is a key: bind_contextvars(**{"request-id": ...}) binds one
            raise _malformed("a structlog entry names one key")
        # structlog is a dependency of agentrt, not a module the blob chose: import it if need be
        from structlog import contextvars as structlog_contextvars

        name = _STRUCTLOG_PREFIX + names[0]
        held = module_dict(structlog_contextvars).get("_CONTEXT_VARS")
        if not isinstance(held, dict):  # pragma: no cover - a structlog without per-key variables
            return None
        if name not in held:  # let structlog make the variable of that key, as it would bind it
            contextvars.Context().run(structlog_contextvars.bind_contextvars, **{names[0]: None})
        var = held.get(name)
        return var if type(var) is contextvars.ContextVar else None

    def restore(self, saved: Any) -> Any:
        return saved


# --- OpenTelemetry ----------------------------------------------------------------------------

_OTEL = "opentelemetry.context"
_MAX_ID_BITS = {"trace_id": 128, "span_id": 64, "trace_flags": 8}


class OpenTelemetryAdapter:
    """The OpenTelemetry context: current span ids and baggage, as trace propagation carries them."""

    scheme = "opentelemetry"

    def _var(self) -> Any:
        module = imported_module(_OTEL)
        runtime = module_dict(module).get("_RUNTIME_CONTEXT") if module is not None else None
        state = getattr(runtime, "__dict__", None)
        return state.get("_current_context") if isinstance(state, dict) else None

    def names(self, var: contextvars.ContextVar[Any]) -> tuple[str, ...] | None:
        return () if self._var() is var else None

    def worth_carrying(self, value: Any) -> bool:
        return True

    def save(self, value: Any) -> Any:
        from opentelemetry import baggage, trace

        saved: dict[str, Any] = {"baggage": dict(baggage.get_all(value))}
        span_context = trace.get_current_span(value).get_span_context()
        if span_context.is_valid:
            saved["trace_id"] = span_context.trace_id
            saved["span_id"] = span_context.span_id
            saved["trace_flags"] = int(span_context.trace_flags)
            saved["trace_state"] = list(span_context.trace_state.items())
        return saved

    def find(
        self, names: tuple[str, ...], allow_modules: Collection[str]
    ) -> contextvars.ContextVar[Any] | None:
        if names:
            raise _malformed("an OpenTelemetry entry has names")
        if imported_module(_OTEL) is None and _OTEL in allow_modules:
            find_module(_OTEL, allow_modules)
        var = self._var()  # None where OpenTelemetry is not imported: no tracer here to join the trace
        return var if type(var) is contextvars.ContextVar else None

    def restore(self, saved: Any) -> Any:
        from opentelemetry import baggage, trace
        from opentelemetry.context import Context
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState

        if type(saved) is not dict or type(saved.get("baggage")) is not dict:
            raise _malformed("OpenTelemetry context")
        context = Context()
        for key, value in saved["baggage"].items():
            if type(key) is not str:
                raise _malformed("an OpenTelemetry baggage key is not a string")
            context = baggage.set_baggage(key, value, context)
        if "trace_id" not in saved:
            return context
        ids = {}
        for field, bits in _MAX_ID_BITS.items():
            value = saved.get(field)
            if type(value) is not int or not 0 <= value < 1 << bits:
                raise _malformed(f"OpenTelemetry {field}")
            ids[field] = value
        items = saved.get("trace_state")
        if type(items) is not list or not all(
            type(item) is tuple and len(item) == 2 and all(type(part) is str for part in item)
            for item in items
        ):
            raise _malformed("OpenTelemetry trace state")
        span_context = SpanContext(
            ids["trace_id"],
            ids["span_id"],
            is_remote=True,
            trace_flags=TraceFlags(ids["trace_flags"]),
            trace_state=TraceState(items),
        )
        return trace.set_span_in_context(NonRecordingSpan(span_context), context)


# --- decimal ----------------------------------------------------------------------------------

_SIGNALS = (
    "Clamped",
    "DivisionByZero",
    "FloatOperation",
    "Inexact",
    "InvalidOperation",
    "Overflow",
    "Rounded",
    "Subnormal",
    "Underflow",
)
_DECIMAL_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")
_decimal_settings = operator.attrgetter(*_DECIMAL_FIELDS)


class DecimalAdapter:
    """``decimal``'s current context: its settings, and which signals are flagged and trapped."""

    scheme = "decimal"
    _found: Any = None

    def _var(self) -> Any:
        decimal = sys.modules.get("decimal")
        if decimal is None:
            return None
        if self._found is None or self._found[0] is not decimal:
            # The variable is internal to the module; getcontext() in an empty context sets it.
            probe = contextvars.Context()
            probe.run(decimal.getcontext)
            self._found = (decimal, next(iter(probe), None))
        return self._found[1]

    def names(self, var: contextvars.ContextVar[Any]) -> tuple[str, ...] | None:
        return () if var.name == "decimal_context" and self._var() is var else None

    def private_copy(self, base: contextvars.Context) -> tuple[contextvars.ContextVar[Any], Any] | None:
        """The run's own copy of the decimal context it starts with: ``getcontext().prec = 5`` changes
        the context *object*, which a copied ``contextvars.Context`` shares with the host and every
        other run (as asyncio tasks share it); a copy keeps the change inside the run."""
        var = self._var()
        current = base.get(var) if var is not None else None
        return (var, current.copy()) if current is not None else None

    def worth_carrying(self, value: Any) -> bool:
        """Only settings that differ from ``decimal.DefaultContext``'s: a run that computes with the
        default settings carries nothing (the flags arithmetic raised go along when it carries).

        Asked at every checkpoint of every run once anything in the process called
        ``decimal.getcontext()`` (psycopg does): compared field by field at C speed, ~2 us, where
        comparing two :meth:`save` dictionaries took ~10-20 us a checkpoint."""
        import decimal

        default = decimal.DefaultContext
        return bool(_decimal_settings(value) != _decimal_settings(default) or value.traps != default.traps)

    def save(self, value: Any) -> Any:
        import decimal

        if not isinstance(value, decimal.Context):  # pragma: no cover - decimal.setcontext refuses others
            raise TypeError(f"decimal's context variable holds a {type(value).__name__}")
        fields: dict[str, Any] = {name: getattr(value, name) for name in _DECIMAL_FIELDS}
        fields["flags"] = [name for name in _SIGNALS if value.flags.get(getattr(decimal, name))]
        fields["traps"] = [name for name in _SIGNALS if value.traps.get(getattr(decimal, name))]
        return fields

    def find(
        self, names: tuple[str, ...], allow_modules: Collection[str]
    ) -> contextvars.ContextVar[Any] | None:
        if names:
            raise _malformed("a decimal entry has names")
        importlib.import_module("decimal")  # the standard library's own: it runs nothing of the blob's
        var = self._var()
        return var if type(var) is contextvars.ContextVar else None

    def restore(self, saved: Any) -> Any:
        import decimal

        if type(saved) is not dict or set(saved) != {*_DECIMAL_FIELDS, "flags", "traps"}:
            raise _malformed("decimal context")
        signals = {}
        for kind in ("flags", "traps"):
            names = saved[kind]
            if type(names) is not list or not all(type(name) is str and name in _SIGNALS for name in names):
                raise _malformed(f"decimal {kind}")
            signals[kind] = [getattr(decimal, name) for name in names]
        settings = {name: saved[name] for name in _DECIMAL_FIELDS}
        if not all(type(value) is int for name, value in settings.items() if name != "rounding") or (
            type(settings["rounding"]) is not str
        ):
            raise _malformed("decimal settings")
        try:
            return decimal.Context(
                prec=settings["prec"],
                rounding=settings["rounding"],
                Emin=settings["Emin"],
                Emax=settings["Emax"],
                capitals=settings["capitals"],
                clamp=settings["clamp"],
                flags=signals["flags"],
                traps=signals["traps"],
            )
        except (TypeError, ValueError, OverflowError) as exc:
            raise _malformed(f"decimal settings ({exc})") from None


_DECIMAL = DecimalAdapter()
ADAPTERS: tuple[Adapter, ...] = (StructlogAdapter(), OpenTelemetryAdapter(), _DECIMAL)
_BY_SCHEME = {adapter.scheme: adapter for adapter in ADAPTERS}


def adapter_for(var: contextvars.ContextVar[Any]) -> tuple[Adapter, tuple[str, ...]] | None:
    """The adapter that carries ``var`` and the names it gives it, or None for an ordinary variable."""
    for adapter in ADAPTERS:
        names = adapter.names(var)
        if names is not None:
            return adapter, names
    return None


def adapter_named(scheme: str) -> Adapter | None:
    return _BY_SCHEME.get(scheme)


def private_copies(base: contextvars.Context) -> list[tuple[contextvars.ContextVar[Any], Any]]:
    """Variables whose value is a mutable object a new run gets a copy of (see ``private_copy``)."""
    if "decimal" not in sys.modules:  # no decimal context can exist yet
        return []
    copy = _DECIMAL.private_copy(base)
    return [copy] if copy is not None else []

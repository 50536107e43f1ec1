"""Journal entries: tool results and errors as small codec blobs, errors as JSON records."""

from __future__ import annotations

import os
import traceback
from typing import Any

from agentrt._sdk.errors import ToolError

__all__ = ["decode_error", "decode_value", "encode_error", "encode_value", "error_record", "type_name"]


def _codec() -> Any:
    from agentrt import _codec

    return _codec


def type_name(exc: BaseException) -> str:
    tp = type(exc)
    return tp.__qualname__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"


def encode_value(value: Any) -> bytes:
    """A tool's result as a blob; raises the codec's error (``CannotCrossAwait``...) if it cannot be held."""
    return _codec().dumps(value)  # type: ignore[no-any-return]


def decode_value(blob: bytes) -> Any:
    return _codec().loads(blob)


def _fallback(exc: BaseException) -> ToolError:
    if isinstance(exc, ToolError):
        return exc
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return ToolError(type_name(exc), str(exc), text)


def encode_error(exc: BaseException) -> bytes:
    """An exception as a blob that always decodes: the original if it can be rebuilt, else a ToolError."""
    codec = _codec()
    fallback = _fallback(exc)
    try:
        inner = codec.dumps(exc)
    except Exception:
        inner = _dumps_without_chain(codec, exc)
    return codec.dumps({"error": fallback, "original": inner})  # type: ignore[no-any-return]


def _dumps_without_chain(codec: Any, exc: BaseException) -> bytes | None:
    """Encode ``exc`` without its ``__cause__`` / ``__context__`` (which may hold what cannot be encoded)."""
    saved = exc.__cause__, exc.__context__, exc.__suppress_context__
    try:
        exc.__cause__ = None
        exc.__context__ = None
        return codec.dumps(exc)  # type: ignore[no-any-return]
    except Exception:
        return None
    finally:
        exc.__cause__, exc.__context__ = saved[0], saved[1]
        exc.__suppress_context__ = saved[2]


def decode_error(blob: bytes) -> BaseException:
    codec = _codec()
    entry = codec.loads(blob)
    if entry.get("original") is not None:
        try:
            exc = codec.loads(entry["original"])
            if isinstance(exc, BaseException):
                return exc
        except Exception:
            pass
    return entry["error"]  # type: ignore[no-any-return]


def error_record(exc: BaseException) -> dict[str, Any]:
    """The JSON error of a failed run: type, message, code, traceback (and AR codes' location)."""
    if isinstance(exc, ToolError):
        record: dict[str, Any] = {"type": exc.type_name, "message": exc.message}
    else:
        record = {"type": type_name(exc), "message": str(exc)}
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        record["code"] = code
    for attr in ("function", "filename", "lineno", "cause"):
        value = getattr(exc, attr, None)
        if isinstance(value, (str, int)):
            record[attr] = value
    fields = getattr(exc, "record_fields", None)
    if callable(fields):  # e.g. a model provider's error.message / type / code
        record.update(fields())
    if getattr(exc, "hide_internal_frames", False):
        tb = _user_traceback(exc)
    else:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, ToolError) and exc.traceback_text:
        tb = exc.traceback_text + tb
    record["traceback"] = tb
    return record


#: The agentrt package directory (with a trailing separator): frames from here are the runtime's.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_traceback(exc: BaseException) -> str:
    """The traceback of an error that reports something outside the agent's code (a provider's
    answer): only the agent's frames, not the runtime's that delivered the error to it."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(f.filename).startswith(_PACKAGE)
    ]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    return "".join(lines + traceback.format_exception_only(type(exc), exc))

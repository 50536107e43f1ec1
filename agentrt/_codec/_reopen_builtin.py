"""The clients agentrt reopens out of the box: httpx, openai and anthropic, sync and async.

Each is saved as its configuration -- base URL, timeouts, retries, non-secret
headers -- and reopened with its own constructor, which reads the API key from
the environment as it always does.  Secrets are never saved: headers that carry
credentials (``Authorization``, cookies, anything named like a key or a token)
are dropped, and so are query parameters (an API key is often one).  Nothing
here imports httpx, openai or anthropic: ``save`` runs only on an instance (its
module is imported) and ``reopen`` imports the module it needs when a signed
blob holds such a client.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any  # Any: the clients are third-party objects agentrt does not import

_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
_SECRET_WORDS = ("key", "token", "secret", "auth", "password", "session", "cookie", "credential")


def is_secret_header(name: str) -> bool:
    """Whether a header may carry a credential (then it is never written into a blob)."""
    lowered = name.lower()
    return lowered in _SECRET_HEADERS or any(word in lowered for word in _SECRET_WORDS)


def public_headers(headers: Mapping[str, Any] | None) -> dict[str, str]:
    """The headers that are safe to store: string values, no credential-like names."""
    if not headers:
        return {}
    return {
        str(name): value
        for name, value in headers.items()
        if isinstance(value, str) and not is_secret_header(str(name))
    }


def timeout_state(timeout: Any) -> Any:
    """A timeout as plain data: a number or None as is, an ``httpx.Timeout`` as its four fields."""
    if timeout is None or type(timeout) in (int, float):
        return timeout
    fields = ("connect", "read", "write", "pool")
    if all(hasattr(timeout, field) for field in fields):
        return {field: getattr(timeout, field) for field in fields}
    return None  # NOT_GIVEN and the like: the constructor's default


def _timeout(module: Any, state: Any) -> Any:
    if isinstance(state, dict):
        return module.Timeout(**state)
    return state


# --- httpx ------------------------------------------------------------------------------------


def save_httpx(client: Any) -> dict[str, Any]:
    return {
        "base_url": str(client.base_url),
        "timeout": timeout_state(client.timeout),
        "headers": public_headers(client.headers),
        "follow_redirects": bool(client.follow_redirects),
    }


def _reopen_httpx(class_name: str) -> Callable[[dict[str, Any]], Any]:
    def reopen(state: dict[str, Any]) -> Any:
        httpx = importlib.import_module("httpx")
        return getattr(httpx, class_name)(
            base_url=state["base_url"],
            timeout=_timeout(httpx, state["timeout"]),
            headers=state["headers"],
            follow_redirects=state["follow_redirects"],
        )

    reopen.__qualname__ = f"reopen_httpx_{class_name}"
    return reopen


# --- the OpenAI and Anthropic SDKs (one client base) -----------------------------------------


def save_sdk(client: Any) -> dict[str, Any]:
    state = {
        "base_url": str(client.base_url),
        "timeout": timeout_state(client.timeout),
        "max_retries": client.max_retries,
        "default_headers": public_headers(getattr(client, "_custom_headers", None)),
    }
    for field in ("organization", "project"):  # OpenAI's; not secrets
        value = getattr(client, field, None)
        if isinstance(value, str):
            state[field] = value
    return state


def _reopen_sdk(module_name: str, class_name: str) -> Callable[[dict[str, Any]], Any]:
    def reopen(state: dict[str, Any]) -> Any:
        module = importlib.import_module(module_name)
        options = {key: value for key, value in state.items() if key in ("organization", "project")}
        return getattr(module, class_name)(
            base_url=state["base_url"],
            timeout=_timeout(module, state["timeout"]),
            max_retries=state["max_retries"],
            default_headers=state["default_headers"] or None,
            **options,
        )

    reopen.__qualname__ = f"reopen_{module_name}_{class_name}"
    return reopen


#: (module:qualname, save, reopen) of every built-in registration
BUILTIN: tuple[tuple[str, Callable[[Any], Any], Callable[[Any], Any]], ...] = (
    ("httpx:Client", save_httpx, _reopen_httpx("Client")),
    ("httpx:AsyncClient", save_httpx, _reopen_httpx("AsyncClient")),
    ("openai:OpenAI", save_sdk, _reopen_sdk("openai", "OpenAI")),
    ("openai:AsyncOpenAI", save_sdk, _reopen_sdk("openai", "AsyncOpenAI")),
    ("anthropic:Anthropic", save_sdk, _reopen_sdk("anthropic", "Anthropic")),
    ("anthropic:AsyncAnthropic", save_sdk, _reopen_sdk("anthropic", "AsyncAnthropic")),
)

"""``agentrt.reopenable``: clients saved as configuration and re-created on restore (issue 24)."""

from __future__ import annotations

import sys
import threading

import httpx
import pytest

import agentrt
from agentrt._codec import dumps, loads
from agentrt._codec._reopen_builtin import is_secret_header, public_headers
from agentrt.exceptions import CannotCrossAwait, CorruptBlob, IncompatibleBlob

KEY = b"k" * 32


class Session:
    """A client-like object: configuration plus a lock that cannot cross an await."""

    def __init__(self, url: str, *, token: str = "") -> None:
        self.url = url
        self.token = token
        self.lock = threading.Lock()


def _save(session: Session) -> dict[str, str]:
    return {"url": session.url}


def _reopen(state: dict[str, str]) -> Session:
    return Session(state["url"], token="from-env")


class Child(Session):
    pass


class Later:
    """Registered only inside its test, after the encoder has met it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


def test_a_registered_class_is_reopened_from_its_saved_state() -> None:
    # refused while it holds a lock; a signed blob then learns to reopen it (registration after
    # the type was met: the encoder asks again)
    with pytest.raises(CannotCrossAwait) as info:
        dumps([Later()], key=KEY)
    assert info.value.code == "AR112"
    agentrt.reopenable(Later, save=lambda later: None, reopen=lambda state: Later())
    assert type(loads(dumps(Later(), key=KEY), keys=[KEY])) is Later
    agentrt.reopenable(Session, save=_save, reopen=_reopen)
    session = Session("http://svc", token="secret-token")
    blob = dumps({"a": session, "b": session}, key=KEY)
    assert b"secret-token" not in blob
    out = loads(blob, keys=[KEY])
    assert out["a"] is out["b"] and out["a"].url == "http://svc" and out["a"].token == "from-env"
    sub = loads(dumps(Child("x"), key=KEY), keys=[KEY])  # a subclass uses its base's pair
    assert type(sub) is Session and sub.url == "x"


def test_unsigned_blobs_refuse_reopenable_clients() -> None:
    agentrt.reopenable(Session, save=_save, reopen=_reopen)
    with pytest.raises(CannotCrossAwait) as info:
        dumps(Session("u"), key=b"")
    assert info.value.code == "AR112"
    assert "signed" in info.value.fix


def test_save_must_return_plain_data() -> None:
    agentrt.reopenable(Session, save=lambda s: {"lock": s.lock}, reopen=_reopen)
    try:
        with pytest.raises(CannotCrossAwait, match="not plain data"):
            dumps(Session("u"), key=KEY)
    finally:
        agentrt.reopenable(Session, save=_save, reopen=_reopen)


def test_reopenable_takes_module_level_classes() -> None:
    class Local:
        pass

    with pytest.raises(TypeError, match="module level"):
        agentrt.reopenable(Local, save=_save, reopen=_reopen)
    with pytest.raises(TypeError, match="class"):
        agentrt.reopenable("Session", save=_save, reopen=_reopen)  # type: ignore[type-var]  # the point


def test_a_blob_naming_an_unregistered_client_is_incompatible() -> None:
    from agentrt._codec import _reopen as registry

    agentrt.reopenable(Session, save=_save, reopen=_reopen)
    blob = dumps(Session("u"), key=KEY)
    saved = registry._REGISTRY.pop("tests.codec.test_reopenable:Session")
    registry._BY_TYPE.clear()
    try:
        with pytest.raises(IncompatibleBlob, match=r"agentrt\.reopenable"):
            loads(blob, keys=[KEY])
    finally:
        registry._REGISTRY[saved.name] = saved
        registry._BY_TYPE.clear()


def test_httpx_client_keeps_configuration_and_drops_secrets() -> None:
    client = httpx.Client(
        base_url="http://127.0.0.1:9/v1",
        timeout=httpx.Timeout(2.0, read=8.0),
        headers={"X-Team": "blue", "Authorization": "Bearer abc", "X-Api-Key": "k", "Cookie": "c=1"},
        follow_redirects=True,
    )
    try:
        blob = dumps([client, client], key=KEY)
        for secret in (b"Bearer abc", b"c=1", b"X-Api-Key"):
            assert secret not in blob
        out = loads(blob, keys=[KEY])
        try:
            assert out[0] is out[1]
            assert str(out[0].base_url) == "http://127.0.0.1:9/v1/"
            assert (out[0].timeout.connect, out[0].timeout.read) == (2.0, 8.0)
            assert out[0].headers["X-Team"] == "blue" and "authorization" not in out[0].headers
            assert out[0].follow_redirects is True
        finally:
            out[0].close()
    finally:
        client.close()


def test_unsigned_blob_naming_reopen_is_refused_at_decode() -> None:
    from agentrt._codec._format import pack, unpack

    agentrt.reopenable(Session, save=_save, reopen=_reopen)
    envelope = unpack(dumps(Session("u"), key=KEY), [KEY])
    forged = pack([], envelope.flags & ~4, envelope.payload, b"", None)
    with pytest.raises(CorruptBlob, match="only in a signed blob"):
        loads(forged)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("Authorization", True),
        ("x-api-key", True),
        ("Cookie", True),
        ("X-Auth-Token", True),
        ("anthropic-version", False),
        ("User-Agent", False),
        ("X-Team", False),
    ],
)
def test_secret_headers(name: str, secret: bool) -> None:
    assert is_secret_header(name) is secret
    assert (name in public_headers({name: "v"})) is not secret


def test_builtin_registrations_import_nothing() -> None:
    import subprocess

    code = (
        "import agentrt, agentrt._codec._reopen, sys; "
        "print(sorted(m for m in ('httpx', 'openai', 'anthropic') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"

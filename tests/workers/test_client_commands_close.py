"""``agentrt submit``, ``reply`` and ``cancel`` close the store they open.

A runtime does not close a store it was handed, and these commands hand it one: left open, a
PostgreSQL store's pool was closed by its finalizer at interpreter exit, which held every
``agentrt reply`` about 20 s.  Called in-process here, so the store objects can be counted.
"""

from __future__ import annotations

import contextlib
import io
import json

from agentrt import cli
from agentrt.stores.sqlite import SqliteStore


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(list(argv))
    return code, out.getvalue()


def test_submit_reply_and_cancel_close_their_store(tmp_path, monkeypatch):
    opened: list[SqliteStore] = []
    closed: list[SqliteStore] = []
    real_init, real_close = SqliteStore.__init__, SqliteStore.close

    def counting_init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        opened.append(self)

    def counting_close(self):
        closed.append(self)
        real_close(self)

    monkeypatch.setattr(SqliteStore, "__init__", counting_init)
    monkeypatch.setattr(SqliteStore, "close", counting_close)
    store = str(tmp_path / "agentrt.db")
    agent = "tests.workers.agents:mixed"
    code, out = _run(
        "run", agent, "--input", '{"i": 1, "ask": true}', "--run-id", "a", "--store", store, "--json"
    )
    assert (code, json.loads(out)["status"]) == (0, "waiting"), out
    code, out = _run("reply", "a", '"yes"', "--store", store, "--json")
    assert code == 0 and json.loads(out)["replied_to"] == "a", out
    assert _run("submit", agent, "--input", '{"i": 2}', "--run-id", "b", "--store", store)[0] == 0
    code, out = _run("cancel", "b", "--store", store, "--json")
    assert code == 0 and json.loads(out)["cancelled"] == ["b"], out
    assert len(opened) == 4  # run, reply, submit, cancel
    assert all(s in closed for s in opened)

"""AR112: open resources live at a suspension, or held by a `with` / `for` across one."""

import asyncio
import contextlib
import socket
import sqlite3
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx
import openai
import requests

from agentrt import suspend


async def live_resources(path: str) -> Any:
    f = open(path)  # noqa: SIM115 - expect: AR112
    s = socket.socket()  # expect: AR112
    lock = threading.Lock()  # expect: AR112
    rlock = threading.RLock()  # expect: AR112
    event = threading.Event()  # expect: AR112
    thread = threading.Thread(target=print)  # expect: AR112
    pool = ThreadPoolExecutor()  # expect: AR112
    db = sqlite3.connect(":memory:")  # expect: AR112
    cursor = db.cursor()  # expect: AR112
    session = requests.Session()  # expect: AR112
    # a client agentrt.reopenable re-creates: only unsigned blobs (--profile portable) refuse it
    client = httpx.Client()  # expect: AR112p
    ai = openai.AsyncOpenAI()  # expect: AR112p
    claude = anthropic.Anthropic()  # expect: AR112p
    proc = subprocess.Popen(["true"])  # expect: AR112
    tmp = tempfile.NamedTemporaryFile()  # noqa: SIM115 - expect: AR112
    loop = asyncio.get_running_loop()  # expect: AR112
    response = requests.get("http://x")  # expect: AR112
    await suspend(1)
    return (
        f,
        s,
        lock,
        rlock,
        event,
        thread,
        pool,
        db,
        cursor,
        session,
        client,
        ai,
        claude,
        proc,
        tmp,
        loop,
        response,
    )


async def held_by_with(path: str) -> None:
    with open(path) as f:  # expect: AR112
        await suspend(f.name)
    with threading.Lock():  # expect: AR112
        await suspend(2)


async def held_by_for(path: str) -> None:
    for line in open(path):  # noqa: SIM115 - expect: AR112
        await suspend(line)


async def closed_in_time(path: str) -> Any:
    with open(path) as f:  # negative: AR112
        data = f.read()
    g = open(path)  # noqa: SIM115 - negative: AR112
    more = g.read()
    g.close()
    del g
    h = open(path)  # noqa: SIM115 - negative: AR112
    h.close()
    h = "closed"
    await suspend(1)
    return data, more, h


@contextlib.contextmanager
def holding_a_lock() -> Any:
    lock = threading.Lock()
    with lock:
        yield 1


@contextlib.contextmanager
def holding_plain_data(x: int) -> Any:
    data = [x]
    yield data
    data.append(0)


async def context_manager_generators() -> Any:
    # the runtime refuses the generator's frame at its lock (AR112); plain data a signed blob carries
    with holding_a_lock():  # expect: AR112
        await suspend(1)
    with holding_plain_data(2) as d:  # negative: AR112
        await suspend(2)
    lock = asyncio.Lock()  # expect: AR112
    await suspend(3)
    return d, lock

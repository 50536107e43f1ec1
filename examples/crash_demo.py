"""``make demo``: kill an agent mid-run, then finish it in another process without redoing work.

1. ``agentrt run examples/issue_summarizer.py:summarize_issue`` starts on a fresh SQLite store:
   two GitHub tool calls, one model call, then a comment posted back -- slowed down
   (``AGENTRT_EXAMPLE_PAUSE``) so we can catch it in flight;
2. once the model's answer is journaled, the process gets SIGKILL -- no cleanup, no
   ``finally``, the way a crash or an OOM kill ends a process;
3. ``agentrt show`` tells what the store knows: an interrupted run, its checkpoints, the model
   usage so far, the call that was in flight;
4. ``agentrt resume`` restores the newest checkpoint in a new process and finishes the run:
   finished tool calls and the model call are not repeated; the call in flight is dispatched
   again (same idempotency key).

The model is chosen by ``--executor``: ``openai`` (default) is the OpenAI-compatible executor
over HTTP, talking to a local stand-in server this script starts
(:class:`agentrt.testing.openai_server.FakeOpenAIServer`, no network); ``offline`` is a
deterministic in-process executor.

    python examples/crash_demo.py [--executor openai|offline] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = "examples/issue_summarizer.py:summarize_issue"
INPUT = '{"repo": "octo/widgets", "issue_number": 42}'
RUN_ID = "demo"


def banner(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m" if sys.stdout.isatty() else f"\n== {text}", flush=True)


def agentrt(*args: str, env: dict[str, str]) -> list[str]:
    return [sys.executable, "-m", "agentrt", *args]


def journaled(store: Path, seq: int) -> bool:
    if not store.exists():
        return False
    try:
        conn = sqlite3.connect(store, timeout=5)
        try:
            return (
                conn.execute("SELECT 1 FROM results WHERE run_id = ? AND seq = ?", (RUN_ID, seq)).fetchone()
                is not None
            )
        finally:
            conn.close()
    except sqlite3.Error:  # the schema may not exist yet
        return False


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary store directory")
    parser.add_argument(
        "--executor",
        choices=("openai", "offline"),
        default=os.environ.get("DEMO_EXECUTOR") or "openai",
        help="openai: the OpenAI-compatible executor against a local stand-in server (default); "
        "offline: a deterministic in-process executor",
    )
    args = parser.parse_args()
    if args.executor == "openai":
        from agentrt.testing.openai_server import FakeOpenAIServer, default_responder, reply

        sys.path.insert(0, str(REPO))
        from examples.executors import summarize

        def summarizer(body: dict) -> object:
            """The stand-in model: an extractive summary of the prompt's text (after its instruction line)."""
            if body.get("response_format") or body.get("tools"):
                return default_responder(body)
            text = str(body["messages"][-1]["content"]).split("\n\n", 1)[-1]
            return reply(summarize(text, 2))

        with FakeOpenAIServer(summarizer) as server:
            print(f"(a stand-in OpenAI-compatible server listens at {server.url})")
            code = demo(args, {"AGENTRT_EXAMPLE_OPENAI_URL": server.url})
            print(f"\nthe stand-in server answered {len(server.requests)} chat completion request(s)")
            return code
    return demo(args, {})


def demo(args: argparse.Namespace, extra_env: dict[str, str]) -> int:
    work = Path(tempfile.mkdtemp(prefix="agentrt-demo-"))
    store = work / "agentrt.db"
    side_effects = work / "side_effects.jsonl"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["AGENTRT_STORE"] = str(store)
    env["AGENTRT_EXAMPLE_SIDE_EFFECTS"] = str(side_effects)
    env["AGENTRT_EXECUTORS"] = f"examples/executors.py:{args.executor}"
    env.update(extra_env)
    try:
        banner(f"1. agentrt run {SPEC} --executors {env['AGENTRT_EXECUTORS']} (store {store})")
        slow = dict(env, AGENTRT_EXAMPLE_PAUSE="60")
        proc = subprocess.Popen(
            agentrt("run", SPEC, "--input", INPUT, "--run-id", RUN_ID, "--log-format", "pretty", env=slow),
            cwd=REPO,
            env=slow,
        )
        deadline = time.monotonic() + 60
        while not journaled(store, 3):
            if proc.poll() is not None or time.monotonic() > deadline:
                print(f"demo: the run ended early (exit {proc.returncode}) or never reached its model call")
                return 1
            time.sleep(0.05)
        time.sleep(0.5)  # the comment (slowed down) is now being posted

        banner(f"2. SIGKILL process {proc.pid} while github_issues_add_comment is in flight")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        print(f"process {proc.pid} ended with {proc.returncode} (killed)")

        banner(f"3. agentrt show {RUN_ID}")
        subprocess.run(agentrt("show", RUN_ID, env=env), cwd=REPO, env=env, check=True)

        banner(f"4. agentrt resume {RUN_ID} (a new process)")
        done = subprocess.run(agentrt("resume", RUN_ID, "--log-format", "pretty", env=env), cwd=REPO, env=env)
        if done.returncode != 0:
            return done.returncode

        banner("5. side effects: which process ran which tool call and model call")
        calls = [json.loads(line) for line in side_effects.read_text().splitlines() if line.strip()]
        pids = {c["pid"] for c in calls}
        for c in calls:
            who = "the killed process" if c["pid"] == proc.pid else "the resuming process"
            print(f"  {c['tool']:<28} key {c['key']:<8} ran in {who} ({c['pid']})")
        before = {c["key"] for c in calls if c["pid"] == proc.pid}
        again = sorted(before & {c["key"] for c in calls if c["pid"] != proc.pid})
        finished_before_kill = before - set(again)
        print(
            f"\n{len(calls)} tool and model calls in {len(pids)} processes. "
            f"Finished before the kill and not run again: {', '.join(sorted(finished_before_kill))}. "
            "In flight at the kill, so dispatched again with the same "
            f"idempotency key: {', '.join(again) or 'none'}."
        )
        return 0
    finally:
        if args.keep:
            print(f"\nstore kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

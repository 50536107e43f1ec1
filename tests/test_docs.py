"""The documentation a newcomer reads first: docs/index.md lists every page and none as "to come",
every relative link in the README and docs/ points at a file of this repository, every Python
block of the README and docs/ runs as printed (tests/docs_runner.py; a few are marked, with the
reason, and run elsewhere), and the README's commands after `make demo` run as printed."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.docs_runner import python_blocks as python_blocks_of
from tests.docs_runner import run_page, unload

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md") if p.name != "index.md")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def test_the_index_lists_every_page_and_none_to_come() -> None:
    index = (DOCS / "index.md").read_text()
    assert "to come" not in index.lower()
    listed = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    assert set(PAGES) <= listed, sorted(set(PAGES) - listed)
    assert listed <= set(PAGES), sorted(listed - set(PAGES))


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{name}" for name in ["index.md", *PAGES])])
def test_relative_links_stay_in_the_repository(page: str) -> None:
    path = REPO / page
    for target in LINK.findall(CODE.sub("", path.read_text())):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        file = (path.parent / target.split("#", 1)[0]).resolve()
        assert file.is_relative_to(REPO), f"{page} links outside the repository: {target}"
        assert file.exists(), f"{page} links to a missing file: {target}"


def test_the_readme_example_runs_as_printed(tmp_path: Path) -> None:
    """The README's first example, run as a script in a fresh interpreter: the pydantic model it
    holds across the awaits comes back from the restored blob with the answer given before it."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Example") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("\n```", start)]
    script = tmp_path / "readme_example.py"
    script.write_text(
        "import json\n" + code + "\nprint(json.dumps([list(payload), done.value.model_dump()]))\n"
    )
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [["ask", "anything else?"], {"customer": "ada", "items": ["tea"]}]


def python_blocks() -> list[tuple[str, str]]:
    """Every Python block of the README and docs/, as ``("FILE:LINE", code)``."""
    pages = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    found = [b for page in pages for b in python_blocks_of(page)]
    return [(f"{b.path.relative_to(REPO)}:{b.line}", b.code) for b in found]


def test_every_python_block_of_the_docs_is_python() -> None:
    """Each block parses (an `await` at its top level, as in a fragment of a coroutine, is allowed):
    a typo in an example is caught here, on every page at once.  Each block is also run, by the
    test PYTHON_RUN_BY names for its page (below)."""
    import ast

    blocks = python_blocks()
    assert len(blocks) > 50
    for where, code in blocks:
        try:
            compile(code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST)
        except SyntaxError as exc:
            raise AssertionError(f"{where}: {exc.msg} at block line {exc.lineno}: {exc.text!r}") from None


def test_the_readme_agent_definition_runs(tmp_path: Path) -> None:
    """The README's "Agents" block defines an agent as printed (its tool's body is `...`)."""
    code = next(code for where, code in python_blocks() if "summarize_issue = agent(" in code)
    script = tmp_path / "summarize.py"
    script.write_text(
        code + "\nprint(summarize_issue.name, sorted(summarize_issue.input_json_schema()['properties']))\n"
    )
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split(None, 1)[1].strip() == "['issue_number', 'repo']", proc.stdout


# --- Every Python block of the README and docs/, run as written (tests/docs_runner.py) -------------


@pytest.fixture
def migrations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The registry of @agentrt.migrate functions, as it is after the test only for the test."""
    from agentrt._upgrade import _registry

    fresh = list(_registry._MIGRATIONS)
    monkeypatch.setattr(_registry, "_MIGRATIONS", fresh)
    return fresh


def test_the_readme_python_blocks_run(migrations: list[Any]) -> None:
    """The example (a Machine checkpointed and restored in this process), the summarizer agent and
    the two migrations of "Deploying new code", which name that agent's ``run``."""
    page = asyncio.run(run_page(REPO / "README.md"))
    try:
        ns = page.ns
        assert ns["payload"] == ("ask", "anything else?")
        assert ns["done"].value == ns["Order"](customer="ada", items=["tea"])
        assert sorted(ns["summarize_issue"].input_json_schema()["properties"]) == ["issue_number", "repo"]
        assert ns["rename_greeting"]({"greeting": "hi"}) == {"salutation": "hi"}
        registered = [(m.qualname, m.site, m.restart) for m in migrations[-2:]]
        assert registered == [("run", 1, False), ("run", 2, True)]
    finally:
        unload(page)
    assert [b.line for b in page.ran] == [b.line for b in python_blocks_of(REPO / "README.md")]


def test_the_embedding_python_blocks_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/embedding.md, given what the page says it assumes: ``rt``, a runtime entered as in its
    first block (on the same store, in a fresh working directory) and, per section, ``run_id``: a
    refund that failed (its order was missing, then appears) for the listing, which retries it; a
    refund waiting on its question for the replying and events sections.  ``main`` (the first block)
    is called as a host would; ``send_to_browser`` collects what it is given.  service.py and
    host.py are run under uvicorn by tests/serve/test_embedding.py."""
    from agentrt import Runtime

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(REPO / "examples"))
    monkeypatch.delitem(sys.modules, "approval_flow", raising=False)
    import approval_flow

    monkeypatch.delitem(approval_flow.ORDERS, "A-1003", raising=False)
    sent: list[Any] = []

    async def until(rt: Runtime, run_id: str, status: str) -> None:
        for _ in range(200):
            if rt.status(run_id).status == status:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{run_id} is {rt.status(run_id).status}, not {status}")

    async def failed_refund(ns: dict[str, Any]) -> None:
        await ns["main"]()  # the lifecycle block's host
        (started,) = ns["rt"].runs()  # left mid-run by main's shutdown, driven on by rt (a worker)
        await until(ns["rt"], started.run_id, "waiting")
        ns["run_id"] = await ns["rt"].start(approval_flow.refund, {"order_id": "A-1003", "reason": "lost"})
        await until(ns["rt"], ns["run_id"], "failed")
        monkeypatch.setitem(
            approval_flow.ORDERS,
            "A-1003",
            {"order_id": "A-1003", "customer": "ada", "amount_eur": 9.0, "item": "filter"},
        )

    async def waiting_refund(ns: dict[str, Any]) -> None:
        record = ns["rt"].status(ns["run_id"])  # the listing's run, retried and completed
        assert (record.status, record.output["refunded"], record.output["decided_by"]) == (
            "completed",
            True,
            "policy",
        )
        ns["run_id"] = await ns["rt"].start(
            approval_flow.refund, {"order_id": "A-1001", "reason": "arrived broken"}
        )
        await until(ns["rt"], ns["run_id"], "waiting")

    async def main() -> None:
        async with Runtime(store="var/agentrt.db") as rt:
            page = await run_page(
                DOCS / "embedding.md",
                {"rt": rt, "send_to_browser": sent.append},
                before={1: failed_refund, 2: waiting_refund},
            )
            try:
                outcome = await rt.wait(page.ns["run_id"])
                assert (outcome.refunded, outcome.note) == (True, "photos attached")
                assert [e.id for e in sent] == [e.id for e in rt.events(page.ns["run_id"])]
                assert [e.id for e in sent] == list(range(1, len(sent) + 1))
                assert sent[-1].kind == "completed" and page.ns["last_seen"] == sent[-1].id
            finally:
                unload(page)
        assert [b.line for b in page.ran] == [11, 45, 62, 83]
        assert {b.mark.split(":")[0] for b in page.marked if b.mark} == {"snippet", "not run"}

    try:
        asyncio.run(main())
    finally:
        sys.modules.pop("approval_flow", None)  # examples/approval_flow.py, imported as the page does
    assert "Refund 249 EUR to mira for the espresso machine?" in capsys.readouterr().out


def test_the_embedding_prompt_is_helpdesks() -> None:
    """The prompt embedding.md shows (not run: it is a line of an agent) is the one
    examples/helpdesk.py asks, schema and all."""
    import ast

    sys.path.insert(0, str(REPO / "examples"))
    try:
        import helpdesk
    finally:
        sys.path.remove(str(REPO / "examples"))
        sys.modules.pop("helpdesk", None)
    (block,) = [b for b in python_blocks_of(DOCS / "embedding.md") if "task.ui.ask" in b.code]
    assert block.mark and block.mark.startswith("not run: ")
    call = ast.parse(block.code).body[0].value.value  # type: ignore[attr-defined]
    prompt = ast.literal_eval(call.args[0])
    assert prompt["schema"] == helpdesk.APPROVAL_SCHEMA
    order = helpdesk.ORDERS["A-1001"]
    question = f"Refund {order['amount_eur']} EUR to {order['customer']} for the {order['item']}? They say: "
    assert prompt["question"].startswith(question), prompt["question"]


def run_doc(page: str, prelude: dict[str, Any] | None = None, **kw: Any) -> Any:
    """Run the page's Python blocks (asserting that each unmarked one ran) and return the run."""
    path = REPO / page
    run = asyncio.run(run_page(path, prelude, **kw))
    unload(run)
    assert [b.line for b in run.ran] == [b.line for b in python_blocks_of(path) if b.mark is None]
    return run


def test_the_deploy_python_block_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "One process": the page's worker runs ``my_agent`` ("one of your agents": here a question
    answered by one tool call) on ``sqlite:///agentrt.db`` in the working directory."""
    from tests.docs_agents import my_agent

    monkeypatch.chdir(tmp_path)
    run = run_doc("docs/deploy.md", {"my_agent": my_agent})
    assert len(run.ran) == 1
    assert capsys.readouterr().out == "Answer(answer=\"looked up '...'\")\n"
    assert (tmp_path / "agentrt.db").exists()


def test_the_hazards_python_block_runs_and_is_not_reported(tmp_path: Path) -> None:
    """The liveness example defines its agent function, and ``agentrt check`` reports nothing in
    it, as the page says; reading ``m`` after the await would be AR103."""
    from agentrt.validate import check_path

    run = run_doc("docs/hazards.md")
    assert len(run.ran) == 1 and callable(run.ns["greet"])
    (block,) = python_blocks_of(DOCS / "hazards.md")
    clean = tmp_path / "clean.py"
    clean.write_text(block.code)
    assert check_path(clean) == []
    live = tmp_path / "live.py"
    live.write_text(block.code + "    return m\n")
    assert {f.code for f in check_path(live)} == {"AR103"}


def test_the_adapters_python_blocks_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/adapters.md's two agents are built and wrapped as written (the OpenAI provider reads
    ``OPENAI_API_KEY`` when the agent is made, as the page's ``openai:`` model needs; no request is
    sent).  The adapters' behaviour is tests/adapters'."""
    pytest.importorskip("pydantic_ai", reason="agentrt[pydantic-ai] is not installed")
    pytest.importorskip("agents", reason="agentrt[openai-agents] is not installed")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used")
    run = run_doc("docs/adapters.md")
    assert run.ns["balance"] is not None and run.ns["refund"](12.5) == "refunded 12.50"
    assert run.ns["durable_support"] is not None and run.ns["durable_triage"] is not None


def test_the_upgrade_python_blocks_run(migrations: list[Any]) -> None:
    """The two migrations register for ``run`` ("an agent whose run now calls salutation...": the
    one in tests/docs_agents.py) and map the locals as the page says."""
    from tests import docs_agents

    run = run_doc("docs/upgrade.md", {"run": docs_agents.run})
    assert len(run.ran) == 2
    registered = [(m.module, m.qualname, m.site, m.restart) for m in migrations[-2:]]
    assert registered == [("tests.docs_agents", "run", 1, False), ("tests.docs_agents", "run", 2, True)]
    for name in ("rename_greeting", "drop_the_question"):
        assert run.ns[name]({"greeting": "hi"}) == {"salutation": "hi"}


class _SdkAnswer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.usage = {"prompt_tokens": 3, "completion_tokens": 5}


class _MySdk:
    """llm.md's ``my_sdk``: "your provider's SDK"."""

    def __init__(self) -> None:
        self.asked: list[tuple[str | None, list[dict[str, Any]]]] = []

    async def complete(self, *, model: str | None, messages: list[dict[str, Any]]) -> _SdkAnswer:
        self.asked.append((model, messages))
        return _SdkAnswer(f"answered {messages[-1]['content']!r}")


def test_the_llm_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/llm.md, given what it names: the agent's ``Input`` / ``Output``, ``my_sdk`` and
    ``store``, and for ``llm_agent`` the classes and tools of examples/issue_researcher.py.  Then
    what the blocks made is used: the asking ``run`` is awaited inside a real run answered by a
    script (a text, a ``Summary``, a stream, an ``Approve``), the host's runtime answers a model
    call through ``my_sdk``, and the researcher runs to its report on the offline executors."""
    from agentrt import Runtime
    from agentrt.llm import ScriptedExecutors
    from agentrt.llm.openai_compat import OpenAICompatExecutors
    from examples import issue_researcher
    from examples.executors import offline
    from tests import docs_agents

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sdk = _MySdk()

    async def researcher_names(ns: dict[str, Any]) -> None:
        for name in ("Input", "Report", "github_issues_get", "github_issues_list_comments"):
            ns[name] = getattr(issue_researcher, name)

    async def main() -> None:
        page = await run_page(
            DOCS / "llm.md",
            {
                "Input": docs_agents.Input,
                "Output": docs_agents.Output,
                "my_sdk": sdk,
                "store": str(tmp_path / "llm.db"),
            },
            before={4: researcher_names},
        )
        ns = page.ns
        try:
            assert [b.line for b in page.ran] == [b.line for b in python_blocks_of(DOCS / "llm.md")]
            assert isinstance(ns["script"], ScriptedExecutors) and ns["script"].calls == []
            assert isinstance(ns["executors"], OpenAICompatExecutors)

            # The asking run, awaited inside a real run.
            script = ScriptedExecutors(
                {
                    "run": [
                        "Short.",
                        {"title": "T", "points": ["a"]},
                        "streamed",
                        {"type": "Approve", "reason": "ok"},
                    ]
                }
            )
            monkeypatch.setitem(docs_agents.PAGE, "run", ns["run"])
            async with Runtime(store=tmp_path / "asking.db", executors=script) as rt:
                await rt.wait(await rt.start(docs_agents.llm_page_agent, {}))
            assert [c.kind for c in script.calls] == [
                "generate_text",
                "generate_text",
                "stream_text",
                "decide",
            ]
            assert script.calls[1].output_type is ns["Summary"]

            # The host's runtime, its generate_text answered by my_sdk.
            async with ns["rt"] as rt:
                run_id = await rt.start(docs_agents.model_agent, {"question": "why?"})
                assert await rt.wait(run_id) == docs_agents.Answer("answered 'why?'")
                assert rt.status(run_id).usage["total_tokens"] == 8
            assert sdk.asked[0][0] == "quick"

            # The researcher, on the examples' offline executors.
            async with Runtime(store=tmp_path / "research.db", executors=offline) as rt:
                run_id = await rt.start(ns["researcher"], {"repo": "octo/widgets", "issue_number": 42})
                report = await rt.wait(run_id)
            assert isinstance(report, issue_researcher.Report) and report.issue_number == 42
        finally:
            unload(page)

    asyncio.run(main())


#: Which test runs the Python blocks of each page (every unmarked block, in order).
PYTHON_RUN_BY = {
    "README.md": "test_the_readme_python_blocks_run",
    "docs/deploy.md": "test_the_deploy_python_block_runs",
    # service.py and host.py: tests/serve/test_embedding.py, under uvicorn
    "docs/embedding.md": "test_the_embedding_python_blocks_run",
    "docs/hazards.md": "test_the_hazards_python_block_runs_and_is_not_reported",
    "docs/llm.md": "test_the_llm_python_blocks_run",
    "docs/upgrade.md": "test_the_upgrade_python_blocks_run",
    "docs/adapters.md": "test_the_adapters_python_blocks_run",
    # Each block is an excerpt of an example file (test_docs_code_blocks_are_the_tested_examples),
    # every one of which that test module runs, checkpointed and restored at every await.
    "docs/constructs.md": "tests/validate/test_constructs.py",
}


def test_every_python_block_is_run_or_marked() -> None:
    """Every page with a Python block has a test that runs them; the blocks not run by the page's
    runner are few, and each says why on the line before it."""
    pages = {
        str(path.relative_to(REPO)): python_blocks_of(path)
        for path in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    }
    assert {page for page, found in pages.items() if found} == set(PYTHON_RUN_BY)
    assert sum(len(found) for found in pages.values()) > 50
    marked = [(b.path.name, b.mark.split(";")[0]) for found in pages.values() for b in found if b.mark]
    assert marked == [
        ("embedding.md", "snippet: service.py"),  # run under uvicorn by tests/serve/test_embedding.py
        ("embedding.md", "snippet: host.py"),  # the same
        ("embedding.md", "not run: a line of an agent"),  # test_the_embedding_prompt_is_helpdesks
    ]


# --- Shell blocks ---------------------------------------------------------------------------------
#
# The README's "Agents" commands (the next commands after `make demo`) and its llm_agent command run
# below, as written, on a temporary SQLite store.  The other shell blocks need a server, PostgreSQL,
# make targets or minutes; the tests that run their commands:
# - README "Set up" (make demo, make test): tests/runtime/test_examples.py runs crash_demo.py; CI.
# - README "Validator" (agentrt check ...): tests/validate/test_cli.py.
# - README "Workers" (worker, submit, reply, cancel, retry, runs --json, workers):
#   tests/workers/test_cli_verbs.py, tests/cli/test_never_misleads.py, and on PostgreSQL
#   tests/workers/test_fleet_demo.py (make fleet-demo).
# - README "Teams", docs/teams.md: tests/teams/test_team_cli.py.
# - README "Inspecting" (dump, diff, fork): tests/inspect/test_diff_fork.py,
#   tests/cli/test_exit_codes.py.
# - README "Deploying new code", docs/upgrade.md (upgrade, check --against, dump, diff):
#   tests/upgrade/test_corpus.py, tests/upgrade/test_restart.py, tests/cli/test_blocked.py.
# - README benchmarks (make test-all, make bench-quick, benchmarks/*.py): CI's .ci/run.
# - docs/deploy.md (a fleet, PostgreSQL by hand, keygen, workers): tests/workers/test_fleet_demo.py,
#   tests/security/test_keys.py, tests/cli/test_read_only.py.
# - docs/embedding.md (agentrt serve): tests/serve/conftest.py starts it for tests/serve/.

#: Placeholders of the README's commands and what a user types for them.
PLACEHOLDERS = {"path/to/approval_flow.py": str(REPO / "examples" / "approval_flow.py"), "SEQ": "1"}

#: What each command of the README's "Agents" block does (``[--options]`` run without, then with
#: them): exit status and a line of its output.
NEXT_COMMANDS = [
    (0, "completed"),  # run examples/issue_summarizer.py:summarize_issue --executors ...
    (0, "run r1 is waiting for a reply"),  # run examples/approval_flow.py:refund ... --run-id r1
    (0, "run r1 completed"),  # resume r1 --reply '{"approve": true}'
    (0, "run r1 completed"),  # resume r1 --agent path/to/approval_flow.py, from another directory
    (0, "r1 "),  # runs
    (0, "no runs with status waiting"),  # runs --status waiting
    (0, "status    completed"),  # show r1
    (0, '"status": "completed"'),  # show r1 --json
    # retry r1 [--from SEQ]: r1 completed, and a retry of a run that is not failed or blocked is
    # status 2, as the README's table says.
    (2, "only a failed or blocked run can be retried"),
    (2, "only a failed or blocked run can be retried"),
    (0, '"store_id": '),  # show --store S --json (S: the store)
    (0, "moved run r1 from"),  # move r1 --from S1 --to S2 (S1: the store, S2: another, new)
]


def run_agentrt(words: list[str], cwd: Path, store: Path) -> subprocess.CompletedProcess[str]:
    assert words[0] == "agentrt", words
    stores = {"S": str(store), "S1": str(store), "S2": str(store.with_name("moved-to.db"))}
    argv = [sys.executable, "-m", "agentrt", *(stores.get(w, PLACEHOLDERS.get(w, w)) for w in words[1:])]
    env = dict(
        os.environ,
        AGENTRT_STORE=str(store),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


def test_the_readme_next_commands_run(tmp_path: Path) -> None:
    """The README's "Agents" shell block, command by command from the repository's root (the one
    with ``--agent path/to/...`` from another directory), then its llm_agent command."""
    from tests.docs_runner import blocks, shell_commands, spelled_out

    sh = [b for b in blocks(REPO / "README.md") if b.language == "sh"]
    (agents,) = [b for b in sh if "approval_flow.py:refund" in b.code]
    (researcher,) = [b for b in sh if "issue_researcher.py:issue_researcher" in b.code]
    commands = [spelled for words in shell_commands(agents) for spelled in spelled_out(words)]
    commands += shell_commands(researcher)
    expected = [*NEXT_COMMANDS, (0, "completed")]
    assert len(commands) == len(expected), commands
    store = tmp_path / "agentrt.db"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for words, (status, says) in zip(commands, expected, strict=True):
        cwd = elsewhere if any(w.startswith("path/to/") for w in words) else REPO
        proc = run_agentrt(words, cwd, store)
        shown = " ".join(words)
        assert proc.returncode == status, f"{shown}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
        assert says in proc.stdout + proc.stderr, f"{shown}:\n{proc.stdout}{proc.stderr}"

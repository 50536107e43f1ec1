"""The runs page at ``/`` in a real headless Chromium (Debian's package, driven by Playwright):
it lists runs with live status, follows a run's events, shows its frames and answers its question.

Skipped when /usr/bin/chromium is missing, except in CI (``CI=true``), where it must run.
Screenshots go to the test's directory, and also to ``$AGENTRT_SCREENSHOTS`` when that is set
(``docs/serve-page.png`` in the README was taken that way).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest

from tests.serve.conftest import CHROMIUM, CHROMIUM_ARGS, Server, wait_status

pytestmark = pytest.mark.system


if not os.path.exists(CHROMIUM) and os.environ.get("CI") != "true":
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install -y chromium; or set AGENTRT_CHROMIUM); "
        "the browser tests run in CI",
        allow_module_level=True,
    )


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[object]:
    with playwright_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            user_data_dir=str(tmp_path / "chromium-profile"),  # fresh profile per test
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 900},
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def screenshot(page: object, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    assert path.stat().st_size > 10_000
    target = os.environ.get("AGENTRT_SCREENSHOTS")
    if target:
        shutil.copy(path, Path(target) / name)
    return path


def test_page_lists_runs_follows_events_shows_frames_and_answers(
    fresh_server: Server, browser_page: object, tmp_path: Path
) -> None:
    page = browser_page
    expect = playwright_api.expect
    with fresh_server.client() as c:
        done = c.post("/runs", json={"agent": "steps", "input": {"n": 2}, "run_id": "steps-1"}).json()[
            "run_id"
        ]
        asking = c.post(
            "/runs", json={"agent": "asker", "input": {"question": "Ship release 1.4?"}, "run_id": "ask-1"}
        ).json()["run_id"]
        wait_status(c, done, ("completed",))
        wait_status(c, asking, ("waiting",))

        page.goto(fresh_server.url + "/")  # type: ignore[attr-defined]
        # The server wants a token: the page asks for it and keeps it for the session.
        expect(page.locator("#token-form")).to_be_visible()  # type: ignore[attr-defined]
        page.fill("#token", fresh_server.token)  # type: ignore[attr-defined]
        page.click("#token-form button")  # type: ignore[attr-defined]
        rows = page.locator("#runs tbody tr")  # type: ignore[attr-defined]
        expect(rows).to_have_count(2)
        expect(page.locator('#runs tr[data-run="steps-1"] .status')).to_have_text("completed")  # type: ignore[attr-defined]
        expect(page.locator('#runs tr[data-run="ask-1"] .status')).to_have_text("waiting")  # type: ignore[attr-defined]

        page.click('#runs tr[data-run="ask-1"]')  # type: ignore[attr-defined]
        expect(page.locator("#run-status")).to_have_text("waiting")  # type: ignore[attr-defined]
        expect(page.locator("#ask-prompt")).to_contain_text("Ship release 1.4?")  # type: ignore[attr-defined]
        expect(page.locator('#events li[data-kind="waiting"]')).to_have_count(1)  # type: ignore[attr-defined]
        # The frame dump: the agent's frame, its source with the suspended line, its locals, the request.
        frame = page.locator("#dump details.frame").filter(has_text="run_asker")  # type: ignore[attr-defined]
        expect(frame).to_have_count(1)
        expect(frame.locator("pre.src .cur")).to_contain_text("task.ui.ask")
        expect(frame.locator("dl.vars dt").filter(has_text="input")).to_have_count(1)
        expect(page.locator("#pending")).to_contain_text("ask")  # type: ignore[attr-defined]
        screenshot(page, tmp_path, "serve-page-reply.png")

        # Answer the question from the page: the run goes on live, to its end.
        page.fill("#ask-value", '{"approve": true}')  # type: ignore[attr-defined]
        page.click("#ask button")  # type: ignore[attr-defined]
        expect(page.locator('#events li[data-kind="end"]')).to_have_count(1, timeout=30_000)  # type: ignore[attr-defined]
        expect(page.locator("#run-status")).to_have_text("completed")  # type: ignore[attr-defined]
        expect(page.locator('#runs tr[data-run="ask-1"] .status')).to_have_text("completed")  # type: ignore[attr-defined]
        final = wait_status(c, asking, ("completed",))
        assert final["output"]["reply"] == {"approve": True}
        # Every event the page showed, once, in order, as the store has them.
        shown = page.locator("#events li").evaluate_all(
            "els => els.map(e => [Number(e.value), e.dataset.kind])"
        )  # type: ignore[attr-defined]
        from tests.serve.conftest import sse_events

        with c.stream("GET", f"/runs/{asking}/events") as response:
            stored = [[int(i), "end" if e == "end" else e] for i, e, _d in sse_events(response) if i]
        assert shown == stored
        screenshot(page, tmp_path, "serve-page-completed.png")


def test_page_follows_a_live_run(fresh_server: Server, browser_page: object, tmp_path: Path) -> None:
    page = browser_page
    expect = playwright_api.expect
    page.goto(fresh_server.url + "/#live-1")  # type: ignore[attr-defined]
    page.fill("#token", fresh_server.token)  # type: ignore[attr-defined]
    page.click("#token-form button")  # type: ignore[attr-defined]
    with fresh_server.client() as c:
        c.post("/runs", json={"agent": "steps", "input": {"n": 6, "delay": 0.8}, "run_id": "live-1"})
        page.click('#runs tr[data-run="live-1"]')  # type: ignore[attr-defined]
        expect(page.locator("#run-status")).to_have_text("running")  # type: ignore[attr-defined]
        expect(page.locator('#events li[data-kind="tool_finished"]')).to_have_count(6, timeout=30_000)  # type: ignore[attr-defined]
        expect(page.locator('#events li[data-kind="end"]')).to_have_count(1, timeout=30_000)  # type: ignore[attr-defined]
        expect(page.locator('#runs tr[data-run="live-1"] .status')).to_have_text("completed")  # type: ignore[attr-defined]
        ids = page.locator("#events li").evaluate_all("els => els.map(e => Number(e.value))")  # type: ignore[attr-defined]
        assert ids == list(range(1, len(ids) + 1))


def test_page_cancels_a_waiting_run(fresh_server: Server, browser_page: object, tmp_path: Path) -> None:
    """The cancel button shows for an unfinished run, calls POST /runs/{id}/cancel, and the run ends
    cancelled, live on the page; a finished run has no button."""
    page = browser_page
    expect = playwright_api.expect
    with fresh_server.client() as c:
        asking = c.post(
            "/runs", json={"agent": "asker", "input": {"question": "Deploy on Friday?"}, "run_id": "ask-2"}
        ).json()["run_id"]
        wait_status(c, asking, ("waiting",))
        page.goto(fresh_server.url + "/")  # type: ignore[attr-defined]
        page.fill("#token", fresh_server.token)  # type: ignore[attr-defined]
        page.click("#token-form button")  # type: ignore[attr-defined]
        page.click('#runs tr[data-run="ask-2"]')  # type: ignore[attr-defined]
        expect(page.locator("#run-status")).to_have_text("waiting")  # type: ignore[attr-defined]
        cancel = page.locator("#cancel")  # type: ignore[attr-defined]
        expect(cancel).to_be_visible()
        screenshot(page, tmp_path, "serve-page-cancel.png")

        cancel.click()
        expect(page.locator('#events li[data-kind="end"]')).to_have_count(1, timeout=30_000)  # type: ignore[attr-defined]
        expect(page.locator("#run-status")).to_have_text("cancelled")  # type: ignore[attr-defined]
        expect(page.locator('#runs tr[data-run="ask-2"] .status')).to_have_text("cancelled")  # type: ignore[attr-defined]
        expect(page.locator("#cancel-result")).to_contain_text("cancel requested")  # type: ignore[attr-defined]
        expect(cancel).to_be_hidden()
        assert c.get(f"/runs/{asking}").json()["status"] == "cancelled"


def test_page_starts_a_run_from_a_form_and_answers_its_question_from_fields(
    fresh_server: Server, browser_page: object, tmp_path: Path
) -> None:
    """At 1280 px: a run started from the form built from the agent's input schema; the list shows
    its age, agent, status and question; the question is text with its schema as fields; the frames
    fit their column and say the run is over once it is; /#RUN_ID opens a run."""
    page = browser_page
    expect = playwright_api.expect
    page.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page.goto(fresh_server.url + "/")  # type: ignore[attr-defined]
    page.fill("#token", fresh_server.token)  # type: ignore[attr-defined]
    page.click("#token-form button")  # type: ignore[attr-defined]
    page.select_option("#start-agent", label="approve")  # type: ignore[attr-defined]
    expect(page.locator("#start-amount_eur")).to_have_value("10")  # type: ignore[attr-defined]  # the schema's default
    page.fill("#start-order_id", "A-7")  # type: ignore[attr-defined]
    page.fill("#start-amount_eur", "12.5")  # type: ignore[attr-defined]
    page.check("#start-express")  # type: ignore[attr-defined]
    page.click("#start-form button")  # type: ignore[attr-defined]

    expect(page.locator("#run-status")).to_have_text("waiting", timeout=30_000)  # type: ignore[attr-defined]
    run_id = page.locator("#run-id").inner_text()  # type: ignore[attr-defined]
    row = page.locator(f'#runs tr[data-run="{run_id}"]')  # type: ignore[attr-defined]
    expect(row.locator("td").nth(1)).to_have_text("approve")
    expect(row.locator("td.waits")).to_have_text("reply: Refund 12.5 EUR for order A-7?")
    expect(row.locator("td.age")).to_have_text(re.compile(r"^\d+[smhd]$"))
    # The question as text, its schema as fields (no JSON box).
    expect(page.locator("#ask-prompt")).to_have_text("Refund 12.5 EUR for order A-7?")  # type: ignore[attr-defined]
    expect(page.locator("#ask-approve")).to_be_visible()  # type: ignore[attr-defined]
    expect(page.locator("#ask-value")).to_be_hidden()  # type: ignore[attr-defined]
    expect(page.locator("#pending")).to_contain_text("pending: ask")  # type: ignore[attr-defined]
    # The frames fit their column at 1280 px: nothing reaches past the run pane or widens the page.
    fit = page.evaluate(  # type: ignore[attr-defined]
        """() => {
            const pane = document.querySelector('#run-pane').getBoundingClientRect();
            const dump = document.querySelector('#dump').getBoundingClientRect();
            return {pane: pane.right, dump: dump.right, page: document.documentElement.scrollWidth,
                    view: window.innerWidth, frames: document.querySelectorAll('#dump details.frame').length};
        }"""
    )
    assert fit["frames"] >= 1 and fit["dump"] <= fit["pane"] and fit["page"] <= fit["view"], fit
    screenshot(page, tmp_path, "serve-page.png")

    page.check("#ask-approve")  # type: ignore[attr-defined]
    page.fill("#ask-note", "photos attached")  # type: ignore[attr-defined]
    page.click("#ask button")  # type: ignore[attr-defined]
    expect(page.locator("#run-status")).to_have_text("completed", timeout=30_000)  # type: ignore[attr-defined]
    # The frames refreshed with the run: its last checkpoint is where it was, not what it waits on.
    expect(page.locator("#pending")).to_contain_text("the run is completed")  # type: ignore[attr-defined]
    expect(page.locator("#pending")).not_to_contain_text("pending:")  # type: ignore[attr-defined]
    expect(row.locator("td.waits")).to_have_text("")
    with fresh_server.client() as c:
        done = c.get(f"/runs/{run_id}").json()
        assert done["input"] == {"order_id": "A-7", "amount_eur": 12.5, "express": True}
        assert done["output"]["reply"] == {"approve": True, "note": "photos attached"}
        other = c.post("/runs", json={"agent": "steps", "input": {"n": 1}, "run_id": "linked-1"}).json()
        wait_status(c, other["run_id"], ("completed",))
    # A deep link opens its run, on load and when the address changes.
    page.goto(fresh_server.url + "/#linked-1")  # type: ignore[attr-defined]
    expect(page.locator("#run-id")).to_have_text("linked-1")  # type: ignore[attr-defined]
    page.evaluate(f"location.hash = '#{run_id}'")  # type: ignore[attr-defined]
    expect(page.locator("#run-id")).to_have_text(run_id)  # type: ignore[attr-defined]

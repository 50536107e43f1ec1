"""A page on another origin, in a real headless Chromium, tries to drive a token-less ``agentrt serve``
(issue 25 item 2): its no-preflight ``fetch`` (``text/plain``) and its ``<form>`` POST reach the
server and are refused (403: not the server's own Origin; their ``text/plain`` would be 415 next),
its JSON ``fetch`` is stopped by the browser's preflight (no CORS), and afterwards no run was
started and the pending question is still unanswered.

The attacker page is served by a second HTTP server on another port (and another host name,
``localhost`` against the API's ``127.0.0.1``).  Chromium is Debian's, driven by Playwright as
tests/serve/test_page.py does; skipped when it is missing, except in CI.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import playwright.sync_api as playwright_api
import pytest

from tests.security.serve_server import AttackServer
from tests.security.test_serve_attacks import wait_for
from tests.serve.conftest import CHROMIUM, CHROMIUM_ARGS, free_port

pytestmark = pytest.mark.system


if not os.path.exists(CHROMIUM) and os.environ.get("CI") != "true":
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)", allow_module_level=True)

PAGE = """<!doctype html>
<title>cute cats</title>
<form id="f" method="POST" action="TARGET/runs/RUN/reply" enctype="text/plain" target="sink">
  <input name='{"value": "forged by form", "x": "' value='"}'>
</form>
<iframe name="sink"></iframe>
<script>
async function attack() {
  const results = {};
  const start = JSON.stringify({agent: "secret", input: {prompt: "from evil"}, run_id: "evil-1"});
  try {
    await fetch("TARGET/runs", {method: "POST", mode: "no-cors",
                headers: {"Content-Type": "text/plain"}, body: start});
    results.start = "sent";
  } catch (e) { results.start = "failed: " + e; }
  try {
    await fetch("TARGET/runs/RUN/reply", {method: "POST", mode: "no-cors",
                headers: {"Content-Type": "text/plain"}, body: JSON.stringify({value: "forged by fetch"})});
    results.reply = "sent";
  } catch (e) { results.reply = "failed: " + e; }
  try {
    const r = await fetch("TARGET/runs", {method: "POST", headers: {"Content-Type": "application/json"},
                          body: JSON.stringify({agent: "secret", run_id: "evil-2"})});
    results.json = "status " + r.status;
  } catch (e) { results.json = "blocked: " + e; }
  window.results = results;
}
attack();
</script>
"""


@pytest.fixture
def attacker_site(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    site = tmp_path / "site"
    site.mkdir()
    port = free_port()
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield site, f"http://localhost:{port}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_page_on_another_origin_cannot_start_runs_or_answer(
    tmp_path: Path, attacker_site: tuple[Path, str]
) -> None:
    site, site_url = attacker_site
    server = AttackServer(tmp_path).serve()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            run_id = c.post("/runs", json={"agent": "secret", "input": {"prompt": "deploy?"}}).json()[
                "run_id"
            ]
            wait_for(c, run_id, "waiting")
            (site / "attack.html").write_text(PAGE.replace("TARGET", server.url).replace("RUN", run_id))
            statuses: list[tuple[str, str, int]] = []
            with playwright_api.sync_playwright() as pw:
                context = pw.chromium.launch_persistent_context(
                    user_data_dir=str(tmp_path / "chromium-profile"),
                    executable_path=CHROMIUM,
                    headless=True,
                    args=CHROMIUM_ARGS,
                )
                try:
                    page = context.pages[0] if context.pages else context.new_page()
                    page.on(
                        "response",
                        lambda r: (
                            statuses.append((r.request.method, r.url, r.status))
                            if r.url.startswith(server.url)
                            else None
                        ),
                    )
                    page.goto(site_url + "/attack.html")
                    page.wait_for_function("window.results !== undefined", timeout=30_000)
                    results = page.evaluate("window.results")
                    with page.expect_response(
                        lambda r: r.url.endswith("/reply") and r.request.method == "POST"
                    ) as form:
                        page.evaluate("document.getElementById('f').submit()")
                    form_status = form.value.status
                finally:
                    context.close()
            # The simple requests were sent (no-cors fetches resolve opaquely) and refused by the server.
            assert results["start"] == "sent" and results["reply"] == "sent", results
            assert ("POST", f"{server.url}/runs", 403) in statuses, statuses
            assert ("POST", f"{server.url}/runs/{run_id}/reply", 403) in statuses, statuses
            assert form_status == 403  # the Origin is checked first: 403 cross_origin
            # The JSON request needs a preflight, which this server does not grant (CORS stays off).
            assert results["json"].startswith("blocked"), results
            # Nothing happened: only our own run exists, still waiting for its answer.
            assert [r["run_id"] for r in c.get("/runs").json()["runs"]] == [run_id]
            wait_for(c, run_id, "waiting")
            assert c.post(f"/runs/{run_id}/reply", json={"value": "yes"}).status_code == 202
    finally:
        server.stop()

"""``agentrt dump`` and ``agentrt diff`` show what ``agentrt upgrade`` did: the run's upgrade history
(which frames moved, old -> new digest and site, how their locals were mapped), and checkpoint N
before and after its move (``agentrt diff RUN N N``, from the blob the upgrade kept).  Every step
is the ``agentrt`` command, run as a fresh process would run it (tests/cli/inprocess.py)."""

from __future__ import annotations

import json

from tests.cli.helpers import cli
from tests.upgrade.test_corpus import CASES, HEADER, MIGRATION, V1, _digest_of_run, _json, _suspend_v1, _write


def _moved_with_a_migration(tmp_path, name):
    case = CASES["renamed_local"]
    module, store, env, _ = _suspend_v1(tmp_path, name)
    digest = _digest_of_run(tmp_path, module, case, store, env)
    body = '{"salutation": old_locals["greeting"]}'
    _write(module, case.header, case.v2 + MIGRATION.format(digest=digest, site=1, body=body))
    code, applied, err = _json("upgrade", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and applied["runs"][0]["applied"], err
    return module, store, env, digest


def test_dump_shows_the_upgrade_history(tmp_path):
    _, store, env, digest = _moved_with_a_migration(tmp_path, "hist_dump")
    text = cli("dump", "r1", "--store", store, cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    assert "upgrades (1, recorded by agentrt upgrade):" in text.stdout
    assert "checkpoint 1: moved to the new code; before and after: agentrt diff r1 1 1" in text.stdout
    assert f"hist_dump:run  {digest[:8]} -> " in text.stdout
    assert "locals: supplied by the migration salutation; dropped greeting" in text.stdout
    code, dumped, err = _json("dump", "r1", "--store", store, cwd=tmp_path, env=env)
    assert code == 0, err
    (upgrade,) = dumped["upgrades"]
    assert (upgrade["seq"], upgrade["how"], upgrade["kept_blob"]) == (1, "moved", True)
    (frame,) = upgrade["frames"]
    assert (
        frame["old_digest"].startswith(digest)
        and frame["new_digest"]
        and frame["new_digest"] != frame["old_digest"]
    )
    assert frame["old_site"].startswith("await #1") and frame["new_site"].startswith("await #1")
    assert frame["locals"] == {"mapped": [], "supplied": ["salutation"], "dropped": ["greeting"]}


def test_diff_n_n_compares_a_checkpoint_before_and_after_its_upgrade(tmp_path):
    module, store, env, digest = _moved_with_a_migration(tmp_path, "hist_diff")
    text = cli("diff", "r1", "1", "1", "--store", store, cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    assert "checkpoint 1 before its upgrade → after it" in text.stdout
    assert f"frame 0 hist_diff:run: moved to the new code {digest[:8]} → " in text.stdout
    assert "+ salutation = 'hello bob'  (supplied by the migration)" in text.stdout
    assert "- greeting  (dropped: the new code does not keep it)" in text.stdout
    assert "values before: not shown" in text.stdout
    code, diff, err = _json("diff", "r1", "1", "1", "--store", store, cwd=tmp_path, env=env)
    assert code == 0 and diff["upgrade"] is True, err
    frame = diff["frames"][0]
    assert frame["before"]["digest"].startswith(digest) and frame["before"]["locals"] == ["greeting"]
    assert frame["after"]["locals"] == ["salutation"] and frame["after"]["values"] == {
        "salutation": "'hello bob'"
    }
    assert frame["locals"] == {"mapped": [], "supplied": ["salutation"], "added": [], "dropped": ["greeting"]}

    # with the old code back in place the values before are shown too (the kept blob decodes)
    _write(module, HEADER, V1)
    text = cli("diff", "r1", "1", "1", "--store", store, cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    assert "- greeting  (dropped: the new code does not keep it, was 'hello bob')" in text.stdout


def test_diff_n_n_of_a_checkpoint_no_upgrade_replaced_says_so(tmp_path):
    _, store, env, _ = _suspend_v1(tmp_path, "hist_none")
    proc = cli("diff", "r1", "1", "1", "--store", store, cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "checkpoint 1 of run 'r1' was not replaced by an upgrade" in proc.stderr
    assert (
        json.loads(cli("dump", "r1", "--store", store, "--json", cwd=tmp_path, env=env).stdout)["upgrades"]
        == []
    )

"""The documentation a newcomer reads first: docs/index.md lists every page and none as "to come",
and every relative link in the README and docs/ points at a file of this repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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

"""README.md and docs/*.md: every relative link resolves (the file, and a #heading where one is named), and
every docs page is linked from the README, so a page moved or renamed leaves no dead link and no orphan."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def links(page: Path) -> list[str]:
    """The targets of the Markdown links of a page, code blocks left out (a shell line is not a link)."""
    return LINK.findall(FENCE.sub("", page.read_text()))


def anchors(page: Path) -> Iterator[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, -N on repeats."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        yield slug if seen[slug] == 0 else f"{slug}-{seen[slug]}"


def test_every_relative_link_resolves():
    broken = []
    for page in PAGES:
        for target in links(page):
            if re.match(r"[a-z]+:", target):  # https:, mailto:: not checked (no network in the unit layer)
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in set(anchors(file)):
                broken.append(f"{page.relative_to(REPO)}: {target} (no heading with that anchor)")
    assert not broken, "\n".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    readme = links(REPO / "README.md")
    linked = {(REPO / t.partition("#")[0]).resolve() for t in readme if t.startswith("docs/")}
    orphans = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert not orphans, f"docs pages the README does not link: {orphans}"

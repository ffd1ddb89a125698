"""mkdocs hook: a link from a page to a file of the repository outside docs/ (CHANGELOG.md,
bench/evalset/README.md) is checked to exist, then shown as its repository path in code, since the
site holds only docs/. A link to a file that exists nowhere is left alone, so `mkdocs build --strict`
fails on it as on any broken link."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

LINK = re.compile(r"\[([^\]\n]+)\]\(((?:\.\./)+[^)#\s]+)(#[^)\s]*)?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def on_page_markdown(markdown, page, config, files):
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    here = posixpath.dirname(page.file.src_uri)

    def outside(match):
        target = (docs / here / match.group(2)).resolve()
        if target.is_relative_to(docs) or not target.is_relative_to(root) or not target.exists():
            return match.group(0)
        return f"{match.group(1)} (`{target.relative_to(root).as_posix()}` in the repository)"

    parts, last = [], 0
    for fence in FENCE.finditer(markdown):  # leave code blocks as they are
        parts.append(LINK.sub(outside, markdown[last:fence.start()]))
        parts.append(fence.group(0))
        last = fence.end()
    parts.append(LINK.sub(outside, markdown[last:]))
    return "".join(parts)

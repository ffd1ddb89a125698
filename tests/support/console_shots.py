"""`python -m tests.support.console_shots [DIR]`: screenshots of the console's main views (docs/console-*.png).

Builds the demo store of console_world.py, starts `kyb serve`, and drives the system Chromium
with Playwright (no browser download). Light and dark scheme for the search view.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.support.console_world import build
from tests.support.serve_proc import Served

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main(argv: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    out = Path(argv[0] if argv else "docs")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("KYB_")}
        env.update({"XDG_CONFIG_HOME": str(root / "c"), "XDG_DATA_HOME": str(root / "d"),
                    "XDG_CACHE_HOME": str(root / "x"), "GIT_AUTHOR_NAME": "Dana Reviewer",
                    "GIT_AUTHOR_EMAIL": "dana@example.org"})
        keys = build(root / "store", env)
        server = Served.start(root / "store", env=env)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
                for scheme in ("light", "dark"):
                    page = browser.new_page(viewport={"width": 1360, "height": 860}, color_scheme=scheme)
                    page.goto(server.base + "/")
                    page.wait_for_selector("body[data-ready='1']")
                    page.fill("#q", "checkout")
                    page.wait_for_function("() => document.querySelectorAll('#results li').length === 3")
                    page.click("#results li[data-key='checkout-write-path'] button")
                    page.wait_for_selector("#diff")
                    page.screenshot(path=str(out / f"console-search{'-dark' if scheme == 'dark' else ''}.png"))
                    page.close()
                page = browser.new_page(viewport={"width": 1360, "height": 860})
                page.goto(server.base + "/#tasks")
                page.wait_for_selector("#tasks tbody tr")
                page.click(f"#tasks tr[data-key='{keys['task']}'] button")
                page.wait_for_selector("#actions")
                page.wait_for_selector("#diff, #diff-none")
                page.screenshot(path=str(out / "console-tasks.png"))
                page.goto(server.base + "/#dates")
                page.reload()
                page.wait_for_selector("#date-list h2")
                page.screenshot(path=str(out / "console-dates.png"))
                page.goto(server.base + "/#incidents")
                page.reload()
                page.wait_for_selector("#incidents tbody tr")
                page.click(f"#incidents tr[data-key='{keys['incident']}'] button")
                page.wait_for_selector("#actions")
                page.wait_for_selector("#diff, #diff-none")
                page.screenshot(path=str(out / "console-incidents.png"))
                page.goto(server.base + "/#search")
                page.reload()
                page.wait_for_selector("body[data-ready='1']")
                page.check("input[data-mode='as_of']", force=True)
                page.wait_for_selector("#as-of")
                page.fill("#q", "checkout")
                page.eval_on_selector("#as-of", "el => { el.value = el.min; el.dispatchEvent(new Event('input')); }")
                page.wait_for_selector("#results li .badge.past")
                page.click("#results li[data-key='checkout-write-path'] button")
                page.wait_for_selector("#record")
                page.wait_for_selector("#diff, #diff-none")
                page.screenshot(path=str(out / "console-as-of.png"))
                browser.close()
        finally:
            server.stop()
    print("\n".join(str(p) for p in sorted(out.glob("console-*.png"))))


if __name__ == "__main__":
    main(sys.argv[1:])

"""The console screenshots in docs/screenshots, made from the browser tests' world (a phone at 390 x 844 and
a desktop at 1280 x 900):  python -m tests.support.screenshots   (needs Chromium and Playwright, as the tests)."""

import os
import shutil
import tempfile
from pathlib import Path
from tests.support.console_world import build
from tests.support.serve_proc import Served
from tests.test_serve_http import world
from playwright.sync_api import sync_playwright
from tests.support.inprocess import run_inprocess


def main() -> None:
    out = Path(__file__).resolve().parents[2] / "docs" / "screenshots"; out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp())
    env = world(root); env.pop("KYB_AGENT", None)
    keys = build(root / "store", env)
    run_inprocess(["task", "--key", "task-publish-runbook", "--title", "Publish the checkout runbook", "--blocked-by", keys["task"]], dict(env, KYB_STORE=str(root / "store")))
    server = Served.start(root / "store", env=env)
    ARGS = ["--headless", "--no-sandbox", "--disable-gpu"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=ARGS)
        for name, (w, h), hash_ in [("phone-search", (390, 844), "#search"), ("phone-record", (390, 844), f"#search/{keys['knowledge']}"),
                                     ("phone-tasks", (390, 844), "#tasks"), ("desktop-record", (1280, 900), f"#tasks/{keys['task']}")]:
            page = b.new_page(viewport={"width": w, "height": h})
            page.goto(server.base + "/" + hash_)
            page.wait_for_selector("body[data-ready='1']")
            if "/" in hash_:
                page.wait_for_selector("#record")
            elif "tasks" in hash_:
                page.wait_for_selector("table#tasks")
            page.wait_for_timeout(400)
            page.screenshot(path=str(out / f"console-{name}.png"))
            page.close()
        b.close()
    server.stop()
    print(sorted(os.listdir(out)))


if __name__ == "__main__":
    main()

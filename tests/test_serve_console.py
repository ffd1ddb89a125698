"""The web console in a real headless Chromium (the system package, driven by Playwright).

One server and one browser for the module; each test uses a fresh page. What a person does —
load, search in each time mode, move the as-of slider, open a diff, move a task's date, close it
— and then what Git says happened.
"""

from __future__ import annotations

import os
import shutil
import json
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
if CHROMIUM is None:
    pytest.skip("no system Chromium (apt-get install chromium; CI's .ci/run installs it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (pip install playwright)")

from tests.support.console_world import build  # noqa: E402
from tests.support.serve_proc import Served  # noqa: E402
from tests.test_serve_http import world  # noqa: E402

pytestmark = pytest.mark.slow  # a real browser: the slow lane (the fast lane needs no Chromium)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("console")
    env = world(root)
    env.pop("KYB_AGENT", None)
    keys = build(root / "store", env)
    server = Served.start(root / "store", env=env)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield server, browser, keys, env
        browser.close()
    server.stop()


@pytest.fixture
def page(site):
    server, browser, _keys, _env = site
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server.base + "/")
    page.wait_for_selector("body[data-ready='1']")
    yield page
    page.close()
    assert errors == [], errors  # no script error in any test


def kyb_json(site, *args: str):
    server, _b, _k, env = site
    from tests.support.inprocess import run_inprocess  # in this process: the server is the other one

    code, out, err = run_inprocess(args, dict(env, KYB_STORE=str(server.store_path)))
    assert code == 0, err
    return json.loads(out)


def hits(page) -> list[str]:
    return page.eval_on_selector_all("#results li[data-key]", "els => els.map(e => e.dataset.key)")


def search(page, text: str, count: int) -> list[str]:
    page.fill("#q", text)
    page.wait_for_function(f"() => document.querySelectorAll('#results li[data-key]').length === {count} && "
                           "!document.getElementById('search-meta')?.textContent.includes('searching')")
    return hits(page)


def test_page_loads_with_the_deadline_strip_overdue_first_hard_first(page, site):
    _s, _b, keys, _e = site
    page.wait_for_selector("#deadlines .chip")
    chips = page.eval_on_selector_all("#deadlines .chip", "els => els.map(e => [e.dataset.key, e.className])")
    order = [k for k, _cls in chips]
    assert order[:2] == [keys["overdue_hard"], keys["overdue"]]  # overdue first, the hard one first
    assert all("overdue" in cls for _k, cls in chips[:2]) and "soon" in chips[2][1]
    assert page.is_visible("#deadlines .chip .hard")
    page.click(f"#deadlines .chip[data-key='{keys['overdue_hard']}']")
    page.wait_for_selector(f"#record[data-key='{keys['overdue_hard']}']")
    page.keyboard.press("3")  # by date: earliest first, overdue days marked
    page.wait_for_selector("#date-list h2")
    days = page.eval_on_selector_all("#date-list h2", "els => els.map(e => e.textContent)")
    assert days == sorted(days) and "overdue" in days[0]
    listed = page.eval_on_selector_all("#date-list li[data-key]", "els => els.map(e => e.dataset.key)")
    assert listed[0] == keys["overdue"] and keys["overdue_hard"] in listed and "task-upgrade-envoy" in listed


def test_search_in_each_time_mode_and_move_the_slider(page):
    assert "checkout-write-path" in search(page, "svc-checkout", 1)
    page.check("input[data-mode='history']", force=True)
    page.wait_for_function("() => document.querySelectorAll('#results li[data-key]').length === 3")
    assert page.locator("#results .badge.past").count() == 2  # two past versions and the current one
    page.check("input[data-mode='as_of']", force=True)
    page.wait_for_selector("#as-of")
    page.wait_for_function("() => document.getElementById('search-meta')?.textContent.includes('mode as_of')")
    assert page.locator("#results li[data-key]").count() == 1
    body_now = page.text_content("#results li .mono")
    page.focus("#as-of")
    page.keyboard.press("Home")  # the slider by keyboard: back to the store's first commit, then a second on
    for _ in range(10):
        page.wait_for_function("() => !document.getElementById('search-meta')?.textContent.includes('searching')")
        page.wait_for_timeout(250)  # past the search box's debounce
        if page.locator("#results .badge.past").count():
            break
        page.keyboard.press("ArrowRight")
    assert page.locator("#results .badge.past").count() == 1
    assert page.text_content("#results li .mono") != body_now
    page.click("#results li[data-key='checkout-write-path'] button")
    page.wait_for_selector("#record")
    assert "port 8080" in page.text_content("#body")  # the store as of its first second
    page.check("input[data-mode='changed_between']", force=True)
    page.fill("#from", "2000-01-01")
    page.fill("#to", "2999-12-31")
    page.dispatch_event("#to", "change")
    page.wait_for_function("() => document.getElementById('search-meta')?.textContent.includes('changed_between')")
    assert hits(page) == ["checkout-write-path"]
    page.check("input[data-mode='current']", force=True)
    page.wait_for_function("() => !document.querySelector('#as-of')")


def test_open_a_records_diff_between_any_two_versions(page):
    search(page, "svc-checkout", 1)
    page.click("#results li[data-key='checkout-write-path'] button")
    page.wait_for_selector("#diff")
    default = page.text_content("#diff")
    assert "+title = \"Checkout write path (v2)\"" in default and "-title = \"Checkout write path\"" in default
    rows = page.eval_on_selector_all("#versions tbody tr", "els => els.map(e => e.dataset.sha)")
    assert len(rows) == 3
    page.check(f"#versions tr[data-sha='{rows[2]}'] input[name='diff-from']")
    page.wait_for_function("() => document.getElementById('diff')?.textContent.includes('port 8080')")
    text = page.text_content("#diff")
    assert "-Checkout writes go through svc-checkout on node-3, port 8080." in text
    assert "+Checkout writes go through svc-checkout on node-4, port 9090, via the new gateway." in text
    page.check(f"#versions tr[data-sha='{rows[2]}'] input[name='diff-to']")
    page.wait_for_selector("#diff-none")
    assert "via http (get) read" in page.text_content("#readers")  # its last readers (issue 40, receipts)


def test_move_a_tasks_date_and_close_it_then_git_has_both(page, site):
    server, _b, keys, _e = site
    key = keys["task"]
    page.keyboard.press("2")  # the task queue, by keyboard
    page.wait_for_selector(f"#tasks tr[data-key='{key}']")
    page.click(f"#tasks tr[data-key='{key}'] button")
    page.wait_for_selector("#act-due")
    page.fill("#act-due", "2027-02-03")
    page.click("#act-due-go")
    page.wait_for_function(f"() => document.querySelector('#record[data-key=\"{key}\"]') && "
                           "document.getElementById('record')?.textContent.includes('2027-02-03')")
    assert "written by" in page.text_content("#record")
    page.click("#act-close-go")  # an empty resolution is refused in the page (required, as in the CLI)
    assert page.eval_on_selector("#act-resolution", "el => el.validity.valueMissing") is True
    page.fill("#act-resolution", "runbook written and linked")
    page.click("#act-close-go")
    page.wait_for_function("() => document.getElementById('record') && "
                           "document.getElementById('record')?.textContent.includes('archived')")
    versions = kyb_json(site, "history", key)["versions"]
    assert [v["change"] for v in versions[:3]] == ["deleted", "modified", "modified"]
    assert all(v["transport"] == "http" and v["agent"] == "human" for v in versions[:3])
    assert versions[1]["message"] == f"kyb: close {key}"
    moved = kyb_json(site, "get", key, "--at", versions[2]["sha"])
    assert moved["due"] == "2027-02-03" and moved["body"] == "From the incident notes."  # nothing else lost
    final = kyb_json(site, "get", key)
    assert (final["state"], final["status"], final["resolution"]) == ("archived", "done", "runbook written and linked")


def test_open_a_task_resolve_an_incident_and_errors_show_as_sent(page, site):
    _s, _b, keys, _e = site
    page.click("#tabs button[data-view='tasks']")
    page.click("#new-task summary")
    page.fill("#new-title", "Check the backups")
    assert page.input_value("#new-key") == "task-check-the-backups"
    page.fill("#new-due", "2027-01-15")
    page.click("#new-go")
    page.wait_for_selector("#record[data-key='task-check-the-backups']")
    assert kyb_json(site, "get", "task-check-the-backups")["due"] == "2027-01-15"
    page.fill("#new-title", "Bad key")
    page.fill("#new-key", "Not A Key")
    page.click("#new-go")
    page.wait_for_selector("#error-text")
    assert "422" in page.text_content("#error-text") and "key" in page.text_content("#error-text")
    page.click("#tabs button[data-view='incidents']")
    page.click(f"#incidents tr[data-key='{keys['incident']}'] button")
    page.fill("#act-inc-resolution", "rolled back the gateway")
    page.click("#act-resolve-go")
    page.wait_for_function("() => document.getElementById('record')?.textContent.includes('archived')")
    assert kyb_json(site, "get", keys["incident"])["resolution"] == "rolled back the gateway"


def test_with_a_token_the_console_takes_it_from_the_url_fragment(site, tmp_path):
    """`kyb serve --open` hands the token over in the fragment (never sent to a server); without it
    the page shows the 401 as the server said it, with a field for the token."""
    from kyb_cli.api import init_store

    _server, browser, _keys, env = site
    init_store(tmp_path / "store")
    guarded = Served.start(tmp_path / "store", env=dict(env, KYB_SERVE_TOKEN="fragment-token"))
    try:
        page = browser.new_page()
        page.goto(guarded.base + "/")
        page.wait_for_selector("#error-text")
        assert "401" in page.text_content("#error-text") and "bearer token" in page.text_content("#error-text")
        assert page.is_visible("#errors input[type='password']")
        page.goto(guarded.base + "/#token=fragment-token")
        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_function("() => document.getElementById('server-state')?.textContent.includes('knowledge')")
        assert "token" not in page.url  # the fragment is dropped once read
        page.close()
    finally:
        guarded.stop()


# -- issue 25 item 3: the console shows what the CLI knows -----------------------------------------

def test_console_nonsense_question_says_nothing_strong_matched_and_dims_weak_hits(page):
    data = page.evaluate("() => fetch('/search?q=' + encodeURIComponent('quantum pastry recipes for zebras checkout'))"
                         ".then(r => r.json())")
    assert data["confident"] is False and data["hits"]
    page.fill("#q", "quantum pastry recipes for zebras checkout")
    page.wait_for_selector("#not-confident")
    assert "Nothing strong matched" in page.text_content("#not-confident")
    weak = [h["key"] for h in data["hits"] if h["strength"] == "weak"]
    for key in weak:
        assert "weak" in page.get_attribute(f"#results li[data-key='{key}']", "class")


def test_console_hit_shows_strength_found_by_and_a_snippet_with_the_words_marked(page):
    search(page, "svc-checkout", 1)
    row = "#results li[data-key='checkout-write-path']"
    assert page.locator(f"{row} .badge.strength").count() == 1
    assert page.text_content(f"{row} .found-by")
    assert "svc-checkout" in page.text_content(f"{row} .snippet mark").lower() or page.locator(f"{row} .snippet mark").count()


def test_console_renders_a_body_as_markdown_without_raw_html(page, site):
    kyb_json(site, "add", "--key", "md-body", "--title", "Markdown body", "--body",
             "# Steps\n\n- **first** `make`\n- second <img src=x onerror=alert(1)>\n\n[docs](javascript:alert(1))")
    page.goto(page.url.split("#")[0] + "#search/md-body")
    page.reload()
    page.wait_for_selector("#record[data-key='md-body'] #body")
    assert page.locator("#body ul li").count() == 2 and page.locator("#body strong").count() == 1
    assert page.locator("#body code").count() == 1
    assert page.locator("#body img").count() == 0  # the HTML stays text
    assert "<img" in page.text_content("#body")
    assert page.locator("#body a").count() == 0  # a javascript: link is shown as its label only


def test_console_fits_a_390px_phone_without_the_tab_bar_overflowing(site):
    server, browser, _k, _e = site
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(server.base + "/")
    page.wait_for_selector("body[data-ready='1']")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    tabs = page.evaluate("() => document.getElementById('tabs').getBoundingClientRect().right")
    wide = page.evaluate("() => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)"
                         ".map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 8)")
    page.close()
    assert width <= 390 and tabs <= 390, wide


def test_console_slash_puts_the_cursor_after_the_old_question(page):
    search(page, "svc-checkout", 1)
    page.click("#tabs button[data-view='tasks']")
    page.keyboard.press("/")
    page.wait_for_function("() => document.activeElement?.id === 'q'")
    assert page.evaluate("() => document.getElementById('q').selectionStart") == len("svc-checkout")


def test_console_task_form_clears_after_creating_and_shows_dependencies_and_ready(page, site):
    page.click("#tabs button[data-view='tasks']")
    page.click("#new-task summary")
    page.fill("#new-title", "Prepare the cut over")
    page.click("#new-go")
    page.wait_for_selector("#record[data-key='task-prepare-the-cut-over']")
    assert page.input_value("#new-title") == "" and page.input_value("#new-key") == ""
    kyb_json(site, "task", "--key", "task-cut-over", "--title", "Cut over", "--blocked-by", "task-prepare-the-cut-over")
    page.goto(page.url.split("#")[0] + "#tasks/task-cut-over")
    page.reload()
    page.wait_for_selector("#record[data-key='task-cut-over']")
    assert "task-prepare-the-cut-over" in page.text_content("#record")  # blocked_by among its fields
    page.goto(page.url.split("#")[0] + "#tasks/task-prepare-the-cut-over")
    page.reload()
    page.wait_for_selector("#record[data-key='task-prepare-the-cut-over']")
    assert "task-cut-over" in page.text_content("#record")  # and what it blocks
    page.check("#task-ready")  # the list is fetched again: wait for the ready one without the blocked one
    page.wait_for_function("() => document.querySelector(\"#tasks tr[data-key='task-prepare-the-cut-over']\")"
                           " && !document.querySelector(\"#tasks tr[data-key='task-cut-over']\")")
    assert page.locator("#tasks tr[data-key='task-cut-over']").count() == 0


def test_console_says_when_versions_are_not_embedded_yet(page):
    """Issue 25 item 10 in the console: right after a model import or a bulk import, search by meaning
    misses what is not embedded yet; the answer's `pending_vectors` is shown beside the hit count.
    (The answer is the server's own, with the count set: the test site has no model to lag behind.)"""
    def with_pending(route):
        response = route.fetch()
        data = response.json()
        data["pending_vectors"] = 7
        route.fulfill(response=response, json=data)

    page.route("**/search?*", with_pending)
    search(page, "svc-checkout", 1)
    assert "7 version(s) not yet embedded" in page.text_content("#pending-vectors")


def _sized(site, width: int, height: int, hash_: str = ""):
    server, browser, _k, _e = site
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server.base + "/" + hash_)
    page.wait_for_selector("body[data-ready='1']")
    return page, errors


def _fits(page) -> None:
    """No sideways scroll: nothing is wider than the screen."""
    assert page.evaluate("() => document.documentElement.scrollWidth") <= page.viewport_size["width"]


def test_console_on_a_phone_shows_one_pane_at_a_time_with_a_back_control(site):
    """Issue 42, 390 x 844: the list, or the record opened (the one asked for) with a back control."""
    key = site[2]["knowledge"]
    page, errors = _sized(site, 390, 844)
    assert page.is_visible("#list-pane") and not page.is_visible("#detail-pane")
    page.evaluate(f"() => {{ location.hash = '#search/{key}'; }}")  # typed into the address bar
    page.wait_for_selector(f"#record[data-key='{key}']")
    assert not page.is_visible("#list-pane") and page.is_visible("#back")
    _fits(page)
    page.click("#back")
    page.wait_for_selector("#list-pane", state="visible")
    assert not page.is_visible("#detail-pane") and page.evaluate("() => location.hash") == "#search"
    page.close()
    assert errors == []


def test_console_follows_the_address_bar_both_ways(site):
    key = site[2]["task"]
    page, errors = _sized(site, 1280, 900, "#search")
    page.evaluate("() => { location.hash = '#tasks'; }")
    page.wait_for_selector("#task-list table#tasks")
    assert page.get_attribute("#tabs button[data-view='tasks']", "aria-current") == "page"
    page.evaluate(f"() => {{ location.hash = '#tasks/{key}'; }}")
    page.wait_for_selector(f"#record[data-key='{key}']")
    assert page.is_visible("#list-pane") and page.is_visible("#detail-pane")  # a wide screen shows both
    page.click("#tabs button[data-view='incidents']")
    assert page.evaluate("() => location.hash").startswith("#incidents")  # and the bar follows the view
    page.close()
    assert errors == []


def test_console_tasks_on_a_phone_are_cards_whose_blockers_are_on_screen(site):
    kyb_json(site, "task", "--key", "task-phone-blocked", "--title", "Waits on the runbook",
             "--blocked-by", site[2]["task"])
    page, errors = _sized(site, 390, 844, "#tasks")
    page.wait_for_selector("tr[data-key='task-phone-blocked'] td.blocked-by")
    cell = page.locator("tr[data-key='task-phone-blocked'] td.blocked-by")
    box = cell.bounding_box()
    assert cell.is_visible() and site[2]["task"] in cell.inner_text()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    _fits(page)
    page.close()
    assert errors == []

"""The HTML leaderboard in a real browser (headless Chromium): it renders, sorts, and shows
a hostile agent name as text. Chromium comes from Debian's package (installed by .ci/run)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.core.test_cli_and_render import HOSTILE, _hostile_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("CI"):
    raise RuntimeError("CI must install Debian's chromium (see .ci/run)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def test_leaderboard_page_renders_sorts_and_escapes(tmp_path):
    from playwright.sync_api import sync_playwright

    from papergym.leaderboard.publish import write_results_index
    from papergym.leaderboard.render_html import write_report

    report, _ = _hostile_report(tmp_path)
    out = tmp_path / "results"
    page_path = write_report(report, out / "toy" / "smoke")["html"]
    index_path = write_results_index(out)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        alerts: list[str] = []
        page.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
        page.goto(page_path.as_uri())
        table = page.locator("table.sortable").first
        names = table.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert set(names) == {"greedy", "zero", "oracle"}
        assert page.locator("h1", has_text=HOSTILE).count() == 1  # the title is text
        assert page.locator("img").count() == 0 and not alerts
        assert page.locator("svg").count() >= 1  # the score plot
        iqm_column = table.locator("thead th").nth(3)

        def column_values():
            texts = table.locator("tbody tr td:nth-child(4)").all_inner_texts()
            return [float(t.split(" ")[0]) for t in texts]

        iqm_column.click()
        ascending = column_values()
        assert ascending == sorted(ascending)
        iqm_column.click()
        assert column_values() == sorted(ascending, reverse=True)
        claims_board = page.locator("table.sortable").last
        assert claims_board.locator("td", has_text=f"{HOSTILE} beats zero").count() == 1
        assert claims_board.locator("td.holds, td.inconclusive, td.fails").count() == 1
        page.goto(index_path.as_uri())
        assert page.locator("a", has_text="toy/smoke").count() == 1
        browser.close()

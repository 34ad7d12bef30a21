"""The HTML leaderboard in a real browser (headless Chromium): it renders, sorts, shows
hostile free text (title, claim, error) as text, and carries the elements of a results page
(rank groups, plots with CI bars, performance profile, curves with axis labels and bands,
claims board with roles, failed trials with their error, provenance table). Chromium comes
from Debian's package (installed by .ci/run). A screenshot of the page is saved under
results/test-artifacts/ (ignored by git) for a person to look at."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.core.test_cli_and_render import HOSTILE, _hostile_report
from tests.core.test_render_html import toy_run  # noqa: F401  (a fixture)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("CI"):
    raise RuntimeError("CI must install Debian's chromium (see .ci/run)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "results" / "test-artifacts"
ERROR = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: boom <b>bold</b>"


def _page_report(tmp_path):
    """The hostile toy report, with a learning curve per trial and one failed trial added."""
    from papergym.leaderboard.report import build_report

    report, rows = _hostile_report(tmp_path)
    with_curves = [dataclasses.replace(r, curves={
        "return_vs_episode": [[t, r.metrics["return"] * (1 - 0.5 ** (t + 1)) + 0.1 * r.seed]
                              for t in range(6)],
        "return_by_instance": [[i, r.metrics["return"] + i] for i in range(3)]}) for r in rows]
    failed = dataclasses.replace(rows[0], key="failed-key", seed=99, status="failed", metrics={},
                                 curves={}, error=ERROR)
    from papergym.benchmarks.runner import expand_trials

    trials = expand_trials(report.spec, "smoke")
    return build_report(report.spec, "smoke", trials, [*with_curves, failed])


def test_leaderboard_page_renders_sorts_and_escapes(tmp_path):
    from playwright.sync_api import sync_playwright

    from papergym.leaderboard.publish import write_results_index
    from papergym.leaderboard.render_html import write_report

    report = _page_report(tmp_path)
    out = tmp_path / "results"
    page_path = write_report(report, out / "toy" / "smoke")["html"]
    index_path = write_results_index(out)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        alerts: list[str] = []
        page.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
        page.goto(page_path.as_uri())
        table = page.locator("table.leaderboard").first
        names = table.locator("tbody tr td:nth-child(3)").all_inner_texts()
        assert set(names) == {"greedy", "zero", "oracle"}
        assert page.locator("h1", has_text=HOSTILE).count() == 1  # the title is text
        assert page.locator("img").count() == 0 and not alerts
        # rank groups: the leader opens group 1; the reference has none
        groups = dict(zip(names, table.locator("tbody tr td:nth-child(2)").all_inner_texts()))
        assert groups["greedy"].startswith("1") and "leader" in groups["greedy"]
        assert groups["oracle"] == "–"
        # figures: the dot plot with CI bars, the profile (2 cells), the curve, the strip plot
        captions = page.locator("figure figcaption").all_inner_texts()
        assert any("95% CI" in c and "leader" in c for c in captions)
        assert any("performance profile" in c for c in captions)
        assert any("return_vs_episode" in c for c in captions)
        assert page.locator("figure svg").count() == 4
        svg_text = " ".join(page.locator("figure svg").all_text_contents())
        assert "episode" in svg_text and "return" in svg_text  # axis labels of the curve
        assert "95% t-interval across seeds" in svg_text  # the band across seeds
        assert "one dot per instance" in svg_text  # per-instance values are not a line
        assert "fraction of runs" in svg_text
        # sorting by the IQM column
        iqm_column = table.locator("thead th").nth(4)

        def column_values():
            texts = table.locator("tbody tr td:nth-child(5)").all_inner_texts()
            return [float(t.split(" ")[0].replace(",", "")) for t in texts]

        iqm_column.click()
        ascending = column_values()
        assert ascending == sorted(ascending)
        iqm_column.click()
        assert column_values() == sorted(ascending, reverse=True)
        # the claims board with roles
        claims_board = page.locator("table.claims")
        assert claims_board.locator("td", has_text=f"{HOSTILE} beats zero").count() == 1
        assert claims_board.locator("tbody tr td:nth-child(2)").all_inner_texts() == ["paper"]
        assert claims_board.locator("td.holds, td.inconclusive, td.fails, td.underpowered, "
                                    "td.not-evaluable").count() == 1
        # failed trials with the line that says what went wrong, escaped
        failed = page.locator("table.failed tbody tr")
        assert failed.count() == 1
        assert failed.locator("td.error").inner_text() == "ValueError: boom <b>bold</b>"
        # provenance as a table with dates, not raw JSON with epoch seconds
        provenance = page.locator("table.provenance")
        first = provenance.locator("tr", has_text="first trial").locator("td").inner_text()
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", first)
        assert provenance.locator("tr", has_text="git sha").count() == 1
        assert "numpy" in provenance.locator("tr", has_text="versions").inner_text()
        assert page.locator("pre").count() == 0
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "leaderboard.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        page.goto(index_path.as_uri())
        assert page.locator("a", has_text="toy/smoke").count() == 1
        browser.close()


def test_claims_board_fits_1280_px_and_comes_first(toy_run, tmp_path):  # noqa: F811
    """The claims board at 1,280 px: no horizontal scrolling, the claim text wraps in a wide
    column, and verdict, reason, effect, units and control are on screen for every claim; a
    submission's badge is visible in its leaderboard row. Keeps a screenshot."""
    from playwright.sync_api import sync_playwright

    from papergym.leaderboard.render_html import write_report
    from papergym.leaderboard.report import build_report
    from tests.core.test_render_html import _with_claim_keys

    spec, trials, rows, sha = toy_run
    report = _with_claim_keys(build_report(spec, "smoke", trials, rows))
    long_effect = (1234567.891, (-9876543.21, 12345678.9))  # a wide interval must wrap
    report.verdicts[1].effect, report.verdicts[1].ci = long_effect[0], long_effect[1]
    report.verdicts[1].detail = "a reason " * 40  # cut to one line on the board
    page_path = write_report(report, tmp_path / "toy" / "smoke")["html"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_path.as_uri())
        overflow = page.evaluate("""() => {
            const wrap = document.querySelector('table.claims').parentElement;
            return {page: document.documentElement.scrollWidth, view: window.innerWidth,
                    board: wrap.scrollWidth - wrap.clientWidth};
        }""")
        assert overflow["page"] <= overflow["view"] and overflow["board"] == 0, overflow
        board = page.locator("table.claims")
        box = board.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1280
        # the claims board comes before the first section's table
        first_table = page.locator("table.leaderboard").first.bounding_box()
        assert box["y"] < first_table["y"]
        claim_rows = board.locator("tbody tr")
        assert claim_rows.count() == len(report.verdicts)
        for i in range(claim_rows.count()):
            for cell in claim_rows.nth(i).locator("td").all():
                cell_box = cell.bounding_box()
                assert cell_box["x"] + cell_box["width"] <= 1280
        statement = claim_rows.first.locator("td").nth(2).bounding_box()
        assert statement["width"] >= 300  # the claim reads as a paragraph, not a ribbon
        first = claim_rows.first
        assert first.locator(".reason").is_visible()
        assert "p = 0.0031 toward the claim" in first.inner_text()
        assert first.locator("td").nth(6).inner_text().startswith("holds")  # control verdict
        assert not first.locator("details dl").is_visible()  # details on expand
        first.locator("summary").click()
        assert "intra-cluster correlation" in first.locator("details dl").inner_text()
        twin = page.locator("table.leaderboard tbody tr", has_text="twin").first
        assert twin.locator(".badge.submission").is_visible()
        assert sha[:12] in twin.inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "claims-board-1280.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        browser.close()

"""The HTML report: a page worth sending, checked in a real browser.

Static checks read the page's markup; the browser checks render it in
headless Chromium (``apt-get install -y chromium``; skipped without it) and
read the rendered DOM and a phone-sized screenshot.
"""

import html
import io
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from evalci._base.figures import DECISION_STYLE  # noqa: E402

from conftest import shared_data  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


@pytest.fixture(scope="module")
def swe_report():
    """SWE-bench Lite, 16 systems x 300 inputs (PROVENANCE.md): 15 gaps."""
    swe = shared_data("swebench_lite_k1_clustered.csv")
    return swe.evalci.report(
        "correct",
        cluster="input_id",
        baseline="20241028_agentless-1.5_gpt4o",
        mme=0.02,
        n_resamples=300,
        rng=0,
    )


class _Tags(HTMLParser):
    """Every start tag with its attributes, the text, and the table rows."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.tables, self._in = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        if tag == "tr" and self.tables:
            self.tables[-1].append([])
        if tag in ("td", "th"):
            self._in.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._in:
            self.tables[-1][-1].append(self._in.pop())

    def handle_data(self, data):
        self.text.append(data)
        if self._in:
            self._in[-1] += data


def parse(page: str) -> _Tags:
    p = _Tags()
    p.feed(page)
    return p


def test_page_is_complete_and_loads_nothing_from_elsewhere(swe_report):
    page = swe_report.to_html()
    assert page.startswith("<!DOCTYPE html>")
    tags = parse(page).tags
    names = [t for t, _ in tags]
    assert names[:4] == ["html", "head", "meta", "meta"]
    viewport = [a for t, a in tags if t == "meta" and a.get("name") == "viewport"]
    assert viewport == [
        {"name": "viewport", "content": "width=device-width, initial-scale=1"}
    ]
    assert "style" in names and names.count("svg") == 2
    # no external resource of any kind
    assert not re.search(r"https?:|//[a-z]", page, flags=re.I)
    assert "script" not in names and "link" not in names and "img" not in names
    assert "@import" not in page and "@font-face" not in page
    assert not any(k in ("src", "srcset") for _, a in tags for k in a)
    assert re.findall(r"url\((?!#)", page) == []  # only references inside the page
    # two figures in one page: every id is unique (clip paths are per figure)
    ids = [a["id"] for _, a in tags if "id" in a]
    assert len(ids) > 10 and len(ids) == len(set(ids))
    refs = set(re.findall(r"url\(#([^)]+)\)", page))
    assert refs and refs <= set(ids)


def test_page_holds_the_reports_numbers(swe_report):
    page = parse(swe_report.to_html())
    scores, gaps = page.tables
    p = swe_report._lines()
    assert [tuple(r) for r in scores[1:]] == p["scores"]
    assert len(scores) - 1 == 16 and len(gaps) - 1 == 15
    assert [tuple(r) for r in gaps[1:]] == p["gaps"]
    text = " ".join(page.text)
    for judgment in p["judgments"]:
        assert judgment in text
    # each verdict box is marked with its decision
    boxes = [
        a["class"]
        for t, a in page.tags
        if t == "li" and "verdict" in a.get("class", "")
    ]
    decisions = swe_report.comparison.table.decision
    assert [c.split()[1] for c in boxes] == list(decisions)
    assert set(decisions) == {"better", "worse", "inconclusive"}
    n = decisions.value_counts()
    assert (
        f"15 pairs: {n['better']} better, {n['worse']} worse, "
        f"{n['inconclusive']} inconclusive" in text
    )


def test_fragment_for_notebooks(swe_report):
    frag = swe_report.to_html(full=False)
    assert frag.startswith('<div class="evalci-report"><style>')
    assert "<!DOCTYPE" not in frag and "<html" not in frag and "<body" not in frag
    assert swe_report._repr_html_() == frag
    # every CSS rule is scoped to the report, so a notebook's page is untouched
    css = re.search(r"<style>(.*?)</style>", frag).group(1)
    rules = re.findall(r"(?:^|})([^{}@]+)\{", css)
    selectors = [s.strip() for r in rules for s in r.split(",")]
    assert selectors and all(s.startswith(".evalci-report") for s in selectors)
    bare = swe_report.to_html(full=False, plots=False)
    assert "<svg" not in bare and "<table>" in bare


def test_without_matplotlib_a_note_replaces_the_plots(swe_report, monkeypatch):
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.setitem(sys.modules, name, None)
    page = swe_report.to_html()
    assert "<svg" not in page
    assert "Plots need matplotlib (pip install 'evalci-stats[plot]')" in page
    assert len(parse(page).tables) == 2


def test_user_strings_never_become_markup():
    rng = np.random.default_rng(3)
    n, k = 40, 3
    evil = '<script>alert(1)</script>"--><b>x</b>'
    df = pd.DataFrame(
        {
            "input_id": np.tile(np.repeat(np.arange(n), k), 2),
            "system": [evil] * (n * k) + ["B"] * (n * k),
            "correct": (rng.random(2 * n * k) < 0.6).astype(int),
        }
    )
    rep = df.evalci.report("correct", "input_id", mme=0.05, n_resamples=200, rng=0)
    for page in (rep.to_html(), rep.to_html(full=False)):
        assert "<script" not in page and "<b>x" not in page and "-->" not in page
        assert html.escape(evil) in page
        tags = parse(page)
        assert {t for t, _ in tags.tags} >= {"svg", "table"}
        # the name is text in the tables, never inside the drawings' markup
        assert evil in tags.tables[0][1][0]


# --- in a real browser ---------------------------------------------------------


def _browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(
        "no Chromium binary found (tried "
        + ", ".join(BROWSERS)
        + "); install it with: apt-get update && apt-get install -y chromium"
    )


def _run(browser, tmp_path, *args):
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'profile'}",  # a private profile per test
        *args,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.fixture(scope="module")
def page_file(swe_report, tmp_path_factory):
    path = tmp_path_factory.mktemp("page") / "report.html"
    path.write_text(swe_report.to_html(), encoding="utf-8")
    return path


def test_chromium_renders_tables_verdicts_and_plots(swe_report, page_file, tmp_path):
    browser = _browser()
    dom = _run(browser, tmp_path, "--dump-dom", page_file.as_uri())
    rendered = parse(dom)
    scores, gaps = rendered.tables
    assert [r[0] for r in scores[1:]] == list(
        swe_report.scores.groups
    )  # one per system
    assert len(gaps) - 1 == len(swe_report.comparison.table)
    text = " ".join(rendered.text)
    for judgment in swe_report._lines()["judgments"]:
        assert judgment in text
    svgs = [a for t, a in rendered.tags if t == "svg"]
    assert len(svgs) == 2 and all(a.get("role") == "img" for a in svgs)
    assert sum(t == "path" for t, _ in rendered.tags) > 100  # drawn, not empty


def test_chromium_screenshot_at_phone_width(swe_report, page_file, tmp_path):
    browser = _browser()
    shot = tmp_path / "phone.png"
    _run(
        browser,
        tmp_path,
        "--window-size=390,844",
        "--hide-scrollbars",
        f"--screenshot={shot}",
        page_file.as_uri(),
    )
    raw = shot.read_bytes()
    assert len(raw) > 20_000
    pixels = mpimg.imread(io.BytesIO(raw))
    assert pixels.shape[:2] == (844, 390)
    rgb = pixels[..., :3]
    assert rgb.std() > 0.05  # text and boxes, not a blank page
    # the first verdict's badge is drawn in its decision's colour
    first = swe_report.comparison.table.decision[0]
    hexa = DECISION_STYLE[first][0]
    colour = np.array([int(hexa[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    badge = np.abs(rgb - colour).max(axis=-1) < 0.03
    assert badge.sum() > 200


def test_page_is_reproducible(swe_report):
    # no dates, and ids from a fixed salt: the same report gives the same bytes
    # (so a page checked into CI diffs cleanly)
    assert swe_report.to_html() == swe_report.to_html()


def test_too_many_pairs_for_a_plot_get_a_note_not_a_wall(monkeypatch, swe_report):
    # 31 systems compared all-pairs give 465 gaps: a 150-inch figure helps no
    # one; the page says why the plot is missing and keeps the table whole
    monkeypatch.setattr(sys.modules["evalci.reporting.html"], "_MAX_PLOT_ROWS", 15)
    page = swe_report.to_html()
    assert page.count("<svg") == 1  # 16 systems > 15: no scores plot ...
    assert "No scores plot: 16 rows are more than 15" in page
    assert "No gaps plot" not in page  # ... 15 gaps still drawn
    assert len(parse(page).tables[0]) == 17

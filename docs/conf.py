"""Sphinx configuration for evalci's documentation."""

import sphinx_autosummary_accessors

project = "evalci"
author = "evalci developers"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_autosummary_accessors",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
numpydoc_show_class_members = False
numpydoc_validation_checks: set = set()
autosummary_generate = True
html_theme = "alabaster"
myst_enable_extensions = ["colon_fence"]
suppress_warnings = ["myst.header"]
templates_path = ["_templates", sphinx_autosummary_accessors.templates_path]
exclude_patterns += ["generated/paper"]  # included into simulations.md


def _paper_table(df) -> str:
    """One reproduced table of seed 000, as a Markdown table."""
    rows = [
        "| strategy | N | k | ours | paper | diff (SE) | width | paper width |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in df.itertuples():
        note = f" ({r.note})" if r.note else ""
        rows.append(
            f"| {r.row} | {r.n_inputs} | {r.n_runs} | {100 * r.coverage:.1f} | "
            f"{100 * r.paper_coverage:.1f} | {r.diff_se:+.1f}{note} | "
            f"{r.mean_width:.4f} | {r.paper_width:.4f} |"
        )
    return "\n".join(rows) + "\n"


#: The environment variable that asks for seed 000's tables at full size.
FULL = "EVALCI_DOCS_FULL"


def _reproduce_tables(app) -> None:
    """Seed 000's tables, computed while the docs build (docs/simulations.md).

    With ``EVALCI_DOCS_FULL=1`` (as ``.ci/run`` builds them) at the paper's
    full size, 2,000 trials x 5,000 resamples: accuracy about 20 s, kappa about
    2 minutes on one core (issue 27). By default a quick build, 500 trials x
    1,000 resamples (a few seconds), so that a writer's build stays short;
    the table's header says which it is.
    """
    import os
    import time
    from pathlib import Path

    from evalci.simulate.coverage import reproduce_paper

    out = Path(app.srcdir) / "generated" / "paper"
    out.mkdir(parents=True, exist_ok=True)
    full = os.environ.get(FULL, "") not in ("", "0")
    trials, n_resamples = (2000, 5000) if full else (500, 1000)
    for metric in ("accuracy", "kappa"):
        start = time.perf_counter()
        df = reproduce_paper(
            metric, trials=trials, n_resamples=n_resamples, rng=0, progress=False
        )
        took = time.perf_counter() - start
        size = (
            "the paper's full size"
            if full
            else f"a quick build; {FULL}=1 builds the paper's full 2,000 x 5,000, "
            "whose standard errors are half as large"
        )
        head = (
            f"*Computed when these docs were built: {trials:,} trials x "
            f"{n_resamples:,} resamples per cell ({size}), rng=0, {took:.0f} s.*\n\n"
        )
        (out / f"{metric}.md").write_text(head + _paper_table(df))


def setup(app):
    app.connect("builder-inited", _reproduce_tables)

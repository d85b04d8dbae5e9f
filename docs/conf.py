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

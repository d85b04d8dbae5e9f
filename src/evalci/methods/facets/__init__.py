"""Facets: the sources of a score's variance beyond inputs and runs (prompt
template, judge, inference engine), crossed or nested, and the design that
measures them most cheaply.

May import: ``evalci._base``, ``evalci.metrics``, ``evalci.engine``.
"""

__all__: list[str] = []

"""The engine: what the user passed -> the cube -> draw units -> patterns or
index draws -> replicates -> intervals, and its Dask backend.

Nothing here knows the statistical methods, the front doors or the readers
above it; see ``docs/contributing.md``.
"""

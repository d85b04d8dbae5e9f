"""The version of this library (one place; ``evalci.__version__`` reads it)."""

__version__ = "0.1.0"

"""Front door for other tools' logs: the public namespace ``evalci.io``.

One reader per framework (:mod:`~evalci.io.readers` gathers them: Inspect,
lm-evaluation-harness, HELM, JSON Lines, Chatbot Arena), answer extraction
(:mod:`~evalci.io.extract`) and the bundled example. The readers are also
``evalci.read_*``. They are imported on first use (PEP 562): ``import
evalci`` needs only the example.
"""

#: name -> the module that holds it
_HOMES = {
    "SAMPLE_KEYS": "evalci.io.readers",
    "read_arena": "evalci.io.readers",
    "read_arena_hard": "evalci.io.readers",
    "read_arena_rank_json": "evalci.io.readers",
    "read_helm": "evalci.io.readers",
    "read_inspect": "evalci.io.readers",
    "read_jsonl": "evalci.io.readers",
    "read_lm_eval": "evalci.io.readers",
    "read_lm_eval_results": "evalci.io.lm_eval_results",
    "from_inspect_frames": "evalci.io.inspect_frames",
    "sample_counts": "evalci.io.readers",
    "choice_answer": "evalci.io.extract",
    "format_rate": "evalci.io.extract",
    "score_choices": "evalci.io.extract",
    "load_example": "evalci.io.example",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    """The names of ``__all__``, imported when first read."""
    if name not in _HOMES:
        raise AttributeError(f"module 'evalci.io' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))

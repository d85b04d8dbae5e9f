"""Kappa's fast path (issue 39): the same bits as before, from cheaper steps.

Three steps changed, none of them the draws, so every result must be bit for
bit what main gave before the change:

* the label metrics code each label column by one ``pd.factorize`` and look
  up its few distinct labels (was: ``get_indexer`` on every row), and their
  one-hot rows are uint8 (was: float64);
* ``Cube._per_cell`` sums many statistic columns in one sparse pass
  (``cube.cell_sums_of``; was: one ``np.bincount`` per column);
* ``_row_codes`` keys a float array of small whole numbers with one product
  (``patterns_find._whole_key``; was: a column at a time).

Each is checked against the old code kept here (or reached by switching the
new step off), and end to end against digests recorded from main
(2be3658) before the change.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

import evalci
from evalci.engine import patterns_find
from evalci.engine.cube import cell_sums_of
from evalci.metrics import labels

# ------------------------------------------------------------ seeded tables


def _table(n, k, seed, labels="ABCD", numeric=False, shuffle=False):
    """Tidy label table: a truth per input, a prediction per run, two systems."""
    rng = np.random.default_rng(seed)
    c = len(labels)
    weights = np.linspace(2, 1, c)
    truth = rng.choice(c, n, p=weights / weights.sum())
    skill = rng.beta(3, 2, n)
    right = rng.random((n, k)) < skill[:, None]
    pred = np.where(right, truth[:, None], rng.integers(0, c, (n, k)))
    lab = np.arange(c) + 1 if numeric else np.array(list(labels), dtype=object)
    df = pd.DataFrame(
        {
            "input_id": np.repeat([f"q{i:05d}" for i in range(n)], k),
            "pred": lab[pred.ravel()],
            "label": lab[np.repeat(truth, k)],
            "sys": np.tile(["a", "b"], n * k // 2 + 1)[: n * k],
        }
    )
    if shuffle:
        df = df.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return df


# name: (table, call, main's digest: sha256[:16] of the replicates, estimate,
# low, high as float.hex, kernel)
RECORDED = {
    "kappa_index_bca": (
        dict(n=300, k=5, seed=1),
        dict(metric=("kappa", {}), method="bca"),
        ("d9aa04f7af7ffa08", "0x1.2af39fb06ff32p-1", "0x1.17abe20d58bddp-1",
         "0x1.3d555e0af9b1fp-1", "index"),
    ),
    "kappa_patterns_bca": (
        dict(n=6000, k=5, seed=2),
        dict(metric=("kappa", {}), method="bca"),
        ("0c53f96562f8bd13", "0x1.32a4a0b4b935ep-1", "0x1.2e2a573f82c98p-1",
         "0x1.36ac93e8cbcd2p-1", "patterns"),
    ),
    "kappa_patterns_pct_shuffled": (
        dict(n=6000, k=5, seed=3, shuffle=True),
        dict(metric=("kappa", {}), method="percentile"),
        ("435bbf716cdcb69f", "0x1.306f2e1142c91p-1", "0x1.2c06b2d4c729fp-1",
         "0x1.34c7879889646p-1", "patterns"),
    ),
    "kappa_numeric_quadratic": (
        dict(n=500, k=3, seed=4, numeric=True),
        dict(metric=("kappa", {"weights": "quadratic"}), method="bca"),
        ("6562983d5e5166a6", "0x1.2df69b3213fa8p-1", "0x1.14e451d906c6bp-1",
         "0x1.45be117a71af9p-1", "index"),
    ),
    "kappa_hierarchical": (
        dict(n=400, k=5, seed=5),
        dict(metric=("kappa", {}), method="percentile", strategy="hierarchical"),
        ("eb640fb91e0c16d3", "0x1.396dd7ec94c20p-1", "0x1.24f2c671ba2e7p-1",
         "0x1.4bfb07327cadbp-1", "index"),
    ),
    "kappa_by_sys": (
        dict(n=500, k=4, seed=6),
        dict(metric=("kappa", {}), method="bca", by="sys"),
        ("4d061c1e1c488fae", "0x1.3374ed57801c8p-1", "0x1.1e8b6ebdfec96p-1",
         "0x1.489a875099a98p-1", "index"),
    ),
    "kappa_fixed_labels": (
        dict(n=400, k=5, seed=7, labels="ABC"),
        dict(metric=("kappa", {"labels": ["C", "B", "A", "Z"]}), method="bca"),
        ("2e4f520cf584a491", "0x1.287fd070f3bd3p-1", "0x1.1692ad61fede8p-1",
         "0x1.3bb03e790bdeap-1", "index"),
    ),
    "alpha_nominal": (
        dict(n=400, k=5, seed=8),
        dict(metric=("alpha", {}), method="bca"),
        ("8459ab2bf761678c", "0x1.709391e0b2cc6p-2", "0x1.4bb1202708cd4p-2",
         "0x1.993ba47f33e62p-2", "index"),
    ),
    "kappa_input_weight_2k": (
        dict(n=3000, k=2, seed=9),
        dict(metric=("kappa", {}), method="basic"),
        ("710d547d0e4b8eed", "0x1.309337403d91ep-1", "0x1.28b067d30c6a4p-1",
         "0x1.38f22a8a6f81dp-1", "patterns"),
    ),
}  # fmt: skip


def _digest(r):
    dist = np.ascontiguousarray(np.asarray(r.bootstrap_distribution, dtype=float))
    return (
        hashlib.sha256(dist.tobytes()).hexdigest()[:16],
        float(np.atleast_1d(r.estimate)[0]).hex(),
        float(np.atleast_1d(r.low)[0]).hex(),
        float(np.atleast_1d(r.high)[0]).hex(),
        r.kernel,
    )


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_results_are_mains_bit_for_bit(name):
    table, call, expected = RECORDED[name]
    call = dict(call)
    kind, options = call.pop("metric")
    metric = (
        evalci.metrics.kappa(truth="label", **options)
        if kind == "kappa"
        else evalci.metrics.krippendorff_alpha("nominal")
    )
    r = evalci.bootstrap(
        _table(**table),
        value="pred",
        cluster="input_id",
        metric=metric,
        n_resamples=2000,
        rng=11,
        **call,
    )
    assert _digest(r) == expected


# ------------------------------------------------------- label statistics


def _old_confusion_statistics(truth, fixed, name, ordered=False):
    """Main's statistics: every row looked up in the label set, float one-hot."""

    def statistics(data, value):
        labels.check_comparable(data[value], data[truth], value, truth)
        both = np.concatenate([np.asarray(data[value]), np.asarray(data[truth])])
        cats = labels._label_set(both, fixed, ordered, name, "`weights`")
        p = labels._codes(data[value], cats, name)
        t = labels._codes(data[truth], cats, name)
        out = np.zeros((len(t), len(cats) ** 2))
        out[np.arange(len(t)), t * len(cats) + p] = 1.0
        return out

    return statistics


_COLUMNS = {
    "text": (np.array(list("BADCAB"), dtype=object), np.array(list("ABCDDB"), dtype=object)),
    "ints": (np.array([3, 1, 2, 2, 7, 1]), np.array([1, 1, 3, 2, 7, 7])),
    "int_float": (np.array([3, 1, 2, 2, 7, 1]), np.array([1.0, 1.0, 3.0, 2.0, 7.0, 7.0])),
    "bools": (np.array([True, False, True]), np.array([True, True, False])),
    "unicode": (np.array(["x", "y", "x"]), np.array(["y", "y", "z"])),
    "one_label": (np.array(["a", "a"], dtype=object), np.array(["a", "a"], dtype=object)),
    "with_none": (np.array(["a", None, "b"], dtype=object), np.array(["a", "b", "b"], dtype=object)),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(_COLUMNS))
@pytest.mark.parametrize("fixed", [None, "given"])
@pytest.mark.parametrize("ordered", [False, True])
def test_label_statistics_match_the_row_by_row_lookup(case, fixed, ordered):
    pred, true = _COLUMNS[case]
    if fixed == "given":
        seen = pd.unique(pd.Series(np.concatenate([pred, true]), dtype=object))
        fixed = sorted(seen, key=str, reverse=True) + ["extra"]
    data = {"pred": pred, "label": true}
    outs = []
    for make in (_old_confusion_statistics, labels._confusion_statistics):
        try:
            outs.append(make("label", fixed, "kappa", ordered)(data, "pred"))
        except (ValueError, TypeError) as err:
            outs.append((type(err), str(err)))
    old, new = outs
    if isinstance(old, tuple):
        assert new == old
        return
    assert new.dtype == np.uint8
    np.testing.assert_array_equal(new.astype(float), old)


def test_label_not_in_labels_names_the_first_such_row():
    data = {"pred": np.array(["a", "q", "r", "b"]), "label": np.array(list("abab"))}
    for make in (_old_confusion_statistics, labels._confusion_statistics):
        with pytest.raises(ValueError, match="label 'q' is not in `labels`"):
            make("label", ["a", "b"], "kappa")(data, "pred")


def test_kind_checks_unchanged():
    """check_comparable infers each column once; the same refusals."""
    for pred, true, words in [
        (np.array([1, "1"], dtype=object), np.array(["a", "b"], dtype=object), "mixes"),
        (np.array([1, 2]), np.array(["a", "b"], dtype=object), "share no value type"),
        (np.array([True, 1], dtype=object), np.array([1, 1]), "mixes"),
    ]:
        with pytest.raises(ValueError, match=words):
            labels.check_comparable(pred, true, "pred", "label")


# ------------------------------------------------------------ cell sums


@pytest.mark.parametrize("seed", range(6))
def test_cell_sums_are_the_bincounts_bits(seed):
    """Rows added in row order from 0.0, as one bincount per column adds them
    (any floats, negative zeros, magnitudes that round)."""
    rng = np.random.default_rng(seed)
    r, size, m = int(rng.integers(1, 4000)), int(rng.integers(1, 400)), 16
    cell = rng.integers(0, size, r)
    x = rng.standard_normal((r, m)) * 10.0 ** rng.integers(-8, 16, (r, m))
    x[rng.random((r, m)) < 0.1] = -0.0
    want = np.stack(
        [np.bincount(cell, weights=x[:, j], minlength=size) for j in range(m)], axis=1
    )
    assert cell_sums_of(cell, x, size).tobytes() == want.tobytes()


# ------------------------------------------------------------ row codes


def _row_codes_by_column(x, lead=None, radix0=1, monkeypatch=None):
    monkeypatch.setattr(patterns_find, "_whole_key", lambda x: None)
    try:
        return patterns_find._row_codes(x, lead, radix0)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("seed", range(40))
def test_row_codes_one_product_equals_column_by_column(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(1, 3000)), int(rng.integers(1, 20))
    x = rng.integers(-3, int(rng.choice([1, 2, 6, 100, 70_000])), (n, c)).astype(float)
    x[:, rng.random(c) < 0.3] = 4.0  # constant columns: no digit
    if seed % 5 == 0:
        x[rng.random(x.shape) < 0.01] = -0.0
    if seed % 7 == 0:
        x += 0.5  # not whole: the column-by-column codes
    if seed % 3 == 0:
        x += 2.0**45  # whole, but x @ place could round: (x - min) @ place
    lead, radix0 = None, 1
    if seed % 2:
        radix0 = int(rng.integers(1, 5))
        lead = np.sort(rng.integers(0, radix0, n))
    fast = patterns_find._row_codes(x, lead, radix0)
    slow = _row_codes_by_column(x, lead, radix0, monkeypatch)
    assert fast[1] == slow[1]
    assert fast[0].dtype == slow[0].dtype
    np.testing.assert_array_equal(fast[0], slow[0])

"""evalci.inspect without inspect_ai: the manager's bookkeeping and its
guarantee (driven directly, as Inspect would drive it), and that neither
``import evalci`` nor ``import evalci.inspect`` imports inspect_ai. The runs
inside Inspect itself are in test_inspect_ai.py (skipped as a whole without
it).
"""

import asyncio
import subprocess
import sys

import numpy as np
import pytest

from evalci import testing
from evalci.inspect import SequentialStopping

from conftest import ROOT


def _run(stop, values, epochs=1):
    """Drive ``stop`` as Inspect does (epoch-major): the number run."""

    class _S:
        def __init__(self, v):
            self.score = type("Score", (), {"value": v})()

    async def go():
        await stop.start_task(None, list(range(values.shape[0])), epochs)
        ran = 0
        for e in range(epochs):
            for i in range(values.shape[0]):
                if await stop.schedule_sample(i, e + 1) is None:
                    ran += 1
                    await stop.complete_sample(i, e + 1, {"s": _S(values[i, e])})
        return ran, await stop.complete_task()

    return asyncio.run(go())


@pytest.mark.parametrize("code", ["import evalci", "import evalci, evalci.inspect"])
def test_importing_evalci_does_not_import_inspect_ai(code):
    check = (
        "; import sys; assert not any(m.startswith('inspect_ai') for m in sys.modules)"
    )
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", code + check], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def test_the_unit_is_the_sample_mean_over_its_epochs():
    # 3 epochs: no unit until the last epoch; the interval is evalci's
    # confidence sequence of the per-sample means
    rng = np.random.default_rng(0)
    values = (rng.random((40, 3)) < 0.5).astype(float)
    stop = SequentialStopping(width=0.01)  # never narrow enough: runs all
    ran, meta = _run(stop, values, epochs=3)
    assert ran == 120 and meta["decision"] is None and meta["units"] == 40
    means = values.mean(axis=1)
    mean, half = testing.confidence_sequence(means.sum(), 40, 0.5, 0.05, 40)
    assert meta["estimate"] == pytest.approx(float(mean), abs=1e-15)
    assert meta["low"] == pytest.approx(max(0.0, float(mean - half)), abs=1e-15)
    assert meta["high"] == pytest.approx(min(1.0, float(mean + half)), abs=1e-15)


def test_it_stops_the_rest_and_says_why():
    values = np.ones((100, 2))
    stop = SequentialStopping(threshold=0.5)
    ran, meta = _run(stop, values, epochs=2)
    # epoch 1 runs whole (no unit before the last epoch), then 14 units decide
    assert meta["decision"] == "above" and meta["units"] == 14
    assert ran == 100 + 14 and meta["stopped"] == 86
    assert stop.reason.startswith("evalci: the 95% confidence sequence")
    assert "lies above 0.5 after 14 samples" in stop.reason


def test_width_stop_and_bad_arguments():
    rng = np.random.default_rng(1)
    values = (rng.random((2000, 1)) < 0.7).astype(float)
    ran, meta = _run(SequentialStopping(width=0.2), values)
    assert meta["decision"] == "narrow" and meta["high"] - meta["low"] <= 0.2
    assert ran == meta["units"] < 2000
    with pytest.raises(ValueError, match="give `width=`"):
        SequentialStopping()
    with pytest.raises(ValueError, match="outside `bounds`"):
        _run(SequentialStopping(threshold=0.5), np.full((3, 1), 2.0))
    with pytest.raises(ValueError, match="`alpha`"):
        SequentialStopping(threshold=0.5, alpha=1.5)


def test_wrong_decisions_at_most_alpha_under_continuous_monitoring():
    # the mean sits on the threshold, so every decision is wrong: 2000
    # trials of up to 400 samples, alpha 0.2. The share deciding is at most
    # alpha + 3 Monte Carlo SEs (0.027): a false failure chance below 0.2%
    # were the rate exactly alpha (it is far below: the boundary is loose)
    rng = np.random.default_rng(38)
    trials, n, alpha = 2000, 400, 0.2
    draws = (rng.random((trials, n)) < 0.5).astype(float)
    la = -np.log(alpha)
    r = n / (2 * la + np.log1p(2 * la))  # the manager's planned = n
    t = np.arange(1, n + 1)
    half = 0.5 * np.sqrt((1 + r / t) * (np.log(t + r) - np.log(r) + 2 * la) / t)
    means = np.cumsum(draws, axis=1) / t
    wrong = ((means - half > 0.5) | (means + half < 0.5)).any(axis=1)
    assert wrong.mean() <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / trials)
    # the manager decides exactly when this vectorised sequence does
    for k in range(20):
        _, meta = _run(
            SequentialStopping(threshold=0.5, alpha=alpha), draws[k, :, None]
        )
        assert (meta["decision"] is not None) == bool(wrong[k])


def test_without_inspect_ai_a_stop_is_a_plain_record(monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.util._early_stopping", None)
    stop = SequentialStopping(threshold=0.5)
    ran, meta = _run(stop, np.ones((50, 1)))
    assert meta["stopped"] == 50 - ran > 0

    async def one():
        return await stop.schedule_sample(49, 1)

    x = asyncio.run(one())
    assert (x.id, x.epoch, x.reason) == (49, 1, stop.reason)

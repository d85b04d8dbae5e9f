"""lm-evaluation-harness and HELM logs in their real layout, and hostile ones.

The fixtures are written as each framework writes them (lm_eval 0.4.13:
``evaluator.py`` builds each logged sample, ``loggers/evaluation_tracker.py``
writes ``samples_<task>_<date>.jsonl`` and ``results_<date>.json``,
``evaluator_utils.py`` the ``n-samples`` counts and ``api/metrics.py`` the
stderr; crfm-helm 0.5.16: ``benchmark/runner.py`` writes ``run_spec.json``,
``stats.json`` and ``per_instance_stats.json``, ``metrics/metric.py``
aggregates them per train trial and split). The framework's own reported
numbers are computed here by its rules, independently of evalci, and the
reader's table must reproduce them.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest

import evalci
from evalci.io.readers import read_helm, read_jsonl, read_lm_eval, sample_counts

DATE = "2026-03-04T10-11-12.345678"


# --------------------------------------------------------------------------
# lm-evaluation-harness
# --------------------------------------------------------------------------


def lm_sample(doc_id: int, lls: list[float], gold: int, filt: str = "none") -> dict:
    """One logged sample of a multiple-choice task, as evaluator.py builds it
    and evaluation_tracker.save_results_samples sanitises it."""
    pred = int(np.argmax(lls))
    return {
        "doc_id": doc_id,
        "doc": {
            "id": f"Mercury_{doc_id}",
            "question": f"q{doc_id}",
            "choices": {"text": ["a", "b", "c"], "label": ["A", "B", "C"]},
            "answerKey": "ABC"[gold],
        },  # fmt: skip
        "target": str(gold),
        "arguments": {
            f"gen_args_{i}": {
                "arg_0": f"Question: q{doc_id}\nAnswer:",
                "arg_1": f" {c}",
            }
            for i, c in enumerate("abc")
        },
        "resps": [[[str(ll), "False"]] for ll in lls],
        "filtered_resps": [[str(ll), "False"] for ll in lls],
        "filter": filt,
        "metrics": ["acc", "acc_norm"],
        "doc_hash": "d" * 64,
        "prompt_hash": "p" * 64,
        "target_hash": "t" * 64,
        "acc": float(pred == gold),
        "acc_norm": float(pred == gold),
    }


def lm_aggregate(task: str, samples: list[dict], original: int) -> dict:
    """results_<date>.json as lm-eval writes it: the mean of each metric and
    its stderr, mean_stderr = sample_stddev (n - 1) / sqrt(n)."""
    out = {"alias": task}
    for m in ("acc", "acc_norm"):
        xs = [s[m] for s in samples]
        out[f"{m},none"] = statistics.fmean(xs)
        out[f"{m}_stderr,none"] = statistics.stdev(xs) / math.sqrt(len(xs))
    return {
        "results": {task: out},
        "group_subtasks": {task: []},
        "configs": {task: {"task": task, "num_fewshot": 0}},
        "versions": {task: 1.0},
        "n-shot": {task: 0},
        "higher_is_better": {task: {"acc": True, "acc_norm": True}},
        "n-samples": {task: {"original": original, "effective": len(samples)}},
        "config": {
            "model": "hf",
            "model_args": "pretrained=EleutherAI/pythia-160m",
            "batch_size": 1,
            "limit": None,
            "bootstrap_iters": 100000,
        },  # fmt: skip
        "git_hash": "4a3bc5e",
        "date": 1772618472.0,
        "task_hashes": {task: "ab12"},
        "model_source": "hf",
        "model_name": "EleutherAI/pythia-160m",
        "model_name_sanitized": "EleutherAI__pythia-160m",
    }


def write_lm_run(out: Path, task: str, n: int, seed: int = 0, original=None):
    """``--output_path out --log_samples``: out/<model>/{results,samples}."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, n)
    lls = rng.normal(size=(n, 3)) + 0.8 * np.eye(3)[gold]
    samples = [lm_sample(i, list(lls[i]), int(gold[i])) for i in range(n)]
    folder = out / "EleutherAI__pythia-160m"
    folder.mkdir(parents=True, exist_ok=True)
    results = lm_aggregate(task, samples, original or n)
    res = folder / f"results_{DATE}.json"
    if res.exists():  # one results file for every task of the run
        old = json.loads(res.read_text())
        for key in ("results", "n-samples", "configs", "versions"):
            old[key].update(results[key])
        results = old
    res.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    f = folder / f"samples_{task}_{DATE}.jsonl"
    f.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples))
    return f, results


def test_lm_eval_matches_its_own_score_and_stderr(tmp_path):
    f, results = write_lm_run(tmp_path, "arc_easy", 57, original=2376)
    df = read_lm_eval(tmp_path)
    assert len(df) == 57 and set(df.task) == {"arc_easy"}
    assert sample_counts(df).to_dict("records") == [
        {"log_file": str(f), "system": "EleutherAI/pythia-160m", "task": "arc_easy",
         "split": None, "expected": 57, "found": 57, "scored": 57, "errored": 0,
         "hit_limit": 0, "invalidated": 0, "stopped_early": 0, "unscored": 0,
         "missing": 0, "source": "samples_jsonl"}
    ]  # fmt: skip
    # the old name keeps its old keys
    assert df.attrs["log_counts"] == [
        {"log_file": str(f), "task": "arc_easy", "found": 57, "stated": 57}
    ]
    reported = results["results"]["arc_easy"]
    for m in ("acc", "acc_norm"):
        r = evalci.analytic_ci(df, m, cluster="input")
        assert r.estimate == pytest.approx(reported[f"{m},none"], abs=1e-12)
        assert r.standard_error == pytest.approx(
            reported[f"{m}_stderr,none"], abs=1e-12
        )


def test_lm_eval_repeated_key_names_both_lines(tmp_path):
    f, _ = write_lm_run(tmp_path, "arc_easy", 6)
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines + [lines[2]]) + "\n")  # doc 2 again, line 7
    with pytest.raises(ValueError) as e:
        read_lm_eval(f)
    msg = str(e.value)
    assert f.name in msg and "lines 3 and 7" in msg and "doc_id 2" in msg
    assert "filter 'none'" in msg and "'acc'" in msg
    # the same document under another filter is no repeat
    other = json.loads(lines[2]) | {"filter": "strict"}
    f.write_text("\n".join(lines + [json.dumps(other)]) + "\n")
    with pytest.warns(evalci.EvalciWarning, match="under filter 'strict'"):
        df = read_lm_eval(f)  # 1 document under 'strict' of 6 stated
    assert "acc,strict" in df and df["acc,strict"].notna().sum() == 1


def test_lm_eval_fewer_documents_than_the_results_say(tmp_path):
    f, results = write_lm_run(tmp_path, "arc_easy", 50)
    f.write_text("".join(f.read_text().splitlines(True)[:10]))  # cut short
    with pytest.warns(evalci.EvalciWarning) as w:
        df = read_lm_eval(tmp_path)
    (msg,) = [str(x.message) for x in w]
    assert str(f) in msg and "holds 10 documents" in msg and "says 50" in msg
    assert f"results_{DATE}.json" in msg
    assert len(df) == 10 and df.attrs["log_counts"][0]["stated"] == 50
    (c,) = df.attrs["evalci_samples"]
    assert (c["expected"], c["found"], c["scored"], c["missing"]) == (50, 10, 10, 40)
    # more documents than stated: a results file of another run
    res = f.parent / f"results_{DATE}.json"
    results["n-samples"]["arc_easy"]["effective"] = 4
    res.write_text(json.dumps(results))
    with pytest.warns(
        evalci.EvalciWarning, match="holds 10 documents.*says 4.*another run"
    ):
        read_lm_eval(tmp_path)
    # --limit 10: effective 10 of original 50 is no shortfall (no warning)
    results["n-samples"]["arc_easy"] = {"original": 50, "effective": 10}
    res.write_text(json.dumps(results))
    assert len(read_lm_eval(tmp_path)) == 10


def test_lm_eval_text_in_a_numeric_metric(tmp_path):
    f, _ = write_lm_run(tmp_path, "arc_easy", 6)
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    lines[3]["acc"] = "1.0"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(ValueError) as e:
        read_lm_eval(f)
    msg = str(e.value)
    assert f"{f}, line 4" in msg and "`acc`" in msg and "'1.0'" in msg
    assert "other lines hold numbers" in msg
    for x in lines:  # text on every line: still no number
        x["acc"] = "yes"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(ValueError, match=r"line 1: the metric `acc` holds a string"):
        read_lm_eval(f)


def _mutate(d, path, value):
    *head, last = path
    for k in head:
        d = d[k]
    d[last] = value


@pytest.mark.parametrize(
    "path, value, field",
    [
        (("doc_id",), [1], "`doc_id`"),
        (("doc_id",), True, "`doc_id`"),
        (("filter",), 3, "`filter`"),
        (("metrics",), "acc", "`metrics`"),
        (("metrics",), [1], "`metrics`"),
        (("resps",), "abc", "`resps`"),
        (("resps",), ["abc"], "`resps`"),
    ],
)
def test_lm_eval_wrong_typed_sample_fields(tmp_path, path, value, field):
    f, _ = write_lm_run(tmp_path, "arc_easy", 4)
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    _mutate(lines[1], path, value)
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(ValueError) as e:
        read_lm_eval(f)
    assert f"{f}, line 2" in str(e.value) or (
        str(f) in str(e.value) and "line 2" in str(e.value)
    )
    assert field in str(e.value)


def test_lm_eval_a_line_that_is_not_an_object(tmp_path):
    f, _ = write_lm_run(tmp_path, "arc_easy", 3)
    f.write_text(f.read_text() + "[1, 2]\n")
    with pytest.raises(
        ValueError, match=r"line 4: a sample line is a JSON object, not a list"
    ):
        read_lm_eval(f)


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda r: [r], "results file holds a JSON object, not a list"),
        (lambda r: r | {"n-samples": [1]}, "`n-samples`"),
        (
            lambda r: r | {"n-samples": {"arc_easy": {"effective": "4"}}},
            "`arc_easy.effective`",
        ),  # fmt: skip
        (lambda r: r | {"model_name": 7}, "`model_name`"),
        (lambda r: r | {"model_name": None, "config": "hf"}, "`config`"),
        (
            lambda r: r | {"model_name": None, "config": {"model_args": 3}},
            "`config.model_args`",
        ),  # fmt: skip
    ],
)
def test_lm_eval_wrong_typed_results_fields(tmp_path, edit, field):
    f, results = write_lm_run(tmp_path, "arc_easy", 4)
    res = f.parent / f"results_{DATE}.json"
    res.write_text(json.dumps(edit(results)))
    with pytest.raises(ValueError) as e:
        read_lm_eval(f)
    assert str(res) in str(e.value) and field in str(e.value)


def test_lm_eval_two_tasks_are_keyed_apart(tmp_path):
    # doc_ids 0.. in both tasks: two tables side by side, never one key twice
    write_lm_run(tmp_path, "arc_easy", 20, seed=1)
    write_lm_run(tmp_path, "piqa", 15, seed=2)
    df = read_lm_eval(tmp_path)
    assert df.groupby("task").size().to_dict() == {"arc_easy": 20, "piqa": 15}
    assert list(df[["task", "input"]].drop_duplicates().groupby("task").size()) == [
        20,
        15,
    ]
    assert [c["task"] for c in df.attrs["log_counts"]] == ["arc_easy", "piqa"]
    counts = sample_counts(df)
    assert counts.task.tolist() == ["arc_easy", "piqa"]
    assert counts.found.tolist() == [20, 15] and counts.log_file.is_unique
    one = read_lm_eval(tmp_path, task="piqa")
    assert len(one) == 15
    # one score over both tasks is not given without a word
    with pytest.warns(evalci.EvalciWarning, match="'task'"):
        evalci.cluster_ci(df, "acc", cluster="input", rng=0, n_resamples=50)


# --------------------------------------------------------------------------
# HELM
# --------------------------------------------------------------------------


def helm_stat(name: str, x: float, split: str) -> dict:
    """A per-instance Stat after Stat.add(x) (asdict_without_nones)."""
    return {"name": {"name": name, "split": split}, "count": 1, "sum": x,
            "sum_squared": x * x, "min": x, "max": x, "mean": x,
            "variance": 0.0, "stddev": 0.0}  # fmt: skip


def helm_stats_json(per_instance: list[dict], trials: int) -> list[dict]:
    """stats.json by metric.py's rule: per train trial, the mean of each
    (name, split) over the instances; then those trial means merged (count =
    trials); plus InstancesPerSplitMetric's num_instances."""
    trial_means: dict[tuple, list] = {}
    for t in range(trials):
        cells: dict[tuple, list] = {}
        for e in per_instance:
            if e["train_trial_index"] != t:
                continue
            for s in e["stats"]:
                cells.setdefault((s["name"]["name"], s["name"]["split"]), []).append(
                    s["mean"]
                )
            key = ("num_instances", e["stats"][0]["name"]["split"])
            cells.setdefault(key, []).append(None)
        for key, xs in cells.items():
            m = len(xs) if key[0] == "num_instances" else sum(xs) / len(xs)
            trial_means.setdefault(key, []).append(m)
    out = []
    for (name, split), ms in trial_means.items():
        mean = sum(ms) / len(ms)
        var = sum(m * m for m in ms) / len(ms) - mean**2
        out.append({"name": {"name": name, "split": split}, "count": len(ms),
                    "sum": sum(ms), "sum_squared": sum(m * m for m in ms),
                    "min": min(ms), "max": max(ms), "mean": mean,
                    "variance": var, "stddev": math.sqrt(max(var, 0.0))})  # fmt: skip
    return out


def write_helm_run(runs: Path, name: str, model: str, stat: str, values: dict,
                   trials: int = 1) -> Path:  # fmt: skip
    """A run directory as runner.py writes it. ``values``: split -> array of
    shape (instances, trials); ids id0, id1, ... across the splits."""
    # run_expander.py: name + ("," if ":" in name else ":") + "model=..."
    sep = "," if ":" in name else ":"
    folder = runs / f"{name}{sep}model={model.replace('/', '_')}"
    folder.mkdir(parents=True)
    spec = {
        "name": folder.name,
        "scenario_spec": {
            "class_name": "helm.benchmark.scenarios.x.XScenario",
            "args": {},
        },  # fmt: skip
        "adapter_spec": {
            "method": "generation",
            "model_deployment": model,
            "model": model,
            "num_train_trials": trials,
            "max_eval_instances": 1000,
        },  # fmt: skip
        "metric_specs": [],
        "groups": [name.split(":")[0]],
    }
    instances, entries, i = [], [], 0
    for split, xs in values.items():
        for row in np.asarray(xs, float):
            iid = f"id{i}"
            instances.append({"input": {"text": f"q{i}"}, "references": [],
                              "split": split, "id": iid})  # fmt: skip
            for t in range(trials):
                entries.append({
                    "instance_id": iid,
                    "train_trial_index": t,
                    "stats": [helm_stat("num_prompt_tokens", 400.0 + i, split),
                              helm_stat(stat, float(row[t]), split)],
                })  # fmt: skip
            i += 1
    (folder / "run_spec.json").write_text(json.dumps(spec, indent=2))
    (folder / "scenario.json").write_text(json.dumps({"name": name}, indent=2))
    (folder / "instances.json").write_text(json.dumps(instances, indent=2))
    (folder / "per_instance_stats.json").write_text(json.dumps(entries, indent=2))
    stats = helm_stats_json(entries, trials)
    (folder / "stats.json").write_text(json.dumps(stats, indent=2))
    return folder


def helm_reported(folder: Path, stat: str, split: str) -> dict:
    stats = json.loads((folder / "stats.json").read_text())
    (s,) = [s for s in stats if s["name"] == {"name": stat, "split": split}]
    return s


def mmlu_values(rng, n_valid=9, n_test=27, trials=1):
    return {
        "valid": (rng.random((n_valid, trials)) < 0.4).astype(float),
        "test": (rng.random((n_test, trials)) < 0.15).astype(float),
    }


@pytest.mark.parametrize("trials", [1, 3])
def test_helm_test_split_matches_stats_json(tmp_path, trials):
    rng = np.random.default_rng(3)
    run = write_helm_run(tmp_path / "runs" / "v1",
                         "mmlu:subject=philosophy,method=multiple_choice_joint",
                         "openai/gpt2", "exact_match", mmlu_values(rng, trials=trials),
                         trials)  # fmt: skip
    with pytest.warns(evalci.EvalciWarning) as w:
        df = read_helm(tmp_path / "runs")
    (msg,) = [str(x.message) for x in w]  # one line, naming the file and splits
    assert "\n" not in msg and str(run / "per_instance_stats.json") in msg
    assert "27 test, 9 valid" in msg and "split='all'" in msg
    assert set(df.split) == {"test"} and len(df) == 27 * trials
    assert set(df.task) == {"mmlu:subject=philosophy,method=multiple_choice_joint"}
    assert df.attrs["log_counts"][0] | {"log_file": None} == {
        "log_file": None, "task": df.task[0], "split": "test", "found": 27,
        "stated": 27,
    }  # fmt: skip
    r = evalci.analytic_ci(df, "exact_match", cluster="input")
    assert r.estimate == pytest.approx(
        helm_reported(run, "exact_match", "test")["mean"], abs=1e-12
    )
    pooled = np.concatenate([v.ravel() for v in mmlu_values(
        np.random.default_rng(3), trials=trials).values()]).mean()  # fmt: skip
    assert r.estimate != pytest.approx(pooled)  # what read_helm used to give
    valid = read_helm(run, split="valid")  # no note: the split was chosen
    assert set(valid.split) == {"valid"} and len(valid) == 9 * trials
    assert valid["exact_match"].mean() == pytest.approx(
        helm_reported(run, "exact_match", "valid")["mean"], abs=1e-12
    )
    both = read_helm(run, split="all")
    assert len(both) == 36 * trials and set(both.split) == {"test", "valid"}
    assert both.attrs["log_counts"][0]["stated"] == 36
    c = sample_counts(both).iloc[0]
    assert (c.split, c.expected, c.found, c.scored, c.missing) == ("all", 36, 36, 36, 0)
    assert c.source == "per_instance_stats" and c.system == "openai/gpt2"


def test_helm_narrativeqa_f1_test_split(tmp_path):
    rng = np.random.default_rng(4)
    values = {"valid": rng.random((5, 1)) * 0.5, "test": rng.random((20, 1)) * 0.3}
    run = write_helm_run(tmp_path, "narrative_qa", "openai/gpt2", "f1_score", values)
    with pytest.warns(evalci.EvalciWarning, match="holds the 'test' split"):
        df = read_helm(run, stat="f1_score")
    assert set(df.task) == {"narrative_qa"} and len(df) == 20
    reported = helm_reported(run, "f1_score", "test")
    assert df["f1_score"].mean() == pytest.approx(reported["mean"], abs=1e-12)
    # HELM's stats.json holds no standard error over instances: its stddev
    # is over the train trials' means (population), 0 with one trial
    assert reported["count"] == 1 and reported["stddev"] == 0.0


def test_helm_unknown_split_lists_the_splits(tmp_path):
    run = write_helm_run(tmp_path, "mmlu:subject=anatomy", "openai/gpt2",
                         "exact_match", mmlu_values(np.random.default_rng(1)))  # fmt: skip
    with pytest.raises(ValueError) as e:
        read_helm(run, split="dev")
    msg = str(e.value)
    assert "`split`" in msg and "'dev'" in msg and "['test', 'valid']" in msg
    assert "per_instance_stats.json" in msg
    with pytest.raises(TypeError, match="`split` must be a string"):
        read_helm(run, split=1)


def test_helm_only_one_split_reads_it_without_a_note(tmp_path):
    run = write_helm_run(tmp_path, "boolq", "openai/gpt2", "exact_match",
                         {"valid": np.ones((4, 1))})  # fmt: skip
    df = read_helm(run)  # no warning (pytest turns warnings into errors)
    assert set(df.split) == {"valid"} and len(df) == 4
    with pytest.raises(ValueError, match=r"no instance of split 'test'.*\['valid'\]"):
        read_helm(run, split="test")


def test_helm_several_runs_read_with_a_task_column(tmp_path):
    rng = np.random.default_rng(6)
    runs = tmp_path / "runs" / "v1"
    folders = {}
    for subject in ("philosophy", "anatomy"):
        for model in ("openai/gpt2", "meta/llama-7b"):
            folders[subject, model] = write_helm_run(
                runs, f"mmlu:subject={subject}", model, "exact_match",
                {"test": (rng.random((30, 1)) < 0.5).astype(float)},
            )  # fmt: skip
    df = read_helm(runs)  # ids id0..id29 in every run: no duplicate-key error
    assert sorted(set(df.task)) == ["mmlu:subject=anatomy", "mmlu:subject=philosophy"]
    assert df.groupby(["task", "system"]).size().tolist() == [30] * 4
    assert list(df.columns[:3]) == ["input", "run", "system"]
    for (subject, model), folder in folders.items():
        one = df[(df.task == f"mmlu:subject={subject}") & (df.system == model)]
        assert one["exact_match"].mean() == pytest.approx(
            helm_reported(folder, "exact_match", "test")["mean"], abs=1e-12
        )
    # a score over both tasks is never given without a word
    with pytest.warns(evalci.EvalciWarning, match="'task'"):
        evalci.cluster_ci(df, "exact_match", cluster="input", by="system", rng=0,
                          n_resamples=50)  # fmt: skip
    by_task = evalci.analytic_ci(df, "exact_match", cluster="input",
                                 by=["task", "system"])  # fmt: skip
    assert len(by_task.groups) == 4
    # the same task and system read twice (two suites) is still refused
    write_helm_run(tmp_path / "runs" / "v2", "mmlu:subject=anatomy", "openai/gpt2",
                   "exact_match", {"test": np.ones((30, 1))})  # fmt: skip
    with pytest.raises(ValueError, match=r"occurs more than once.*v1.*v2|v2.*v1"):
        read_helm(tmp_path / "runs")


def test_helm_fewer_instances_than_stats_json_says(tmp_path):
    run = write_helm_run(tmp_path, "mmlu:subject=anatomy", "openai/gpt2",
                         "exact_match", {"test": np.ones((10, 1))})  # fmt: skip
    f = run / "per_instance_stats.json"
    f.write_text(json.dumps(json.loads(f.read_text())[:4]))  # cut short
    with pytest.warns(evalci.EvalciWarning) as w:
        df = read_helm(run)
    (msg,) = [str(x.message) for x in w]
    assert str(f) in msg and "holds 4 instances of split 'test'" in msg
    assert "evaluated 10" in msg and len(df) == 4
    assert df.attrs["log_counts"][0]["found"] == 4
    assert df.attrs["log_counts"][0]["stated"] == 10
    (c,) = df.attrs["evalci_samples"]
    assert (c["split"], c["expected"], c["found"], c["missing"]) == ("test", 10, 4, 6)


def _helm_file(tmp_path):
    run = write_helm_run(tmp_path, "mmlu:subject=anatomy", "openai/gpt2",
                         "exact_match", {"test": np.ones((3, 1))})  # fmt: skip
    return run, run / "per_instance_stats.json"


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda es: es[:1] + [7] + es[2:], "entry [1] is a number"),
        (lambda es: es[:1] + ["id1"] + es[2:], "entry [1] is a string"),
        (lambda es: [es[0] | {"stats": {"a": 1}}] + es[1:], "`stats` in entry [0]"),
        (lambda es: [es[0] | {"stats": "x"}] + es[1:], "`stats` in entry [0]"),
        (lambda es: [es[0] | {"stats": [3]}] + es[1:], "`stats[0]` in entry [0]"),
        (
            lambda es: [es[0] | {"instance_id": 5}] + es[1:],
            "`instance_id` in entry [0]",
        ),
        (
            lambda es: [es[0] | {"train_trial_index": "0"}] + es[1:],
            "`train_trial_index` in entry [0]",
        ),  # fmt: skip
        (
            lambda es: [es[0] | {"perturbation": "typo"}] + es[1:],
            "`perturbation` in entry [0]",
        ),  # fmt: skip
        (
            lambda es: [es[0] | {"stats": [{"name": "exact_match"}]}] + es[1:],
            "`name` in entry [0], stats[0]",
        ),  # fmt: skip
        (
            lambda es: (
                [
                    es[0]
                    | {"stats": [helm_stat("exact_match", 1.0, "test") | {"mean": "1"}]}
                ]
                + es[1:]
            ),
            "`mean` in entry [0], stats[0]",
        ),  # fmt: skip
    ],
)
def test_helm_wrong_typed_entries(tmp_path, edit, field):
    _, f = _helm_file(tmp_path)
    f.write_text(json.dumps(edit(json.loads(f.read_text()))))
    with pytest.raises(ValueError) as e:
        read_helm(f)
    assert str(f) in str(e.value) and field in str(e.value)


@pytest.mark.parametrize(
    "name, edit, field",
    [
        ("run_spec.json", lambda s: [s], "a run spec is a JSON object, not a list"),
        ("run_spec.json", lambda s: s | {"adapter_spec": "x"}, "`adapter_spec`"),
        (
            "run_spec.json",
            lambda s: s | {"adapter_spec": {"model": 3}},
            "`adapter_spec.model`",
        ),  # fmt: skip
        ("run_spec.json", lambda s: s | {"name": ["a"]}, "`name`"),
        ("stats.json", lambda s: {"stats": s}, "stats.json holds a JSON list"),
        ("stats.json", lambda s: [1] + s, "entry [0]"),
    ],
)
def test_helm_wrong_typed_side_files(tmp_path, name, edit, field):
    run, f = _helm_file(tmp_path)
    side = run / name
    side.write_text(json.dumps(edit(json.loads(side.read_text()))))
    with pytest.raises(ValueError) as e:
        read_helm(f)
    assert str(side) in str(e.value) and field in str(e.value)


# --------------------------------------------------------------------------
# JSON Lines (tables.py)
# --------------------------------------------------------------------------


def test_jsonl_a_line_that_is_not_an_object(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text('{"q": 1, "v": 1}\n\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"t\.jsonl, line 3: the line is a list"):
        read_jsonl(f, input="q", value="v")


# --------------------------------------------------------------------------
# every sample accounted for: one record per file, the same keys everywhere
# --------------------------------------------------------------------------

OUTCOMES = ["scored", "errored", "invalidated", "stopped_early", "unscored"]


def _adds_up(counts):
    """scored + errored + invalidated + stopped_early + unscored + missing
    is what the log said it should hold; the outcomes are what it holds."""
    assert (counts[OUTCOMES].sum(axis=1) == counts.found).all()
    assert (counts[OUTCOMES].sum(axis=1) + counts.missing == counts.expected).all()


def test_lm_eval_unscored_document_counted(tmp_path):
    f, _ = write_lm_run(tmp_path, "arc_easy", 12)
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    lines[3]["acc"] = None  # a document lm-eval logged without its metric
    f.write_text("".join(json.dumps(x) + "\n" for x in lines[:9]))  # 3 lost
    with pytest.warns(evalci.EvalciWarning, match="holds 9 documents"):
        df = read_lm_eval(tmp_path)
    counts = sample_counts(df)
    assert counts[["expected", "found", "scored", "unscored", "missing"]].iloc[
        0
    ].tolist() == [12, 9, 8, 1, 3]
    assert (
        counts[["errored", "hit_limit", "invalidated", "stopped_early"]]
        .eq(0)
        .all(axis=None)
    )
    _adds_up(counts)


def test_helm_instance_without_the_stat_is_unscored(tmp_path):
    run = write_helm_run(tmp_path, "mmlu:subject=anatomy", "openai/gpt2",
                         "exact_match", {"test": np.ones((6, 2))}, trials=2)  # fmt: skip
    f = run / "per_instance_stats.json"
    entries = json.loads(f.read_text())
    # id1's second trial lacks the stat; id4 is gone from the file
    entries[3]["stats"] = entries[3]["stats"][:1]
    f.write_text(json.dumps([e for e in entries if e["instance_id"] != "id4"]))
    with pytest.warns(evalci.EvalciWarning, match="holds 5 instances"):
        df = read_helm(run)
    assert df.exact_match.isna().sum() == 1
    counts = sample_counts(df)
    assert counts[["split", "expected", "found", "scored", "unscored", "missing"]].iloc[
        0
    ].tolist() == ["test", 6, 5, 4, 1, 1]
    _adds_up(counts)


def test_every_reader_gives_the_same_keys(tmp_path):
    write_lm_run(tmp_path / "lm", "arc_easy", 4)
    helm = write_helm_run(tmp_path / "helm", "mmlu", "openai/gpt2", "exact_match",
                          {"test": np.ones((3, 1))})  # fmt: skip
    table = tmp_path / "t.csv"
    table.write_text("q,y\n0,1\n1,0\n")
    frames = [read_lm_eval(tmp_path / "lm"), read_helm(helm),
              read_jsonl(table, input="q", value="y")]  # fmt: skip
    keys = list(evalci.io.readers.SAMPLE_KEYS)
    for df in frames:
        assert [list(r) for r in df.attrs["evalci_samples"]] == [keys]
        _adds_up(sample_counts(df).dropna(subset=["expected"]))

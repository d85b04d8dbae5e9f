"""Readers of eval-framework logs, on small files in the real formats.

Every file is written here, field by field as the framework writes it (the
source each structure is copied from is named at its writer). The expected
tables are built from the arrays the files were written from, not by the
reader, so a reader that drops, reorders or mis-maps a value fails.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalci
from evalci.io import inspect as inspect_reader
from evalci.io.readers import read_helm, read_inspect, read_jsonl, read_lm_eval
from logs import (
    DATE,
    inspect_header,
    inspect_sample,
    inspect_spec,
    lm_mc_line,
    lm_results,
    write_eval,
    write_lm,
)

LETTER = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def digest(folder: Path) -> dict:
    """Bytes and mtimes of every file below folder (to check nothing moved)."""
    return {
        p: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --------------------------------------------------------------------------
# Inspect AI: inspect_ai 0.3.x, log/_log.py (EvalLog, EvalSpec, EvalSample),
# scorer/_metric.py (Score), log/_recorders/eval.py (the .eval zip layout)
# --------------------------------------------------------------------------


def write_inspect_json(path: Path, spec: dict, samples: list[dict]):
    """The .json format: the whole EvalLog, samples included."""
    log = inspect_header(spec, len(samples)) | {"samples": samples}
    path.write_text(json.dumps(log, indent=2))


def letters(seed: int, n: int, k: int) -> np.ndarray:
    return np.random.default_rng(seed).choice(list("CIPN"), size=(n, k))


@pytest.fixture
def two_logs(tmp_path):
    """gpt-4o as .eval, claude as .json; 12 inputs x 3 epochs each."""
    grids = {
        "openai/gpt-4o": letters(1, 12, 3),
        "anthropic/claude-3-5": letters(2, 12, 3),
    }
    for (model, grid), ext in zip(grids.items(), (".eval", ".json"), strict=True):
        samples = [
            inspect_sample(i, e + 1, {"choice": grid[i, e]})
            for e in range(3)
            for i in range(12)
        ]
        spec = inspect_spec(model, "gpqa", 3)
        # the name Inspect gives a log: {created}_{task}_{id}
        f = tmp_path / f"2025-03-04T10-11-12+00-00_gpqa_{model[:5]}{ext}"
        (write_eval if ext == ".eval" else write_inspect_json)(f, spec, samples)
    # the manifest write_log_dir_manifest leaves in a log dir: not a log
    (tmp_path / "logs.json").write_text(json.dumps({f.name: {"version": 2}}))
    return tmp_path, grids


@pytest.fixture
def plain(monkeypatch):
    """Force the json + zipfile reader even where inspect_ai is installed."""
    monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: None)


def expected_inspect(grids: dict) -> pd.DataFrame:
    rows = [
        (i, e + 1, model, LETTER[str(g[i, e])])
        for model, g in grids.items()
        for i in range(g.shape[0])
        for e in range(g.shape[1])
    ]
    out = pd.DataFrame(rows, columns=["input", "run", "system", "choice"])
    return out.sort_values(["system", "input", "run"], ignore_index=True)


def test_inspect_two_formats_two_systems(two_logs, plain):
    folder, grids = two_logs
    df = read_inspect(folder)
    assert df.shape == (2 * 12 * 3, 7)
    assert list(df.columns) == [
        "input",
        "run",
        "system",
        "choice",
        "task",
        "target",
        "log_file",
    ]
    assert df["input"].dtype == "int64" and df["run"].dtype == "int64"
    assert df["choice"].dtype == "float64"
    pd.testing.assert_frame_equal(df.iloc[:, :4], expected_inspect(grids))
    assert set(df.task) == {"gpqa"} and set(df.target) == {"B"}
    assert sorted(df.run.unique()) == [1, 2, 3]  # epochs, from 1


def test_inspect_paths_list_and_glob(two_logs, plain):
    folder, grids = two_logs
    by_list = read_inspect(sorted(folder.glob("2025*")))
    by_glob = read_inspect(str(folder / "*gpqa*"))
    pd.testing.assert_frame_equal(by_list, by_glob)
    one = read_inspect(next(folder.glob("*.eval")))
    assert set(one.system) == {"openai/gpt-4o"} and len(one) == 36


def test_inspect_files_untouched(two_logs, plain):
    folder, _ = two_logs
    before = digest(folder)
    read_inspect(folder)
    assert digest(folder) == before


@pytest.mark.parametrize(
    "value, expected",
    [
        ("C", 1.0),
        ("I", 0.0),
        ("P", 0.5),
        ("N", 0.0),
        (True, 1.0),
        (False, 0.0),
        (1, 1.0),
        (0.25, 0.25),
        ("yes", 1.0),
        ("TRUE", 1.0),
        ("No", 0.0),
        ("false", 0.0),
        ("0.75", 0.75),
        ("-2", -2.0),
    ],
)
def test_inspect_value_mapping(tmp_path, plain, value, expected):
    # expected values: inspect_ai scorer/_metric.py value_to_float (read, and
    # checked against the function itself in test_value_mapping_is_inspects)
    samples = [inspect_sample(i, 1, {"s": value if i == 0 else "C"}) for i in range(2)]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    assert read_inspect(tmp_path / "a.eval")["s"].tolist() == [expected, 1.0]


@pytest.mark.parametrize("value", ["correct", "incorrect", "c", "nan", [1, 0]])
def test_inspect_unmappable_value_raises(tmp_path, plain, value):
    # Inspect logs a warning and counts these 0; the reader refuses them.
    samples = [inspect_sample(7, 2, {"s": value})]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    with pytest.raises(ValueError, match=r"a\.eval, sample 7 epoch 2, scorer 's'"):
        read_inspect(tmp_path / "a.eval")


def test_inspect_dict_score_and_scorer(tmp_path, plain):
    samples = [
        inspect_sample(
            f"q{i}",
            1,
            {
                "match": {"acc": "C" if i else "I", "f1": 0.5 * i, "extra": None},
                "judge": "P",
            },
        )
        for i in range(3)
    ]
    write_inspect_json(tmp_path / "a.json", inspect_spec("m", "t", 1), samples)
    df = read_inspect(tmp_path / "a.json")
    assert pd.api.types.is_string_dtype(df["input"])  # string ids stay strings
    assert df["match_acc"].tolist() == [0.0, 1.0, 1.0]
    assert df["match_f1"].tolist() == [0.0, 0.5, 1.0]
    assert df["match_extra"].isna().all()
    assert df["judge"].tolist() == [0.5] * 3
    only = read_inspect(tmp_path / "a.json", scorer="judge")
    assert [c for c in only.columns if c not in ("task", "target", "log_file")] == [
        "input",
        "run",
        "system",
        "judge",
    ]
    with pytest.raises(ValueError, match="`scorer`: no sample .* 'nope'"):
        read_inspect(tmp_path / "a.json", scorer="nope")


def test_inspect_errored_sample_is_nan(tmp_path, plain):
    samples = [inspect_sample(0, 1, {"s": "C"}), inspect_sample(1, 1, None)]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    assert read_inspect(tmp_path / "a.eval")["s"].tolist()[0] == 1.0
    assert np.isnan(read_inspect(tmp_path / "a.eval")["s"].tolist()[1])


def test_inspect_in_progress_eval_reads_journal(tmp_path, plain):
    samples = [inspect_sample(i, 1, {"s": "C"}) for i in range(3)]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples, header=False)
    with pytest.warns(evalci.EvalciWarning, match="status is 'started'"):
        df = read_inspect(tmp_path / "a.eval")
    assert df.shape[0] == 3 and set(df.system) == {"m"}


def test_inspect_errors(tmp_path, plain):
    samples = [inspect_sample(0, 1, {"s": "C"})]
    write_eval(tmp_path / "good.eval", inspect_spec("m", "t", 1), samples)
    raw = (tmp_path / "good.eval").read_bytes()
    (tmp_path / "cut.eval").write_bytes(raw[: len(raw) // 3])
    with pytest.raises(ValueError, match=r"cut\.eval is not a zip archive"):
        read_inspect(tmp_path / "cut.eval")
    (tmp_path / "bad.json").write_text('{"version": 2, "eval": {')
    with pytest.raises(ValueError, match=r"bad\.json is not valid JSON"):
        read_inspect(tmp_path / "bad.json")
    spec = inspect_spec("m", "t", 1)
    del spec["model"]
    write_inspect_json(tmp_path / "nomodel.json", spec, samples)
    with pytest.raises(ValueError, match=r"nomodel\.json: the required field `model`"):
        read_inspect(tmp_path / "nomodel.json")
    bad = inspect_sample(0, 1, {"s": "C"})
    del bad["epoch"]
    write_eval(tmp_path / "noepoch.eval", inspect_spec("m", "t", 1), [])
    with zipfile.ZipFile(tmp_path / "noepoch.eval", "a") as z:
        z.writestr("samples/0_epoch_1.json", json.dumps(bad))
    with pytest.raises(ValueError, match=r"noepoch\.eval: the required field `epoch`"):
        read_inspect(tmp_path / "noepoch.eval")
    with zipfile.ZipFile(tmp_path / "empty.eval", "w") as z:
        z.writestr("other.json", "{}")
    with pytest.raises(ValueError, match="neither header.json nor _journal"):
        read_inspect(tmp_path / "empty.eval")
    with pytest.raises(ValueError, match="does not exist"):
        read_inspect(tmp_path / "missing.eval")
    (tmp_path / "log.txt").write_text("x")
    with pytest.raises(ValueError, match=r"ends in \.eval or \.json"):
        read_inspect(tmp_path / "log.txt")
    with pytest.raises(ValueError, match="no file matches"):
        read_inspect(str(tmp_path / "nothing*.eval"))


def test_inspect_duplicate_rows_refused(tmp_path, plain):
    samples = [inspect_sample(0, 1, {"s": "C"})]
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 1), samples)
    # two eval() runs of one task (their own task_id), not a retry
    write_eval(
        tmp_path / "b.eval", inspect_spec("m", "t", 1) | {"task_id": "U"}, samples
    )
    with pytest.raises(
        ValueError,
        match=r"task 't' of m is in 2 logs that are not attempts at one run \(their "
        r"eval\.task_id differ: T3sK1d in .*a\.eval, U in .*b\.eval\), and both "
        r"hold sample 0 epoch 1",
    ):
        read_inspect(tmp_path)


def test_inspect_feeds_cluster_ci(two_logs, plain):
    folder, grids = two_logs
    got = evalci.cluster_ci(
        read_inspect(folder),
        "choice",
        cluster="input",
        by="system",
        rng=0,
        n_resamples=500,
    ).to_frame()
    # the same data typed in by hand, rows shuffled: the reader's table must
    # give the very same intervals as the caller's own table
    ref = expected_inspect(grids).sample(frac=1, random_state=3)
    want = evalci.cluster_ci(
        ref, "choice", cluster="input", by="system", rng=0, n_resamples=500
    ).to_frame()
    pd.testing.assert_frame_equal(got, want)


# --------------------------------------------------------------------------
# lm-evaluation-harness 0.4: evaluator.py (the logged sample dict),
# loggers/evaluation_tracker.py (file names, sanitize_list, results file)
# --------------------------------------------------------------------------


def lm_gen_lines(doc_id: int, answers: list[str], target: str, filters) -> list[dict]:
    """A generation sample with K = len(answers) repeats, one line per filter."""
    out = []
    for name, pick in filters.items():
        chosen = pick(answers)
        out.append(
            {
                "doc_id": doc_id,
                "doc": {"question": f"q{doc_id}", "answer": f"#### {target}"},
                "target": target,
                "arguments": {
                    "gen_args_0": {
                        "arg_0": f"Question: q{doc_id}\nAnswer:",
                        "arg_1": {"until": ["Question:"], "do_sample": True},
                    }
                },
                "resps": [[f"The answer is {a}." for a in answers]],
                "filtered_resps": [chosen],
                "filter": name,
                "metrics": ["exact_match"],
                "doc_hash": "d" * 64,
                "prompt_hash": "p" * 64,
                "target_hash": "t" * 64,
                "exact_match": float(chosen == target),
            }
        )
    return out


@pytest.fixture
def lm_two_models(tmp_path):
    """--output_path with one folder per model, arc_easy, 12 docs each."""
    rng = np.random.default_rng(5)
    lls, gold = rng.normal(size=(2, 12, 3)), rng.integers(0, 3, 12)
    for m, name in enumerate(["EleutherAI/pythia-160m", "EleutherAI/pythia-410m"]):
        lines = [lm_mc_line(i, list(lls[m, i]), int(gold[i])) for i in range(12)]
        res = lm_results("arc_easy", name, f"pretrained={name},dtype=float32")
        write_lm(tmp_path / name.replace("/", "__"), "arc_easy", lines, res)
    acc = (lls.argmax(axis=2) == gold).astype(float)
    return tmp_path, acc


def test_lm_eval_multiple_choice_two_models(lm_two_models):
    folder, acc = lm_two_models
    before = digest(folder)
    df = read_lm_eval(folder)
    assert digest(folder) == before
    assert list(df.columns) == [
        "input", "run", "system", "acc", "acc_norm", "task", "target", "n_resps",
        "log_file",
    ]  # fmt: skip
    assert df.shape == (24, 9) and set(df.run) == {0} and set(df.n_resps) == {1}
    assert df["input"].dtype == "int64" and df["n_resps"].dtype == "int64"
    assert sorted(set(df.system)) == [
        "EleutherAI/pythia-160m",
        "EleutherAI/pythia-410m",
    ]
    for m, name in enumerate(["EleutherAI/pythia-160m", "EleutherAI/pythia-410m"]):
        one = df[df.system == name]
        assert one["input"].tolist() == list(range(12))
        assert one["acc"].tolist() == acc[m].tolist()
    assert set(df.task) == {"arc_easy"}
    r = evalci.cluster_ci(
        df, "acc", cluster="input", by="system", rng=0, n_resamples=300
    )
    assert r.to_frame()["estimate"].tolist() == pytest.approx(acc.mean(1).tolist())


@pytest.mark.parametrize(
    "results, system",
    [
        (lm_results("t", "org/a", "pretrained=org/b"), "org/a"),
        (lm_results("t", None, "peft=org/lora,pretrained=org/base"), "org/lora"),
        (
            lm_results("t", None, {"model": "gpt-4o-mini", "base_url": "x"}),
            "gpt-4o-mini",
        ),
        (lm_results("t", "", "dtype=float32"), "EleutherAI__pythia-160m"),
        (None, "my-model-folder"),
    ],
)
def test_lm_eval_system(tmp_path, results, system):
    # the order of model_args keys is lm-eval's _get_model_name
    lines = [lm_mc_line(i, [0.0, 1.0, -1.0], 1) for i in range(2)]
    write_lm(tmp_path / "my-model-folder", "t", lines, results)
    assert set(read_lm_eval(tmp_path)["system"]) == {system}


def test_lm_eval_filters_and_repeats(tmp_path):
    # gsm8k-cot-self-consistency style: repeats=4, filters take_first and maj@4
    answers = {
        0: ["3", "3", "4", "3"],
        1: ["7", "8", "8", "8"],
        2: ["1", "2", "3", "1"],
    }
    targets = {0: "3", 1: "7", 2: "2"}
    filters = {
        "score-first": lambda a: a[0],
        "maj@4": lambda a: max(a, key=a.count),
    }
    lines = [
        x for i in range(3) for x in lm_gen_lines(i, answers[i], targets[i], filters)
    ]
    write_lm(tmp_path / "m", "gsm8k_cot", lines, lm_results("gsm8k_cot", "m", ""))
    with pytest.warns(evalci.EvalciWarning, match="holds 4 responses"):
        df = read_lm_eval(tmp_path)
    assert list(df.columns[3:5]) == ["exact_match,score-first", "exact_match,maj@4"]
    for name, pick in filters.items():
        want = [float(pick(answers[i]) == targets[i]) for i in range(3)]
        assert df[f"exact_match,{name}"].tolist() == want  # [1, 1, 0] and [1, 0, 0]
    with pytest.warns(evalci.EvalciWarning):
        one = read_lm_eval(tmp_path / "m", filter="maj@4")
    assert "exact_match" in one and one["exact_match"].tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"`filter`: .* no filter 'x'.*'maj@4'"):
        read_lm_eval(tmp_path, filter="x")

    def score(responses, sample):
        return float(responses[0] == f"The answer is {sample['target']}.")

    runs = read_lm_eval(tmp_path, score=score)
    assert runs.shape[0] == 12 and runs["run"].tolist() == [0, 1, 2, 3] * 3
    want = [float(a == targets[i]) for i in range(3) for a in answers[i]]
    assert runs["score"].tolist() == want and set(runs.n_resps) == {4}


def test_lm_eval_task_and_errors(tmp_path, lm_two_models):
    folder, _ = lm_two_models
    assert len(read_lm_eval(folder, task="arc_easy")) == 24
    with pytest.raises(ValueError, match="`task`: no samples file of task 'mmlu'"):
        read_lm_eval(folder, task="mmlu")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "samples_broken.jsonl").write_text("{}")
    with pytest.raises(ValueError, match=r"samples_broken\.jsonl: an lm-eval samples"):
        read_lm_eval(tmp_path / "x" / "samples_broken.jsonl")
    good = json.dumps(lm_mc_line(0, [0.0, 1.0, 2.0], 1))
    f = tmp_path / "y" / f"samples_t_{DATE}.jsonl"
    f.parent.mkdir()
    f.write_text(good + "\n" + good[:40] + "\n")
    with pytest.raises(ValueError, match=r"samples_t_.*\(line 2\) is not valid JSON"):
        read_lm_eval(f)
    line = lm_mc_line(0, [0.0, 1.0, 2.0], 1)
    del line["doc_id"]
    f.write_text(json.dumps(line))
    with pytest.raises(ValueError, match="the required field `doc_id` is missing"):
        read_lm_eval(f)
    (tmp_path / "z").mkdir()
    with pytest.raises(ValueError, match="holds no lm-eval samples file"):
        read_lm_eval(tmp_path / "z")


def test_lm_eval_corpus_metric_left_out(tmp_path):
    lines = lm_gen_lines(0, ["a"], "a", {"none": lambda a: a[0]})
    lines += lm_gen_lines(1, ["b"], "a", {"none": lambda a: a[0]})
    for x in lines:  # bleu is aggregated over the corpus: (refs, preds) per doc
        x["metrics"].append("bleu")
        x["bleu"] = [[x["target"]], x["filtered_resps"][0]]
    write_lm(tmp_path / "m", "wmt", lines, None)
    with pytest.warns(evalci.EvalciWarning, match=r"\['bleu'\] hold no number"):
        df = read_lm_eval(tmp_path)
    assert "bleu" not in df and df["exact_match"].tolist() == [1.0, 0.0]


# --------------------------------------------------------------------------
# HELM (crfm-helm 0.5): benchmark/metrics/metric.py PerInstanceStats,
# statistic.py Stat, metric_name.py MetricName, run_spec.py RunSpec; written
# by runner.py with asdict_without_nones (None fields left out)
# --------------------------------------------------------------------------


def helm_stat(name: str, xs: list[float], split="test", perturbation=None) -> dict:
    """A Stat after Stat.add(x) for each x (population variance)."""
    xs_ = np.asarray(xs, float)
    mname = {"name": name, "split": split}
    if perturbation is not None:
        mname["perturbation"] = perturbation
    return {
        "name": mname,
        "count": len(xs),
        "sum": float(xs_.sum()),
        "sum_squared": float((xs_**2).sum()),
        "min": float(xs_.min()),
        "max": float(xs_.max()),
        "mean": float(xs_.mean()),
        "variance": float(xs_.var()),
        "stddev": float(xs_.std()),
    }


TYPO = {
    "name": "typo",
    "robustness": True,
    "fairness": False,
    "computed_on": "perturbed",
    "prob": 0.1,
}


def helm_entry(iid: str, trial: int, em: list[float], perturbation=None) -> dict:
    e = {
        "instance_id": iid,
        "train_trial_index": trial,
        "stats": [
            helm_stat("num_prompt_tokens", [412.0], perturbation=perturbation),
            helm_stat("exact_match", em, perturbation=perturbation),
            helm_stat("quasi_exact_match", em, perturbation=perturbation),
        ],
    }
    if perturbation is not None:
        e["perturbation"] = perturbation
    return e


def helm_run_spec(name: str, model: str) -> dict:
    return {
        "name": name,
        "scenario_spec": {
            "class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
            "args": {"subject": "anatomy"},
        },
        "adapter_spec": {
            "method": "multiple_choice_joint",
            "global_prefix": "",
            "instructions": "The following are multiple choice questions.",
            "input_prefix": "Question: ",
            "output_prefix": "Answer: ",
            "max_train_instances": 5,
            "num_outputs": 1,
            "num_train_trials": 3,
            "num_trials": 1,
            "model_deployment": model.replace("/", "-deploy/"),
            "model": model,
            "temperature": 0.0,
            "max_tokens": 1,
        },
        "metric_specs": [
            {
                "class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                "args": {"names": ["exact_match", "quasi_exact_match"]},
            }
        ],
        "data_augmenter_spec": {
            "perturbation_specs": [],
            "should_augment_train_instances": False,
        },
        "groups": ["mmlu"],
    }


def write_helm(folder: Path, model: str, em: np.ndarray, spec=True, typo=None):
    """em: (instances, trials) of exact_match; typo: the same under a typo."""
    folder.mkdir(parents=True)
    entries = []
    for i in range(em.shape[0]):
        for t in range(em.shape[1]):
            entries.append(helm_entry(f"id{100 + i}", t, [em[i, t]]))
            if typo is not None:
                entries.append(helm_entry(f"id{100 + i}", t, [typo[i, t]], TYPO))
    (folder / "per_instance_stats.json").write_text(json.dumps(entries, indent=2))
    if spec:
        (folder / "run_spec.json").write_text(
            json.dumps(helm_run_spec(folder.name, model))
        )
    (folder / "stats.json").write_text("[]")
    return folder


@pytest.fixture
def helm_suite(tmp_path):
    rng = np.random.default_rng(9)
    ems = {
        m: (rng.random((12, 3)) < 0.6).astype(float)
        for m in ("openai/gpt2", "meta/llama-7b")
    }
    for m, em in ems.items():
        write_helm(
            tmp_path / "runs" / "v1" / f"mmlu:subject=anatomy,model={m.replace('/', '_')}",
            m, em, typo=1 - em,
        )  # fmt: skip
    return tmp_path / "runs", ems


def test_helm_suite_two_models(helm_suite):
    folder, ems = helm_suite
    before = digest(folder)
    df = read_helm(folder)
    assert digest(folder) == before
    assert list(df.columns) == [
        "input", "run", "system", "exact_match", "exact_match_sum",
        "exact_match_count", "split", "task", "log_file",
        # issue 36: the adapter's settings the run spec records, appended
        "adapter_method", "adapter_instructions", "adapter_max_train_instances",
        "adapter_num_outputs", "adapter_temperature", "adapter_model_deployment",
    ]  # fmt: skip
    assert df.shape == (2 * 12 * 3, 9 + 6)
    for m, em in ems.items():
        one = df[df.system == m]
        assert one["input"].tolist() == [
            f"id{100 + i}" for i in range(12) for _ in range(3)
        ]
        assert one["run"].tolist() == [0, 1, 2] * 12
        assert one["exact_match"].tolist() == em.ravel().tolist()  # unperturbed only
        assert set(one.task) == {"mmlu:subject=anatomy"}  # the model left out
    assert set(df.split) == {"test"} and set(df.exact_match_count) == {1.0}
    r = evalci.cluster_ci(df, "exact_match", cluster="input", by="system", rng=0,
                          n_resamples=300)  # fmt: skip
    want = [ems[s].mean() for s in sorted(ems)]
    assert r.to_frame()["estimate"].tolist() == pytest.approx(want)


def test_helm_perturbation_stat_and_file(helm_suite):
    folder, ems = helm_suite
    typo = read_helm(folder, perturbation="typo")
    for m, em in ems.items():
        assert (
            typo[typo.system == m]["exact_match"].tolist() == (1 - em).ravel().tolist()
        )
    run = next(folder.rglob("per_instance_stats.json"))
    q = read_helm(run, stat="quasi_exact_match")  # the file itself
    assert "quasi_exact_match" in q and len(q) == 36
    pd.testing.assert_frame_equal(read_helm(run.parent), read_helm(run))
    with pytest.raises(
        ValueError, match="`stat`: .* no stat named 'f1'.*'exact_match'"
    ):
        read_helm(run, stat="f1")
    with pytest.raises(ValueError, match="no instance under perturbation 'dialect'"):
        read_helm(run, perturbation="dialect")


def test_helm_counts_and_fallbacks(tmp_path):
    # three sampled completions averaged into each instance's stat: sum/count
    # are successes/trials, and the counts form gives the mean of the means
    f = tmp_path / "run" / "per_instance_stats.json"
    f.parent.mkdir()
    xs = [[1, 0, 1], [0, 0, 0], [1, 1, 1]] * 4
    f.write_text(json.dumps([helm_entry(f"i{j}", 0, x) for j, x in enumerate(xs)]))
    df = read_helm(f)
    assert set(df.system) == {"run"} and set(df.task) == {"run"}  # no run_spec.json
    assert df["exact_match_count"].tolist() == [3.0] * 12
    srt = sorted(range(12), key=lambda j: f"i{j}")
    assert df["exact_match_sum"].tolist() == [float(sum(xs[j])) for j in srt]
    r = evalci.cluster_ci(df, successes="exact_match_sum", trials="exact_match_count",
                          cluster="input", rng=0, n_resamples=200)  # fmt: skip
    assert r.estimate == pytest.approx(np.mean(xs))


def test_helm_errors(tmp_path):
    f = tmp_path / "r" / "per_instance_stats.json"
    f.parent.mkdir()
    f.write_text(json.dumps({"instance_id": "x"}))
    with pytest.raises(ValueError, match="per_instance_stats.json holds a JSON list"):
        read_helm(f)
    e = helm_entry("i0", 0, [1.0])
    del e["train_trial_index"]
    f.write_text(json.dumps([e]))
    with pytest.raises(ValueError, match="the required field `train_trial_index`"):
        read_helm(f)
    e = helm_entry("i0", 0, [1.0])
    e["stats"].append(helm_stat("exact_match", [0.0], split="valid"))
    f.write_text(json.dumps([e]))
    # several splits: test (what HELM reports) by default, with a note
    with pytest.warns(evalci.EvalciWarning, match="holds the 'test' split"):
        assert read_helm(f)["exact_match"].tolist() == [1.0]
    assert read_helm(f, split="valid")["exact_match"].tolist() == [0.0]
    with pytest.raises(ValueError, match=r"2 stats are named 'exact_match'.*`split=`"):
        read_helm(f, split="all")
    f.write_text("[{")
    with pytest.raises(ValueError, match="per_instance_stats.json is not valid JSON"):
        read_helm(f)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no per_instance_stats.json"):
        read_helm(tmp_path / "empty")


# --------------------------------------------------------------------------
# generic JSON Lines / CSV / Parquet
# --------------------------------------------------------------------------


@pytest.fixture
def generic(tmp_path):
    """The gpqa example as the three formats, rows shuffled, runs in order."""
    df = evalci.load_example().sample(frac=1, random_state=1)
    df = df.sort_values("run", kind="stable")  # file order = run order
    f = tmp_path / "gpqa.jsonl"
    with open(f, "w") as fh:
        for r in df.itertuples():
            row = {"item": {"id": r.input_id}, "model": r.system, "ok": bool(r.correct)}
            fh.write(json.dumps(row | {"trial": int(r.run), "note": "x"}) + "\n")
    df.to_csv(tmp_path / "gpqa.csv", index=False)
    return tmp_path, df


def expected_generic(df: pd.DataFrame) -> pd.DataFrame:
    out = df.rename(columns={"input_id": "input"})[
        ["input", "run", "system", "correct"]
    ]
    out = out.astype({"correct": "float64"})
    return out.sort_values(["system", "input", "run"], ignore_index=True)


def test_jsonl_nested_and_runs_in_file_order(generic):
    folder, df = generic
    before = digest(folder)
    got = read_jsonl(folder / "gpqa.jsonl", input="item.id", value="ok", system="model",
                     columns={"note": "comment"})  # fmt: skip
    assert digest(folder) == before
    assert list(got.columns) == ["input", "run", "system", "ok", "comment"]
    want = expected_generic(df).rename(columns={"correct": "ok"})
    counted = want.assign(run=want.run - 1)  # the example numbers runs from 1
    pd.testing.assert_frame_equal(got.iloc[:, :4], counted)  # file order = trial
    named = read_jsonl(folder / "gpqa.jsonl", input="item.id", value="ok",
                       system="model", run="trial")  # fmt: skip
    pd.testing.assert_frame_equal(named, want)
    with pytest.raises(ValueError, match=r"\('gpqa', '\w+', 1\) occurs more than"):
        # no system column: both systems' rows pooled under the file's stem
        read_jsonl(folder / "gpqa.jsonl", input="item.id", value="ok", run="trial")
    one = df[df.system == df.system.iloc[0]]
    one.to_csv(folder / "one.csv", index=False)
    stem = read_jsonl(folder / "one.csv", input="input_id", value="correct")
    assert set(stem["system"]) == {"one"} and len(stem) == 990
    with pytest.raises(ValueError, match="`columns`: .* named 'system' would over"):
        read_jsonl(folder / "one.csv", input="input_id", value="correct",
                   columns=["system"])  # fmt: skip


def test_csv_parquet_and_format(generic, tmp_path):
    folder, df = generic
    want = expected_generic(df)
    kw = dict(input="input_id", value="correct", run="run", system="system")
    got = read_jsonl(folder / "gpqa.csv", **kw)
    pd.testing.assert_frame_equal(got, want)
    (folder / "gpqa.txt").write_text((folder / "gpqa.csv").read_text())
    pd.testing.assert_frame_equal(
        read_jsonl(folder / "gpqa.txt", format="csv", **kw), want
    )
    pytest.importorskip("pyarrow")
    df.to_parquet(folder / "gpqa.parquet")
    pd.testing.assert_frame_equal(read_jsonl(folder / "gpqa.parquet", **kw), want)
    r = evalci.cluster_ci(got, "correct", cluster="input", by="system", rng=0,
                          n_resamples=300)  # fmt: skip
    ref = evalci.cluster_ci(evalci.load_example(), "correct", cluster="input_id",
                            by="system", rng=0, n_resamples=300)  # fmt: skip
    pd.testing.assert_frame_equal(r.to_frame(), ref.to_frame())


def test_jsonl_errors(generic):
    folder, _ = generic
    kw = dict(input="input_id", value="correct")
    with pytest.raises(ValueError, match=r"`value`: .*gpqa\.csv has no column 'score'"):
        read_jsonl(folder / "gpqa.csv", input="input_id", value="score")
    with pytest.raises(ValueError, match="`system`: .* no column 'model'"):
        read_jsonl(folder / "gpqa.csv", system="model", **kw)
    with pytest.raises(ValueError, match=r"cannot tell the format from '\.txt'"):
        (folder / "a.txt").write_text("x")
        read_jsonl(folder / "a.txt", **kw)
    with pytest.raises(
        ValueError, match="`format` must be 'jsonl', 'csv' or 'parquet'"
    ):
        read_jsonl(folder / "gpqa.csv", format="xlsx", **kw)
    (folder / "t.csv").write_text("input_id,correct\nq1,1\nq2,yes\n")
    with pytest.raises(
        ValueError, match=r"column 'correct' of .*t\.csv .*'yes', line 3"
    ):
        read_jsonl(folder / "t.csv", **kw)
    (folder / "t.jsonl").write_text('{"input_id": 1, "correct": 1}\n{"input_id": 2,\n')
    with pytest.raises(ValueError, match=r"t\.jsonl \(line 2\) is not valid JSON"):
        read_jsonl(folder / "t.jsonl", **kw)
    (folder / "n.csv").write_text("input_id,correct\nq1,1\n,0\n")
    with pytest.raises(ValueError, match=r"`input`: column 'input_id' .* \(line 3\)"):
        read_jsonl(folder / "n.csv", **kw)
    (folder / "d.csv").write_text("input_id,run,correct\nq1,0,1\nq1,0,0\n")
    with pytest.raises(ValueError, match="occurs more than once"):
        read_jsonl(folder / "d.csv", run="run", **kw)


def test_inspect_cancelled_log_warns(tmp_path, plain):
    samples = [inspect_sample(i, 1, {"s": "C"}) for i in range(2)]
    spec = inspect_spec("m", "t", 1)
    log = inspect_header(spec, 5, status="cancelled") | {"samples": samples}
    (tmp_path / "a.json").write_text(json.dumps(log))
    with pytest.warns(evalci.EvalciWarning, match="'cancelled'.* the 2 samples"):
        assert len(read_inspect(tmp_path / "a.json")) == 2


def test_inspect_sample_order_does_not_matter(tmp_path, plain):
    # the members of a .eval are in completion order, which varies run to run
    grid = letters(4, 12, 2)
    samples = [
        inspect_sample(i, e + 1, {"s": grid[i, e]}) for i in range(12) for e in range(2)
    ]
    order = np.random.default_rng(0).permutation(len(samples))
    write_eval(tmp_path / "a.eval", inspect_spec("m", "t", 2), samples)
    write_eval(
        tmp_path / "b.eval", inspect_spec("m", "t", 2), [samples[j] for j in order]
    )
    a, b = read_inspect(tmp_path / "a.eval"), read_inspect(tmp_path / "b.eval")
    pd.testing.assert_frame_equal(
        a.drop(columns="log_file"), b.drop(columns="log_file")
    )


@settings(max_examples=30, deadline=None)
@given(
    cells=st.lists(
        st.tuples(
            st.integers(0, 6),
            st.integers(0, 3),
            st.sampled_from("ab"),
            st.floats(-1e6, 1e6),
        ),  # fmt: skip
        min_size=1,
        max_size=40,
        unique_by=lambda c: c[:3],
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_jsonl_row_order_does_not_matter(tmp_path_factory, cells, seed):
    frame = pd.DataFrame(cells, columns=["q", "r", "m", "v"])
    shuffled = frame.sample(frac=1, random_state=seed % 2**32)
    f = tmp_path_factory.mktemp("h") / "t.jsonl"
    f.write_text("".join(json.dumps(row) + "\n" for row in shuffled.to_dict("records")))
    got = read_jsonl(f, input="q", value="v", run="r", system="m")
    want = frame.rename(columns={"q": "input", "r": "run", "m": "system"})
    want = want[["input", "run", "system", "v"]].sort_values(
        ["system", "input", "run"], ignore_index=True
    )
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert got["input"].dtype == "int64" and got["v"].dtype == "float64"


def test_lm_eval_output_path_json(tmp_path):
    # --output_path out/run.json: results as run_<date>.json, samples beside it
    lines = [lm_mc_line(i, [0.0, 1.0, -1.0], 1) for i in range(3)]
    write_lm(tmp_path, "piqa", lines, None)
    res = lm_results("piqa", "org/m", "pretrained=org/m", n=3)
    (tmp_path / f"run_{DATE}.json").write_text(json.dumps(res))
    df = read_lm_eval(tmp_path / f"samples_piqa_{DATE}.jsonl")
    assert set(df.system) == {"org/m"} and df["acc"].tolist() == [1.0] * 3


def test_lm_eval_without_metrics_list(tmp_path):
    # older lm-eval versions wrote no "metrics" (nor "filter") field
    lines = [lm_mc_line(i, [0.0, -1.0, 1.0], i % 3) for i in range(3)]
    for x in lines:
        del x["metrics"], x["filter"]
    write_lm(tmp_path / "m", "arc", lines, None)
    df = read_lm_eval(tmp_path)
    assert df["acc"].tolist() == [0.0, 0.0, 1.0] and "acc_norm" in df


@pytest.mark.parametrize(
    ("cell", "shown"), [("a", "'a'"), ("1.5", "1.5"), ("-", "'-'")]
)
def test_a_run_that_is_not_a_whole_number_is_refused_naming_file_line_column(
    tmp_path, cell, shown
):
    # before: 'a' gave "invalid literal for int() with base 10: 'a'" (no file,
    # no column) and 1.5 was truncated to 1 without a word
    f = tmp_path / "r.csv"
    f.write_text(f"input_id,trial,correct\n1,0,1\n1,{cell},0\n2,0,1\n")
    with pytest.raises(ValueError) as e:
        read_jsonl(f, input="input_id", value="correct", run="trial")
    msg = str(e.value)
    assert "`run`" in msg and "'trial'" in msg and str(f) in msg
    assert f"holds {shown} (line 3)" in msg and "np." not in msg


def test_a_non_numeric_value_names_its_line(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text('{"input_id": 1, "correct": 1}\n{"input_id": 2, "correct": "zz"}\n')
    with pytest.raises(ValueError, match=r"'correct' .* \('zz', line 2\)"):
        read_jsonl(f, input="input_id", value="correct")


def test_a_bad_row_is_named_by_its_true_line(tmp_path):
    # a blank JSON line and a CSV cell with a line break: the line a reader of
    # the file finds, not the row's index plus one
    f = tmp_path / "r.jsonl"
    f.write_text('{"q": 1, "run": 0, "ok": 1}\n\n{"q": 1, "run": 1.5, "ok": 1}\n')
    with pytest.raises(
        ValueError, match=r"column 'run' of .*r\.jsonl holds 1\.5 \(line 3\)"
    ):
        read_jsonl(f, input="q", value="ok", run="run")
    g = tmp_path / "r.csv"
    g.write_text('q,note,run,ok\n1,"two\nlines",0,1\n1,x,a,0\n')
    with pytest.raises(
        ValueError, match=r"column 'run' of .*r\.csv holds 'a' \(line 4\)"
    ):
        read_jsonl(g, input="q", value="ok", run="run")
    g.write_text("q,run,ok\n1,0,1\n1,1,1\n")  # whole numbers as a CSV's text
    assert read_jsonl(g, input="q", value="ok", run="run").run.tolist() == [0, 1]

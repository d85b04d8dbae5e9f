"""The readers keep the facets a log records (issue 36): Inspect's model
roles, grader and seed; lm-eval's shots, seeds and chat template; HELM's
adapter settings. Each column is appended after ``log_file`` only when a log
read records it, and a log that does not has missing values in it.

Fields as the frameworks write them: inspect_ai ``log/_log.py``
(``EvalSpec.model_roles``, ``EvalScorer``, ``model_generate_config``),
``_util/registry.py`` (a ``Model`` argument logged as a ``ModelDict``);
lm-eval ``evaluator.py`` (``config`` seeds), ``loggers/evaluation_tracker.py``
(``chat_template_sha``, ``fewshot_as_multiturn``); HELM
``adaptation/adapter_spec.py``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from evalci.io import inspect as inspect_reader
from evalci.io.readers import read_helm, read_inspect, read_lm_eval
from logs import (
    helm_run,
    inspect_graded,
    inspect_header,
    inspect_role,
    inspect_sample,
    inspect_spec,
    lm_facets,
    lm_mc_line,
    lm_results,
    write_eval,
    write_lm,
)

INSPECT_COLUMNS = ["input", "run", "system", "choice", "task", "target", "log_file"]
LM_COLUMNS = ["input", "run", "system", "acc", "acc_norm", "task", "target",
              "n_resps", "log_file"]  # fmt: skip
HELM_COLUMNS = ["input", "run", "system", "exact_match", "exact_match_sum",
                "exact_match_count", "split", "task", "log_file"]  # fmt: skip


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture(autouse=True)
def plain(monkeypatch):
    """The json + zipfile reader, whether or not inspect_ai is installed."""
    monkeypatch.setattr(inspect_reader, "_inspect_ai", lambda: None)


def inspect_log(folder: Path, model: str, spec: dict, ext: str = ".eval") -> Path:
    samples = [inspect_sample(i, e, {"choice": "CI"[(i + e) % 2]})
               for e in (1, 2) for i in range(4)]  # fmt: skip
    f = folder / f"2025-03-04T10-11-12+00-00_gpqa_{model[:6]}{ext}"
    if ext == ".eval":
        write_eval(f, spec, samples)
    else:
        log = inspect_header(spec, len(samples)) | {"samples": samples}
        f.write_text(json.dumps(log))
    return f


def graded_spec(name: str, **kw) -> dict:
    spec = inspect_spec(name, "gpqa", 2)
    spec["model_roles"] = {
        "grader": inspect_role("anthropic/claude-3-5-sonnet"),
        "critic": inspect_role("openai/o3"),
    }
    spec["model_generate_config"] |= {"seed": 42}
    return inspect_graded(spec, **kw)


# ------------------------------------------------------------------ Inspect


@pytest.mark.parametrize("ext", [".eval", ".json"])
def test_inspect_roles_grader_and_seed(tmp_path, ext):
    f = inspect_log(tmp_path, "openai/gpt-4o", graded_spec("openai/gpt-4o"), ext)
    df = read_inspect(f)
    added = ["role_grader", "role_critic", "grader", "seed"]
    assert list(df.columns) == INSPECT_COLUMNS + added  # appended, in order
    assert df.attrs["evalci_facets"] == added
    assert set(df.role_grader) == {"anthropic/claude-3-5-sonnet"}
    assert set(df.role_critic) == {"openai/o3"}
    # model_graded_qa given no model: its model_role ("grader") names it
    assert set(df.grader) == {"anthropic/claude-3-5-sonnet"}
    assert df.seed.dtype == "Int64" and set(df.seed) == {42}
    assert len(df) == 8 and df.attrs["evalci_samples"][0]["scored"] == 8


def test_inspect_log_without_facets_has_no_facet_columns(tmp_path):
    f = inspect_log(tmp_path, "openai/gpt-4o", inspect_spec("openai/gpt-4o", "gpqa", 2))
    df = read_inspect(f)
    assert list(df.columns) == INSPECT_COLUMNS
    assert df.attrs["evalci_facets"] == []


def test_inspect_facets_missing_for_the_log_that_lacks_them(tmp_path):
    inspect_log(tmp_path, "openai/gpt-4o", graded_spec("openai/gpt-4o"))
    inspect_log(tmp_path, "mistral/large", inspect_spec("mistral/large", "gpqa", 2))
    df = read_inspect(tmp_path)
    assert list(df.columns[-4:]) == ["role_grader", "role_critic", "grader", "seed"]
    bare = df[df.system == "mistral/large"]
    graded = df[df.system == "openai/gpt-4o"]
    assert len(bare) == len(graded) == 8
    assert bare[["role_grader", "grader"]].isna().all().all()
    assert bare.seed.isna().all() and set(graded.seed) == {42}


@pytest.mark.parametrize(
    "model, want",
    [
        ("google/gemini-2.5-pro", "google/gemini-2.5-pro"),
        # a Model object argument is logged as a ModelDict
        (
            {
                "model": "google/gemini-2.5-pro",
                "config": {},
                "base_url": None,
                "model_args": {},
            },
            "google/gemini-2.5-pro",
        ),  # fmt: skip
        (["openai/o3", "google/gemini-2.5-pro"], "openai/o3, google/gemini-2.5-pro"),
    ],
)
def test_inspect_grader_named_by_the_scorer_beats_the_role(tmp_path, model, want):
    spec = graded_spec("openai/gpt-4o", model=model)
    df = read_inspect(inspect_log(tmp_path, "openai/gpt-4o", spec))
    assert set(df.grader) == {want}
    assert set(df.role_grader) == {"anthropic/claude-3-5-sonnet"}


def test_inspect_grader_from_results_params_and_grader_role(tmp_path):
    # a log without eval.scorers: the scorer's arguments in results.scores
    spec = inspect_spec("openai/gpt-4o", "gpqa", 2)
    del spec["scorers"]
    samples = [inspect_sample(i, 1, {"choice": "C"}) for i in range(3)]
    log = inspect_header(spec, 3) | {"samples": samples}
    log["results"]["scores"][0]["params"] = {"grader_model": "openai/gpt-4.1"}
    f = tmp_path / "2025-03-04T10-11-12+00-00_gpqa_x.json"
    f.write_text(json.dumps(log))
    assert set(read_inspect(f).grader) == {"openai/gpt-4.1"}
    # no scorer names one, no model_role: the `grader` role is the grader
    spec["model_roles"] = {"grader": inspect_role("openai/o3")}
    f.write_text(json.dumps(inspect_header(spec, 3) | {"samples": samples}))
    df = read_inspect(f)
    assert set(df.grader) == set(df.role_grader) == {"openai/o3"}
    assert "seed" not in df  # model_generate_config holds no seed


def test_inspect_role_of_the_wrong_type_raises(tmp_path):
    spec = inspect_spec("openai/gpt-4o", "gpqa", 2) | {"model_roles": {"grader": 3}}
    with pytest.raises(ValueError, match=r"`eval\.model_roles\.grader` is a number"):
        read_inspect(inspect_log(tmp_path, "openai/gpt-4o", spec))


def test_a_scorer_named_like_a_facet_keeps_its_column(tmp_path):
    spec = graded_spec("openai/gpt-4o")
    samples = [inspect_sample(i, 1, {"grader": "C"}) for i in range(3)]
    f = tmp_path / "2025-03-04T10-11-12+00-00_gpqa_x.eval"
    write_eval(f, spec, samples)
    with pytest.warns(UserWarning, match=r"facets \['grader'\] are not added"):
        df = read_inspect(f)
    assert df.grader.tolist() == [1.0, 1.0, 1.0]  # the score, not the model
    assert "grader" not in df.attrs["evalci_facets"]


# ------------------------------------------------------------------ lm-eval


def lm_lines(n: int = 6) -> list[dict]:
    return [lm_mc_line(i, [-1.0, -0.5 - i % 2, -2.0], i % 3) for i in range(n)]


def test_lm_eval_shots_seeds_and_chat_template(tmp_path):
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    res = lm_facets(
        lm_results("arc_easy", "m/a", "pretrained=m/a"), "arc_easy", 5, template
    )
    write_lm(tmp_path / "m__a", "arc_easy", lm_lines(), res)
    df = read_lm_eval(tmp_path)
    added = ["num_fewshot", "fewshot_seed", "random_seed", "numpy_seed",
             "torch_seed", "chat_template", "fewshot_as_multiturn"]  # fmt: skip
    assert list(df.columns) == LM_COLUMNS + added
    assert df.attrs["evalci_facets"] == added
    assert df.num_fewshot.dtype == "Int64" and set(df.num_fewshot) == {5}
    assert set(df.fewshot_seed) == {1234} and set(df.random_seed) == {0}
    assert set(df.chat_template) == {sha(template)}  # the SHA, not the text
    assert df.fewshot_as_multiturn.dtype == "boolean"
    assert df.fewshot_as_multiturn.all()


def test_lm_eval_template_text_without_its_sha_is_hashed(tmp_path):
    res = lm_results("arc_easy", "m/a", "pretrained=m/a")
    res |= {"chat_template": "chatml", "system_instruction": "Be brief."}
    write_lm(tmp_path / "m__a", "arc_easy", lm_lines(), res)
    df = read_lm_eval(tmp_path)
    assert list(df.columns) == LM_COLUMNS + ["chat_template", "system_instruction"]
    assert set(df.chat_template) == {sha("chatml")}
    assert set(df.system_instruction) == {sha("Be brief.")}


def test_lm_eval_without_the_settings_or_a_results_file(tmp_path):
    # today's builder: no num_fewshot, no seeds, chat_template null
    write_lm(tmp_path / "a", "arc_easy", lm_lines(),
             lm_results("arc_easy", "m/a", "pretrained=m/a"))  # fmt: skip
    df = read_lm_eval(tmp_path / "a")
    assert list(df.columns) == LM_COLUMNS and df.attrs["evalci_facets"] == []
    write_lm(tmp_path / "b", "arc_easy", lm_lines(), None)  # samples only
    df = read_lm_eval(tmp_path / "b")
    assert list(df.columns) == LM_COLUMNS and df.attrs["evalci_facets"] == []


def test_lm_eval_facets_missing_for_the_run_that_lacks_them(tmp_path):
    with_t = lm_facets(
        lm_results("arc_easy", "m/a", "pretrained=m/a"), "arc_easy", 0, None
    )
    write_lm(tmp_path / "a", "arc_easy", lm_lines(), with_t)
    write_lm(tmp_path / "b", "arc_easy", lm_lines(), None)
    df = read_lm_eval(tmp_path)
    # no template applied: chat_template null, so no such column
    assert "chat_template" not in df
    one, other = df[df.system == "m/a"], df[df.system == "b"]
    assert set(one.num_fewshot) == {0} and other.num_fewshot.isna().all()
    assert not one.fewshot_as_multiturn.any()
    assert other.fewshot_as_multiturn.isna().all()


# --------------------------------------------------------------------- HELM

ADAPTER = {
    "method": "multiple_choice_joint",
    "instructions": "The following are multiple choice questions.",
    "max_train_instances": 5,
    "num_outputs": 1,
    "temperature": 0.0,
    "model_deployment": "together/llama-3-8b",
    "random": None,  # null: left out
    "stop_sequences": ["\n"],  # a list: left out
    "input_prefix": "Question: ",  # not a facet read
}


def test_helm_adapter_settings(tmp_path):
    helm_run(tmp_path / "mmlu:model=x", "meta/llama-3-8b", [1.0, 0.0, 1.0], ADAPTER)
    df = read_helm(tmp_path)
    added = ["adapter_method", "adapter_instructions", "adapter_max_train_instances",
             "adapter_num_outputs", "adapter_temperature",
             "adapter_model_deployment"]  # fmt: skip
    assert list(df.columns) == HELM_COLUMNS + added
    assert df.attrs["evalci_facets"] == added
    assert set(df.adapter_method) == {"multiple_choice_joint"}
    assert set(df.adapter_instructions) == {sha(ADAPTER["instructions"])}
    assert df.adapter_max_train_instances.dtype == "Int64"
    assert set(df.adapter_max_train_instances) == {5}
    assert df.adapter_temperature.dtype == "float64"
    assert set(df.adapter_model_deployment) == {"together/llama-3-8b"}


def test_helm_random_seed_and_a_run_without_a_spec(tmp_path):
    adapter = {"method": "generation", "random": "r1", "instructions": ""}
    helm_run(tmp_path / "a:model=x", "meta/llama-3-8b", [1.0, 0.0], adapter)
    helm_run(tmp_path / "a:model=y", "y", [0.0, 0.0], None)  # no run_spec.json
    df = read_helm(tmp_path)
    assert list(df.columns) == HELM_COLUMNS + [
        "adapter_method", "adapter_instructions", "adapter_random"]  # fmt: skip
    spec, bare = df[df.system == "meta/llama-3-8b"], df[df.system != "meta/llama-3-8b"]
    assert set(spec.adapter_random) == {"r1"} and set(spec.adapter_instructions) == {""}
    assert bare[["adapter_method", "adapter_random"]].isna().all().all()
    alone = read_helm(tmp_path / "a:model=y")
    assert list(alone.columns) == HELM_COLUMNS and alone.attrs["evalci_facets"] == []


def test_facet_columns_concatenate_with_the_other_readers(tmp_path):
    helm_run(tmp_path / "a:model=x", "m", [1.0, 0.0], {"num_outputs": 1})
    df = read_helm(tmp_path)
    both = pd.concat([df, df.drop(columns="adapter_num_outputs")], ignore_index=True)
    assert both.adapter_num_outputs.isna().sum() == 2

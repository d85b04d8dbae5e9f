"""Log files as the frameworks write them, built by the tests: Inspect samples,
specs, headers and .eval archives; lm-evaluation-harness lines and results.
Shared by the readers' tests and the command line's.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np


def inspect_spec(model: str, task: str, epochs: int) -> dict:
    return {
        "eval_id": "hG3bQ9uVw2",
        "run_id": "Zr8yL4kq1",
        "created": "2025-03-04T10:11:12+00:00",
        "task": task,
        "task_id": "T3sK1d",
        "task_version": 0,
        "task_file": "gpqa.py",
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": {
            "name": "gpqa_diamond",
            "location": "gpqa_diamond.csv",
            "samples": 5,
            "sample_ids": [0, 1, 2, 3, 4],
            "shuffled": False,
        },
        "model": model,
        "model_generate_config": {"temperature": 0.7},
        "model_args": {},
        "config": {"epochs": epochs, "epochs_reducer": ["mean"]},
        "packages": {"inspect_ai": "0.3.140"},
        "scorers": [{"name": "choice", "options": {}, "metrics": [], "metadata": {}}],
    }


def inspect_header(spec: dict, n: int, status: str = "success") -> dict:
    """EvalLog without samples: what header.json holds."""
    return {
        "version": 2,
        "status": status,
        "eval": spec,
        "plan": {
            "name": "plan",
            "steps": [{"solver": "multiple_choice", "params": {}}],
            "config": {},
        },
        "results": {
            "total_samples": n,
            "completed_samples": n,
            "scores": [
                {
                    "name": "choice",
                    "scorer": "choice",
                    "reducer": "mean",
                    "params": {},
                    "metrics": {
                        "accuracy": {"name": "accuracy", "value": 0.6, "params": {}}
                    },
                }
            ],
        },
        "stats": {
            "started_at": "2025-03-04T10:11:12+00:00",
            "completed_at": "2025-03-04T10:15:00+00:00",
            "model_usage": {},
        },
    }


def inspect_sample(sid, epoch: int, scores: dict | None, target="B") -> dict:
    """One EvalSample as the recorder writes it (samples/<id>_epoch_<n>.json)."""
    return {
        "id": sid,
        "epoch": epoch,
        "input": "Which of these is a noble gas? A) N B) Ar C) O D) H",
        "choices": ["N", "Ar", "O", "H"],
        "target": target,
        "messages": [
            {
                "id": "m1",
                "content": "Which of these is a noble gas?",
                "source": "input",
                "role": "user",
            },
            {
                "id": "m2",
                "content": "ANSWER: B",
                "source": "generate",
                "role": "assistant",
                "model": "gpt-4o",
            },
        ],
        "output": {
            "model": "gpt-4o",
            "choices": [
                {
                    "message": {
                        "id": "m2",
                        "content": "ANSWER: B",
                        "role": "assistant",
                    },
                    "stop_reason": "stop",
                }
            ],
            "usage": {"input_tokens": 40, "output_tokens": 3, "total_tokens": 43},
            "time": 0.8,
        },
        "scores": None
        if scores is None
        else {
            name: {
                "value": v,
                "answer": "B",
                "explanation": "ANSWER: B",
                "history": [],
            }
            for name, v in scores.items()
        },
        "metadata": {},
        "store": {},
        "events": [],
        "model_usage": {},
        "total_time": 1.2,
        "working_time": 1.1,
        "uuid": f"u-{sid}-{epoch}",
        "error": None if scores is not None else {"message": "boom", "traceback": ""},
        "attachments": {},
    }


def summary(s: dict) -> dict:
    return {k: s[k] for k in ("id", "epoch", "input", "target", "scores", "uuid")}


def write_eval(path: Path, spec: dict, samples: list[dict], header: bool = True):
    """A .eval zip with the members eval.py writes, in its order."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        start = {"version": 2, "eval": spec, "plan": inspect_header(spec, 0)["plan"]}
        z.writestr("_journal/start.json", json.dumps(start))
        for s in samples:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        z.writestr(
            "_journal/summaries/1.json", json.dumps([summary(s) for s in samples])
        )
        if header:
            z.writestr("summaries.json", json.dumps([summary(s) for s in samples]))
            reductions = [
                {
                    "scorer": "choice",
                    "reducer": "mean",
                    "samples": [{"value": 0.5, "sample_id": 0}],
                }
            ]
            z.writestr("reductions.json", json.dumps(reductions))
            z.writestr("header.json", json.dumps(inspect_header(spec, len(samples))))


DATE = "2025-03-04T10-11-12.345678"


def lm_results(task: str, model_name: str | None, model_args, n: int = 12) -> dict:
    """results_<date>.json: aggregated results + GeneralConfigTracker fields."""
    out = {
        "results": {task: {"alias": task, "acc,none": 0.5, "acc_stderr,none": 0.1}},
        "group_subtasks": {task: []},
        "configs": {task: {"task": task, "repeats": 1, "output_type": "loglikelihood"}},
        "versions": {task: 1.0},
        "n-shot": {task: 0},
        "higher_is_better": {task: {"acc": True}},
        "n-samples": {task: {"original": 2376, "effective": n}},
        "config": {
            "model": "hf",
            "model_args": model_args,
            "batch_size": 1,
            "batch_sizes": [],
            "device": "cpu",
            "limit": 12,
            "bootstrap_iters": 100000,
        },
        "git_hash": "4a3bc5e",
        "date": 1741083072.0,
        "task_hashes": {task: "ab12"},
        "model_source": "hf",
        "model_name_sanitized": "EleutherAI__pythia-160m",
        "system_instruction": None,
        "chat_template": None,
        "start_time": 1.0,
        "end_time": 2.0,
        "total_evaluation_time_seconds": "1.0",
    }
    if model_name is not None:
        out["model_name"] = model_name
    return out


def lm_mc_line(doc_id: int, lls: list[float], gold: int) -> dict:
    """A multiple-choice (loglikelihood) sample: one request per choice."""
    pred = int(np.argmax(lls))
    resps = [[(str(ll), str(i == pred))] for i, ll in enumerate(lls)]
    return {
        "doc_id": doc_id,
        "doc": {
            "question": f"q{doc_id}",
            "choices": ["a", "b", "c"],
            "answerKey": gold,
        },
        "target": str(gold),
        "arguments": {
            f"gen_args_{i}": {
                "arg_0": f"Question: q{doc_id}\nAnswer:",
                "arg_1": f" {c}",
            }
            for i, c in enumerate("abc")
        },
        "resps": [[list(r) for r in req] for req in resps],
        "filtered_resps": [list(req[0]) for req in resps],
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": "d" * 64,
        "prompt_hash": "p" * 64,
        "target_hash": "t" * 64,
        "acc": float(pred == gold),
        "acc_norm": float(pred == gold),
    }


def write_lm(folder: Path, task: str, lines: list[dict], results: dict | None):
    folder.mkdir(parents=True, exist_ok=True)
    if results is not None:  # lm-eval counts the documents it scored
        for count in results.get("n-samples", {}).values():
            count["effective"] = len({x["doc_id"] for x in lines})
        (folder / f"results_{DATE}.json").write_text(json.dumps(results, indent=2))
    path = folder / f"samples_{task}_{DATE}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def inspect_role(model: str) -> dict:
    """A model role as ``EvalSpec.model_roles`` holds it: a ``ModelConfig``
    (inspect_ai ``model/_model_config.py``: model, config, base_url, args)."""
    return {"model": model, "config": {}, "base_url": None, "args": {}}


def inspect_graded(spec: dict, model=None, role: str | None = "grader") -> dict:
    """``spec`` scored by ``model_graded_qa`` as ``eval.scorers`` records it:
    its arguments (``registry_params``) in ``options``, ``model`` a name, a
    ``ModelDict`` or None (then the ``model_role`` names the grader)."""
    options = {"template": None, "instructions": None, "grade_pattern": None,
               "include_history": False, "partial_credit": False,
               "model": model, "model_role": role}  # fmt: skip
    scorer = {"name": "model_graded_qa", "options": options, "metrics": [],
              "metadata": {}}  # fmt: skip
    return spec | {"scorers": [scorer]}


def lm_facets(results: dict, task: str, shots: int, template: str | None) -> dict:
    """``results`` with what lm-eval 0.4 records of the prompt: the task's
    ``num_fewshot`` (``configs``), simple_evaluate's seeds (``config``) and
    the chat template with its SHA-256 (GeneralConfigTracker)."""
    import hashlib

    out = json.loads(json.dumps(results))
    out["configs"][task] |= {
        "num_fewshot": shots,
        "fewshot_config": {"sampler": "first_n"},
    }
    out["n-shot"] = {task: shots}
    out["config"] |= {"random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234,
                      "fewshot_seed": 1234}  # fmt: skip
    sha = None if template is None else hashlib.sha256(template.encode()).hexdigest()
    out |= {"chat_template": template, "chat_template_sha": sha,
            "fewshot_as_multiturn": template is not None,
            "system_instruction": None, "system_instruction_sha": None}  # fmt: skip
    return out


def helm_run(folder: Path, model: str, em: list[float], adapter: dict | None):
    """A HELM run directory: ``per_instance_stats.json`` (one exact_match per
    instance, train trial 0) and, unless ``adapter`` is None, a
    ``run_spec.json`` whose ``adapter_spec`` is ``adapter`` plus the model."""
    folder.mkdir(parents=True)
    stat = {"name": {"name": "exact_match", "split": "test"}, "count": 1}
    entries = [
        {"instance_id": f"id{i}", "train_trial_index": 0,
         "stats": [stat | {"sum": x, "sum_squared": x, "min": x, "max": x, "mean": x}]}
        for i, x in enumerate(em)
    ]  # fmt: skip
    (folder / "per_instance_stats.json").write_text(json.dumps(entries))
    if adapter is not None:
        spec = {"name": folder.name, "adapter_spec": adapter | {"model": model}}
        (folder / "run_spec.json").write_text(json.dumps(spec))
    return folder

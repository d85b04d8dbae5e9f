"""Rebuild ``metaprompting_gpt4_7templates.csv`` from the meta-prompting outputs.

Source: suzgunmirac/meta-prompting (MIT) @ 40422564938d772c3e3e6b9614b1df48b8dd6a08,
``outputs/<Template>/<task>[-zero-shot-cot].jsonl``: GPT-4's answers (August 2023)
to the same inputs under seven prompting templates. Each line has ``input``,
``target`` and ``output``; the answer is the text between the last
``>> FINAL ANSWER:\\n\"\"\"`` and the next ``\"\"\"``.

Usage::

    python make_metaprompting_gpt4_7templates.py GIT_DIR [OUT_CSV]

GIT_DIR is a clone (or bare git directory) of the source repository; the files
are read with ``git show <commit>:<path>``, so the commit is pinned.

Scoring follows the rules described in the paper's evaluation (rewritten here,
not copied): the answer and the target are lower-cased, then

- word_sorting, multistep_arithmetic_two: exact match after deleting , ; : . "
  and turning newlines into spaces;
- geometric_shapes: the answer starts with the target option, e.g. "(b)";
- MGSM_*: the target number occurs in the answer (punctuation deleted) —
  a substring test, as in the source, so "18" matches "180";
- CheckmateInOne: the answer, cut before the number of the move after the
  input's last move (if that number occurs), contains the target move;
- GameOf24: the expression (cut at "=", after "is", before "equals" or
  "evaluates to") evaluates to 24 (within 1e-3) and uses exactly the four
  input numbers; evaluated with a small arithmetic parser (numbers, + - * /,
  parentheses), never with eval.

Sonnets (needs a rhyme dictionary) and P3 (runs model-written code; the other
six templates' files are over the snapshot's size limit) are left out.
Inputs are numbered by their order in the Standard template's file; every
template's file holds the same inputs (checked by text).
"""
from __future__ import annotations

import ast
import csv
import json
import operator
import re
import subprocess
import sys

COMMIT = "40422564938d772c3e3e6b9614b1df48b8dd6a08"
TEMPLATES = [
    "Standard",
    "ZeroShotCoT",
    "ExpertStatic",
    "ExpertDynamic",
    "MultiPersona",
    "MetaPromptingWithoutPython",
    "MetaPromptingWithPython",
]
TASKS = (
    ["geometric_shapes", "multistep_arithmetic_two", "word_sorting",
     "CheckmateInOne", "GameOf24"]
    + [f"MGSM_{lang}" for lang in
       ["BN", "DE", "ES", "FR", "JA", "RU", "SW", "TE", "TH", "ZH"]]
)
SYSTEM = "gpt-4"
START, END = '>> final answer:\n"""', '"""'


def path_of(template: str, task: str) -> str:
    if template.startswith("MetaPrompting"):
        return f"outputs/{template}/{task}.jsonl"
    return f"outputs/{template}/{task}-zero-shot-cot.jsonl"


def read_jsonl(git_dir: str, path: str) -> list[dict]:
    text = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{COMMIT}:{path}"],
        check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def final_answer(output: str) -> str:
    return output.lower().split(START)[-1].split(END)[0].strip()


def strip_punct(s: str) -> str:
    for ch in ',;:."':
        s = s.replace(ch, "")
    return s


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub,
        ast.Mult: operator.mul, ast.Div: operator.truediv}


def arith(expr: str) -> float:
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        raise ValueError("not arithmetic")
    return ev(ast.parse(expr, mode="eval"))


def game24(inp: str, ans: str) -> bool:
    if "=" in ans:
        ans = ans.split("=")[0].strip()
    if "is" in ans:
        ans = ans.split("is")[1].strip()
    if "equals" in ans:
        ans = ans.split("equals")[0].strip()
    if "evaluates to" in ans:
        ans = ans.split("evaluates to")[0].strip()
    try:
        if abs(arith(ans) - 24) >= 1e-3:
            return False
    except (ValueError, SyntaxError, ZeroDivisionError, IndexError):
        return False
    used = re.sub(r"[+\-*/÷()]", " ", ans).split()
    return sorted(used) == sorted(inp.split(" "))


def checkmate(inp: str, ans: str, target: str) -> bool:
    next_move = str(int(inp.split(".")[-2].split(" ")[-1].strip()) + 1)
    if next_move in ans:
        ans = ans.split(next_move)[0].strip()
    return target in ans


def score(task: str, inp: str, output: str, target: str) -> bool:
    ans, target = final_answer(output), target.lower()
    if task == "GameOf24":
        return game24(inp, ans)
    if task in ("word_sorting", "multistep_arithmetic_two"):
        return strip_punct(ans).replace("\n", " ") == target
    if task == "geometric_shapes":
        return ans[: len(target)] == target
    if task == "CheckmateInOne":
        return checkmate(inp, ans, target)
    if task.startswith("MGSM"):
        return target in strip_punct(ans)
    raise ValueError(task)


def main(git_dir: str, out: str) -> None:
    rows = []
    for task in TASKS:
        order = [d["input"] for d in read_jsonl(git_dir, path_of("Standard", task))]
        index = {text: i for i, text in enumerate(order)}
        assert len(index) == len(order), f"{task}: repeated inputs"
        for template in TEMPLATES:
            data = read_jsonl(git_dir, path_of(template, task))
            assert sorted(d["input"] for d in data) == sorted(order), (task, template)
            for d in data:
                rows.append((f"{task}/{index[d['input']]:03d}", task, template,
                             SYSTEM, int(score(task, d["input"], d["output"], d["target"]))))
    rows.sort(key=lambda r: (TASKS.index(r[1]), r[0], TEMPLATES.index(r[2])))
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["input_id", "task", "template", "system", "correct"])
        w.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "metaprompting_gpt4_7templates.csv")

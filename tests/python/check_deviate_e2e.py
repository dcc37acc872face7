#!/usr/bin/python3
"""mlgo_corpus.deviate end to end on a real rollouts harvest: the gains are
the table's, the trainer is reproducible for a seed, the exported policy
decides as torch on every observation (mlgo-policy eval) and inside the
compiler (a tflite: harvest, whose logs and sites give the features, the
default and the cost margin the plugin fed), a policy that never deviates
is the default, and a rollout table or sites file that does not match its
logs is refused with an error naming it.

usage: check_deviate_e2e.py ROLLOUTS WORK MLGO_POLICY HARVEST_LOGS CORPUS
Prints a JSON summary; a failure is an AssertionError (exit 1).
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

import mlgo_corpus
from mlgo_corpus import deviate
from mlgo_corpus.features import Vocab, normalize

rollouts, work, mlgo_policy, harvest_logs, corpus = sys.argv[1:6]
TRAIN = ["--epochs=15", "--seed=3", "--learning_rate=0.01"]


def cli(*flags):
    return subprocess.run([sys.executable, "-m", "mlgo_corpus.deviate", *flags], capture_output=True, text=True)


def in_process(*flags):
    """deviate.main in this process (one torch start for the whole check): (exit code, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = deviate.main(list(flags))
    return code, err.getvalue()


def harvest(out, policy):
    subprocess.run([harvest_logs, "--corpus=" + corpus, "--output_dir=" + out, "--mode=plugin", "--num_workers=2",
                    "--decision_sites", "--progress_interval=0", "--policy=" + policy], check=True,
                   capture_output=True)
    return mlgo_corpus.Harvest(out)


# 0. The AUC is the share of (paying, costing) pairs ranked right, ties half;
# a missing margin is the surest one on the default's side.
rng = np.random.default_rng(7)
score, positive = rng.integers(0, 6, 60).astype(float), rng.random(60) < 0.3
pairs = [(1.0 if a > b else 0.5 if a == b else 0.0) for a, pa in zip(score, positive) if pa
         for b, pb in zip(score, positive) if not pb]
assert abs(deviate.auc(score, positive) - sum(pairs) / len(pairs)) < 1e-12
assert deviate.margin_input(None, 1) == 2 ** 31 and deviate.margin_input(None, 0) == -2 ** 31
assert deviate.margin_input(-7, 1) == -7

# 1. Every rolled-out decision's gain is base - flipped size, as the table says.
data = deviate.load_rollouts([rollouts])
table = [json.loads(line) for line in open(os.path.join(rollouts, "explore.jsonl")) if line.strip()]
base = {t["module"]: t["native_size"] for t in table if t["trajectory"] == 0}
expected = {(t["module"], t["flipped_step"]): base[t["module"]] - t["native_size"]
            for t in table if t["trajectory"] > 0 and t["status"] == "ok"}
rolled = data.rolled_out()
got = {(data.modules[m], int(s)): g for m, s, g in zip(data.module_index[rolled], data.step[rolled], data.gain[rolled])}
assert got == expected, (len(got), len(expected))
assert (data.gain[rolled] > 0).any() and (data.gain[rolled] < 0).any(), "the test needs flips that pay and that cost"
for m in mlgo_corpus.Harvest(rollouts):
    if m.log_path:
        sites = m.read_rollout_sites()
        margins = data.features["cost_margin"][data.module_index == data.modules.index(m.name)]
        assert [deviate.margin_input(s["cost_margin"], int(s["default"])) for s in sites] == margins.tolist(), m.name

# 2. Reproducible: the same seed twice gives the same bytes; another seed, others.
policies = {}
for name, seed in (("a", "--seed=3"), ("b", "--seed=3"), ("c", "--seed=4")):
    flags = ["--harvest=" + rollouts, "--work=" + os.path.join(work, name), "--output=" + os.path.join(work, name, "p"),
             "--threshold=0", "--mlgo_policy=" + mlgo_policy, *TRAIN[:2], seed, TRAIN[2]]
    if name == "a":  # the command line once, the same function after
        r = cli(*flags)
        assert r.returncode == 0, r.stderr
    else:
        code, err = in_process(*flags)
        assert code == 0, err
    policies[name] = open(os.path.join(work, name, "p", "model.tflite"), "rb").read()
assert policies["a"] == policies["b"], "the same seed gave another policy"
assert policies["a"] != policies["c"], "another seed gave the same policy"

# 3. A threshold that deviates on about a tenth of the decisions; it decides as torch.
vocab = Vocab.load(os.path.join(work, "a", "vocab"))
names = sorted(data.features)
x = normalize(data.features, vocab, names, with_sqrt=True)
model = deviate.make_model(x.shape[1], deviate.WIDTH, deviate.LAYERS)
model.load_state_dict(torch.load(os.path.join(work, "a", "network.pt")))
scores = deviate.scores(model, x)
threshold = float(np.quantile(scores, 0.9))
policy = os.path.join(work, "deviating")
deviate.export(model, os.path.join(work, "a", "vocab"), policy, names, threshold)
check = deviate.check_export(model, policy, data.features, names, vocab, threshold, mlgo_policy)
assert check["ok"] and check["observations"] == len(data) and check["deviations"] > 0, check

# 4. Inside the compiler: each logged decision is torch's on the logged
# features, inlining_default and the sites' cost_margin.
compiled = harvest(os.path.join(work, "compiled"), "tflite:" + policy)
compared = deviations = 0
for m in compiled:
    assert m.ok, m
    if not m.log_path:
        continue
    log, sites = m.read_log(), m.sites()
    n = len(log)
    features = {f: log.features[f].reshape(n) for f in names if f not in deviate.DEFAULT_INPUTS}
    features["inlining_default"] = log.features["inlining_default"].reshape(n)
    features["cost_margin"] = np.array([deviate.margin_input(s["cost_margin"], int(s["default"])) for s in sites])
    s = deviate.scores(model, normalize(features, vocab, names, with_sqrt=True))
    ours = deviate.policy_decisions(s, features["inlining_default"], threshold)
    clear = np.abs(s - threshold) >= 1e-4
    theirs = log.features["inlining_decision"].reshape(n)
    assert np.array_equal(ours[clear], theirs[clear]), (m.name, np.nonzero((ours != theirs) & clear))
    compared += n
    deviations += int((theirs != features["inlining_default"]).sum())
assert compared and deviations, (compared, deviations)

# 5. A policy that never deviates is the default: every decision and size.
code, err = in_process("--harvest=" + rollouts, "--work=" + os.path.join(work, "never"),
                       "--output=" + os.path.join(work, "never", "p"), "--threshold=never",
                       "--mlgo_policy=" + mlgo_policy, *TRAIN)
assert code == 0, err
never = harvest(os.path.join(work, "never-compiled"), "tflite:" + os.path.join(work, "never", "p"))
plain = harvest(os.path.join(work, "default-compiled"), "default")
sizes = {m.name: m.native_size for m in plain}
for m in never:
    assert m.native_size == sizes[m.name], (m.name, m.native_size, sizes[m.name])
    if m.log_path:
        log = m.read_log()
        assert np.array_equal(log.features["inlining_decision"], log.features["inlining_default"]), m.name


# 6. Tables and sites that do not match their logs.
def refused(edit, expected_words):
    bad = os.path.join(work, "bad")
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(rollouts, bad, symlinks=True)
    edit(bad)
    code, err = in_process("--harvest=" + bad, "--work=" + os.path.join(work, "bad-work"), "--threshold=never")
    assert code == 1, (expected_words, code, err)
    assert all(w in err for w in expected_words), (expected_words, err)
    return err.strip()


def edit_table(change):
    def edit(bad):
        path = os.path.join(bad, "explore.jsonl")
        rows = [json.loads(line) for line in open(path) if line.strip()]
        change(rows)
        with open(path, "w") as f:
            f.writelines(json.dumps(t) + "\n" for t in rows)
    return edit


def rename_module(rows):
    rows[0]["module"] = "elsewhere.o"


def step_beyond(rows):
    flipped = next(t for t in rows if t["trajectory"] > 0 and t["status"] == "ok")
    flipped["flipped_step"] = 10 ** 6


def other_size(rows):
    flipped = next(t for t in rows if t["trajectory"] > 0 and t["status"] == "ok")
    flipped["native_size"] += 1


def short_sites(bad):
    module = next(m for m in mlgo_corpus.Harvest(bad) if m.log_path)
    path = os.path.join(bad, "rollouts", module.name + ".sites.jsonl")
    lines = open(path).readlines()
    open(path, "w").writelines(lines[:-1])


def not_a_site(bad):
    module = next(m for m in mlgo_corpus.Harvest(bad) if m.log_path)
    path = os.path.join(bad, "rollouts", module.name + ".sites.jsonl")
    lines = open(path).readlines()
    open(path, "w").writelines(["[1, 2]\n"] + lines[1:])


errors = [
    refused(edit_table(rename_module), ["explore.jsonl", "elsewhere.o"]),
    refused(not_a_site, ["sites.jsonl", "line 1", "not a decision site"]),
    refused(edit_table(step_beyond), ["explore.jsonl", "1000000", "decisions"]),
    refused(edit_table(other_size), ["explore.jsonl", "in the table", "in the log"]),
    refused(short_sites, ["sites file has", "rollout log"]),
]
print(json.dumps({"decisions": len(data), "rolled_out": int(rolled.sum()), "compared_in_compiler": compared,
                  "deviations_in_compiler": deviations, "export_check": check, "errors": errors}))

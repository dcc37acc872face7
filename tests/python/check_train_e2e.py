#!/usr/bin/python3
"""mlgo_corpus.train end to end on two real --explore harvests (two base
policies): the BC-Max choice equals one computed here from explore.jsonl,
the profile files say what the harvests measured, the command line and the
API give the same policy for a seed (byte for byte), the exported policy
decides as the torch network on every logged observation (mlgo-policy eval
--log) and inside the compiler (harvest-logs --policy=tflite:), and bad
inputs are errors naming the file.

usage: check_train_e2e.py HARVEST_A HARVEST_B VOCAB WORK MLGO_POLICY HARVEST_LOGS CORPUS
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
from mlgo_corpus import train as bc
from mlgo_corpus.features import Vocab, normalize

harvest_a, harvest_b, vocab_dir, work, mlgo_policy, harvest_logs, corpus = sys.argv[1:8]
harvests = [harvest_a, harvest_b]
TRAIN_FLAGS = ["--epochs=4", "--batch_size=32", "--learning_rate=0.1", "--seed=5"]


def explore_lines(harvest):
    with open(os.path.join(harvest, "explore.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def train_cli(*flags):
    return subprocess.run([sys.executable, "-m", "mlgo_corpus.train", *flags], capture_output=True, text=True)


# 1. The BC-Max choice: each module's smallest kept trajectory, the first harvest on ties.
expected = {}
base_sizes = [{}, {}]
for h, harvest in enumerate(harvests):
    for t in explore_lines(harvest):
        if not t["decisions"]:
            continue  # a module without decisions makes no trajectory (the corpus has one)
        if t["trajectory"] == 0 and t["status"] == "ok":
            base_sizes[h][t["module"]] = t["native_size"]
        if t["kept"]:
            if t["module"] not in expected or t["native_size"] < expected[t["module"]][1]:
                expected[t["module"]] = (harvest, t["native_size"], t["decisions"])
data = bc.load_harvests(harvests)
assert [c.module for c in data.chosen] == list(expected), ([c.module for c in data.chosen], list(expected))
for c in data.chosen:
    assert (c.harvest, c.native_size, c.decisions) == expected[c.module], (c.module, c.harvest, c.native_size)
from_b = sum(c.harvest == harvest_b for c in data.chosen)
assert 0 < from_b, "the test needs a module whose smallest trajectory is in the second harvest"
logs = [mlgo_corpus.Harvest(c.harvest)[c.module].read_log() for c in data.chosen]
assert len(data) == sum(len(log) for log in logs) == sum(len(v[2]) for v in expected.values())
assert np.array_equal(data.actions, np.concatenate([log.decisions[:, 0] for log in logs]))
assert np.array_equal(data.labels, np.concatenate([np.full(len(log), bc.size_bucket(c.native_size))
                                                   for c, log in zip(data.chosen, logs)]))

# 2. The command line: profiles, weights, export and its own check.
policy = os.path.join(work, "cli_policy")
prefix = os.path.join(work, "profile")
r = train_cli(*["--harvest=" + h for h in harvests], "--vocab=" + vocab_dir, "--output=" + policy,
              "--write_profiles=" + prefix, "--mlgo_policy=" + mlgo_policy, *TRAIN_FLAGS)
assert r.returncode == 0, r.stderr
report = json.loads(r.stdout)
assert "train: epoch 4/4" in r.stderr, r.stderr
assert report["samples"] == len(data) and report["modules"] == len(expected), report
assert report["steps"] == 4 * (len(data) // 32), report
assert report["chosen_from"] == {harvest_a: len(expected) - from_b, harvest_b: from_b}, report
check = report["export_check"]
assert check["checked"] and check["ok"] and check["observations"] == len(data), check
assert report["profiles_written"] == [prefix + "_max.json", prefix + "_pol0.json", prefix + "_pol1.json"], report
with open(prefix + "_max.json") as f:
    assert json.load(f) == [{"module_name": m, "loss": float(size), "horizon": len(decisions)}
                            for m, (_, size, decisions) in expected.items()]
for h in range(2):
    pol = bc.read_profile(prefix + "_pol%d.json" % h)
    assert pol == {m: float(s) for m, s in base_sizes[h].items()}, (pol, base_sizes[h])
weights = bc.TrainingWeights()
for h in range(2):
    weights.update(bc.read_profile(prefix + "_max.json"), bc.read_profile(prefix + "_pol%d.json" % h))
assert np.allclose(report["bucket_distribution"], weights.p, rtol=0, atol=1e-15), report["bucket_distribution"]
assert not np.allclose(weights.p, 1 / 20), "the base trajectories should lose somewhere"

# The same pairs given as --profiling_data: the same weights, the same policy.
pairs = [prefix + "_max.json", prefix + "_pol0.json", prefix + "_max.json", prefix + "_pol1.json"]
again = os.path.join(work, "cli_policy_profiles")
r = train_cli(*["--harvest=" + h for h in harvests], "--vocab=" + vocab_dir, "--output=" + again,
              *["--profiling_data=" + p for p in pairs], "--no_export_check", *TRAIN_FLAGS)
assert r.returncode == 0, r.stderr
assert json.loads(r.stdout)["bucket_distribution"] == report["bucket_distribution"]
tflite = open(os.path.join(policy, "model.tflite"), "rb").read()
assert open(os.path.join(again, "model.tflite"), "rb").read() == tflite, "the same seed gave another policy"

# 3. The API, with the same data and seed, exports the same bytes.
vocab = Vocab.load(vocab_dir)
names = bc.input_features(data, vocab, vocab_dir)
assert names == report["features"] and "switch_default_dest_penalty" in names and "inlining_default" not in names
x = normalize(data.features, vocab, names, with_sqrt=True)
assert x.shape == (len(data), 3 * len(names))
result = bc.train(x, data.actions, weights.sample_weights(data.labels), epochs=4, batch_size=32,
                  learning_rate=0.1, seed=5)
assert result.final_loss == report["final_loss"] and result.weighted_accuracy == report["weighted_accuracy"]
api_policy = os.path.join(work, "api_policy")
assert bc.export(result.model, vocab_dir, api_policy, names) == names
assert open(os.path.join(api_policy, "model.tflite"), "rb").read() == tflite, "CLI and API policies differ"

# A few SGD steps from ml-compiler-opt's start (kernels ~ Normal(0, 0.01^2))
# learn the majority (do not inline), with a logit that varies by about 1e-5
# over the inputs: every decision is the same, and differences are below
# float32's resolution of z. The checks below also want both signs of z,
# clear of near-ties: a network of the trainer's shape with He-normal
# kernels, its logit spread to a standard deviation of 1 and cut at the
# widest gap between distinct logits in the middle half (call sites with
# equal features have equal logits).
torch.manual_seed(11)
network = bc.make_model(x.shape[1])
for layer in network:
    if isinstance(layer, torch.nn.Linear):
        torch.nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
        torch.nn.init.zeros_(layer.bias)
with torch.no_grad():
    network[-1].weight /= float(np.std(bc.decide(network, x)[1]))
distinct = np.unique(bc.decide(network, x)[1])
assert len(distinct) > 8, distinct
quarter = len(distinct) // 4
cut = max(range(quarter, len(distinct) - quarter - 1), key=lambda k: distinct[k + 1] - distinct[k])
with torch.no_grad():
    network[-1].bias -= float(distinct[cut] + distinct[cut + 1]) / 2
policy = os.path.join(work, "both_ways_policy")
bc.export(network, vocab_dir, policy, names)
both, z_all = bc.decide(network, x)
assert 0 < both.sum() < len(both), both.sum()
assert np.mean(np.abs(z_all) < bc.TIE) < 0.05, "mostly near-ties"

# 4. Every logged observation under our evaluator, log by log.
compared = near_ties = 0
for c, log in zip(data.chosen, logs):
    decisions, z = bc.decide(network, normalize(log.features, vocab, names, with_sqrt=True))
    out = subprocess.run([mlgo_policy, "eval", "--log", os.path.join(c.harvest, "logs", c.module + ".log"), policy],
                         capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == len(log), (c.module, len(rows), len(log))
    theirs = np.array([row["decision"] for row in rows])
    logits = np.array([row["outputs"]["inlining_logits"] for row in rows])
    clear = np.abs(z) >= bc.TIE
    assert np.all((theirs == decisions) | ~clear), (c.module, theirs, decisions)
    assert np.all(logits[:, 0] == 0) and np.max(np.abs(logits[:, 1] - z)) < 1e-4, c.module
    compared += len(log)
    near_ties += int((~clear).sum())
assert compared == len(data)

# 5. Inside the compiler.
trained = os.path.join(work, "trained_harvest")
subprocess.run([harvest_logs, "--progress_interval=0", "--corpus=" + corpus, "--output_dir=" + trained,
                "--policy=tflite:" + policy], check=True, capture_output=True)
in_compiler = 0
inlined = 0
for module in mlgo_corpus.Harvest(trained):
    assert module.ok, (module.name, module.status, module.reason)
    if module.log_path is None:
        continue  # no decisions
    log = module.read_log()
    decisions, z = bc.decide(network, normalize(log.features, vocab, names, with_sqrt=True))
    assert np.all((log.decisions[:, 0] == decisions) | (np.abs(z) < bc.TIE)), module.name
    in_compiler += len(log)
    inlined += int(log.decisions[:, 0].sum())
assert in_compiler > 0

# 6. Errors name the file and the reason (in this process: main() as the
# command line runs it).
def train_in_process(*flags):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = bc.main(list(flags))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def expect_error(flags, *fragments):
    code, out, err = train_in_process(*flags, "--no_export_check", "--batch_size=8")
    assert code == 1, (flags, code, err)
    assert out == "", out
    for fragment in fragments:
        assert fragment in err, (fragment, err)


chosen_b = next(c for c in data.chosen if c.harvest == harvest_b)
broken = os.path.join(work, "broken")
shutil.copytree(harvest_b, broken, symlinks=True)
os.unlink(os.path.join(broken, "logs", chosen_b.module + ".log"))
expect_error(["--harvest=" + broken, "--vocab=" + vocab_dir, "--output=" + os.path.join(work, "x")],
             os.path.join(broken, "logs", chosen_b.module + ".log"))
os.unlink(os.path.join(broken, "explore.jsonl"))
expect_error(["--harvest=" + harvest_a, "--harvest=" + broken, "--vocab=" + vocab_dir,
              "--output=" + os.path.join(work, "x")], os.path.join(broken, "explore.jsonl"), "missing")
partial_vocab = os.path.join(work, "partial_vocab")
shutil.copytree(vocab_dir, partial_vocab)
os.unlink(os.path.join(partial_vocab, "node_count.buckets"))
expect_error(["--harvest=" + harvest_a, "--vocab=" + partial_vocab, "--output=" + os.path.join(work, "x")],
             os.path.join(partial_vocab, "node_count.buckets"), "missing")
code, _, err = train_in_process("--harvest=" + harvest_a, "--vocab=" + vocab_dir, "--output=x",
                                "--profiling_data=" + pairs[0])
assert code == 2 and "pairs" in err, err
assert not os.path.exists(os.path.join(work, "x"))

print(json.dumps({"modules": len(expected), "from_second_harvest": from_b, "samples": len(data),
                  "observations_compared": compared, "near_ties": near_ties, "decisions_in_compiler": in_compiler,
                  "inlined_in_compiler": inlined, "bucket_distribution_min": float(weights.p.min()),
                  "export_check": check}))

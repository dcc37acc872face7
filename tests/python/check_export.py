#!/usr/bin/python3
"""export_policy end to end: a torch network trained (behavioural cloning,
briefly) on a real harvest's logs, exported, and its decisions checked on
every logged observation under three evaluators.

usage: check_export.py HARVEST VOCAB WORK MLGO_POLICY HARVEST_LOGS CORPUS [NODE ORACLE_JS WASM_DIR]

1. our native evaluator (mlgo-policy eval --log) on every log of HARVEST;
2. TFLite itself (npm, run with Node; the float-input twin, since its
   JavaScript API cannot feed int64), when NODE is given;
3. inside the compiler: harvest-logs --policy=tflite:DIR over CORPUS, and
   every decision in its logs equals the torch network's on that logged
   observation.
Decisions must be equal except on near-ties (|logit difference| < 1e-4: the
evaluators sum in different orders); logits agree within 1e-4.
Prints a JSON summary; a difference is an AssertionError.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

import mlgo_corpus
from mlgo_corpus.export import export_policy
from mlgo_corpus.features import Vocab, normalize

TIE = 1e-4


def concat_logs(logs):
    features = {}
    for name in logs[0].features:
        features[name] = np.concatenate([log.features[name] for log in logs])
    return features


def torch_outputs(model, x):
    with torch.no_grad():
        logits = model(torch.from_numpy(x)).numpy()
    return logits.argmax(axis=1), logits


def compare(where, ours, logits_ref, decisions_ref, logits=None):
    decisions_ref = np.asarray(decisions_ref)
    ours = np.asarray(ours)
    assert ours.shape == decisions_ref.shape, (where, ours.shape, decisions_ref.shape)
    clear = np.abs(logits_ref[:, 1] - logits_ref[:, 0]) >= TIE
    wrong = np.nonzero((ours != decisions_ref) & clear)[0]
    assert len(wrong) == 0, "%s: %d decisions differ from torch's, first at %d" % (where, len(wrong), wrong[0])
    if logits is not None:
        worst = float(np.max(np.abs(np.asarray(logits) - logits_ref))) if len(logits_ref) else 0.0
        assert worst < 1e-4, "%s: logits differ by %g" % (where, worst)
    return int((~clear).sum())


def main():
    harvest_dir, vocab_dir, work, mlgo_policy, harvest_logs, corpus = sys.argv[1:7]
    oracle = sys.argv[7:10] if len(sys.argv) >= 10 else None
    harvest = mlgo_corpus.Harvest(harvest_dir)
    modules = harvest.with_logs()
    logs = [m.read_log() for m in modules]
    vocab = Vocab.load(vocab_dir)
    names = vocab.input_features(logs[0].feature_names)
    assert "inlining_default" not in names and len(names) > 30, names
    x = normalize(concat_logs(logs), vocab, names)
    y = np.concatenate([log.decisions[:, 0] for log in logs])
    # The default inliner may take one decision everywhere in a small
    # corpus; the network learns a rule with both answers instead: inline
    # call sites below the median of the most varied feature. (Training
    # quality is not what this checks; examples/train_inliner clones the
    # default.)
    varied = x[:, 0::2]
    column = varied[:, int(varied.std(axis=0).argmax())]
    target = (column > np.median(column)).astype(np.int64)

    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 32), torch.nn.ReLU(), torch.nn.Linear(32, 16),
                                torch.nn.ReLU(), torch.nn.Linear(16, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    xt, yt = torch.from_numpy(x), torch.from_numpy(target)
    for _ in range(150):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        optimizer.step()
    decisions, logits = torch_outputs(model, x)
    assert 0 < decisions.sum() < len(decisions), "the test needs both decisions: %d of %d" % (
        decisions.sum(), len(decisions))

    policy_dir = os.path.join(work, "policy")
    twin = os.path.join(work, "twin.tflite")
    umask = os.umask(0o022)
    assert export_policy(model, vocab_dir, policy_dir, float_inputs_twin=twin) == names
    os.umask(umask)
    # Files as open() makes them (0666 & ~umask), not mkstemp's 0600: a policy is shared and installed.
    for path in (os.path.join(policy_dir, "model.tflite"), os.path.join(policy_dir, "output_spec.json"), twin):
        mode = os.stat(path).st_mode & 0o777
        assert mode == 0o644, "%s has mode %o" % (path, mode)

    # 1. Our evaluator, log by log.
    ties = 0
    at = 0
    for module, log in zip(modules, logs):
        out = subprocess.run([mlgo_policy, "eval", "--log", module.log_path, policy_dir], capture_output=True,
                             text=True, check=True).stdout
        rows = [json.loads(line) for line in out.splitlines()]
        assert len(rows) == len(log), (module.name, len(rows), len(log))
        n = len(log)
        ties += compare("mlgo-policy eval " + module.name, [r["decision"] for r in rows], logits[at:at + n],
                        decisions[at:at + n], [r["outputs"]["inlining_logits"] for r in rows])
        at += n

    # 2. TFLite itself.
    oracle_checked = 0
    if oracle:
        node, script, wasm = oracle
        features = concat_logs(logs)
        path = os.path.join(work, "observations.jsonl")
        with open(path, "w") as f:
            for i in range(len(y)):
                f.write(json.dumps({n: float(features[n][i, 0]) for n in names}) + "\n")
        out = subprocess.run([node, script, wasm, twin, path], capture_output=True, text=True, check=True).stdout
        rows = [json.loads(line)["outputs"] for line in out.splitlines()]
        compare("TFLite", [r["inlining_decision_int32"][0] for r in rows], logits, decisions,
                [r["inlining_logits:0"] for r in rows])
        oracle_checked = len(rows)

    # 3. In the compiler: every decision the exported policy took.
    out_dir = os.path.join(work, "policy_harvest")
    subprocess.run([harvest_logs, "--progress_interval=0", "--corpus=" + corpus, "--output_dir=" + out_dir,
                    "--policy=tflite:" + policy_dir], check=True, capture_output=True)
    in_compiler = 0
    for module in mlgo_corpus.Harvest(out_dir).with_logs():
        log = module.read_log()
        d, l = torch_outputs(model, normalize(log.features, vocab, names))
        compare("harvest " + module.name, log.decisions[:, 0], l, d)
        in_compiler += len(log)
    assert in_compiler > 0
    print(json.dumps({"observations": int(len(y)), "near_ties": ties, "inlined": int(decisions.sum()),
                      "agreement_with_target": float((decisions == target).mean()), "tflite_checked": oracle_checked,
                      "decisions_in_compiler": in_compiler}))


main()

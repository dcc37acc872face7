#!/usr/bin/python3
"""The MLGO inliner loop on stock Debian packages, without TensorFlow:

  1. harvest-logs: the default inliner's decisions (training logs) and the
     -Oz native sizes of every module;
  2. training-log vocab: the quantile files that normalise the features;
  3. behavioural cloning in PyTorch: a small network (dense 64-32, ReLU, two
     logits) learns the default decisions from mlgo_corpus.Harvest's logs,
     with ml-compiler-opt's normalisation (mlgo_corpus.features);
  4. mlgo_corpus.export_policy: model.tflite + output_spec.json;
  5. harvest-logs --policy=tflite:POLICY: the compiler decides with the
     trained network (our native TFLite evaluator, in-process in opt);
  6. the report: agreement with the default on the training decisions and
     the policy's total native size against the -Oz default.

usage: train_inliner.py --corpus=DIR --work=DIR [--epochs=N] [--seed=S] [--tools_dir=DIR]
Prints the report as JSON (also written to WORK/report.json).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

import mlgo_corpus
from mlgo_corpus.features import Vocab, normalize


def tool(args, name):
    if args.tools_dir:
        return os.path.join(args.tools_dir, name)
    found = shutil.which(name)
    if not found:
        sys.exit("train_inliner: %s is not on PATH (give --tools_dir)" % name)
    return found


def harvest(args, out, *flags):
    subprocess.run([tool(args, "harvest-logs"), "--progress_interval=0", "--corpus=" + args.corpus,
                    "--output_dir=" + out, *flags], check=True)
    return mlgo_corpus.Harvest(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="an MLGO corpus (extract-ir, make-corpus)")
    parser.add_argument("--work", required=True, help="where the harvests, vocab and policy go")
    parser.add_argument("--epochs", type=int, default=600, help="full-batch training epochs (default 600)")
    parser.add_argument("--seed", type=int, default=0, help="torch's seed (default 0)")
    parser.add_argument("--tools_dir", default="", help="the mlgo-corpus tools' directory (default: PATH)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    # 1-2. Default traces and the vocab.
    default = harvest(args, os.path.join(args.work, "default"))
    vocab_dir = os.path.join(args.work, "vocab")
    subprocess.run([tool(args, "training-log"), "vocab", "--output_dir=" + vocab_dir,
                    os.path.join(args.work, "default", "logs")], check=True)
    vocab = Vocab.load(vocab_dir)
    logs = [m.read_log() for m in default.with_logs()]
    names = vocab.input_features(logs[0].feature_names)
    x = np.concatenate([normalize(log.features, vocab, names) for log in logs])
    y = np.concatenate([log.decisions[:, 0] for log in logs]).astype(np.int64)

    # 3. Behavioural cloning.
    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 64), torch.nn.ReLU(), torch.nn.Linear(64, 32),
                                torch.nn.ReLU(), torch.nn.Linear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(args.epochs):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        agreement = float((model(xt).argmax(dim=1) == yt).float().mean())

    # 4-5. Export, and compile with the trained policy.
    policy_dir = os.path.join(args.work, "policy")
    mlgo_corpus.export_policy(model, vocab_dir, policy_dir, features=names)
    trained = harvest(args, os.path.join(args.work, "trained"), "--policy=tflite:" + policy_dir)

    # 6. The report.
    default_sizes, trained_sizes = default.sizes(), trained.sizes()
    both = sorted(set(default_sizes) & set(trained_sizes))
    report = {
        "modules": len(default),
        "training_decisions": int(len(y)),
        "default_inlined": float(y.mean()) if len(y) else 0.0,
        "agreement_with_default": agreement,
        "loss": float(loss),
        "default_native_size": int(sum(default_sizes[m] for m in both)),
        "policy_native_size": int(sum(trained_sizes[m] for m in both)),
        "policy_failed_modules": [m.name for m in trained if not m.ok],
    }
    report["size_change"] = (report["policy_native_size"] / report["default_native_size"] - 1
                             if report["default_native_size"] else 0.0)
    with open(os.path.join(args.work, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Iterative BC-Max for the inliner with our tools alone (explore, train, evaluate, repeat).

Explore, train, export, evaluate on held-out programs (per object and
linked), repeat.

Round r:
  1. explore: harvest-logs --explore=K over the training corpus with each
     base policy: the default heuristic (round 1), then also every policy
     trained so far (iterative BC-Max: the new policy joins the baselines);
     each exploration is made once and reused by later rounds;
  2. train: python3 -m mlgo_corpus.train over all those explorations
     (ml-compiler-opt's weighted behavioural cloning), export the policy
     (model.tflite + output_spec.json) and check that the exported model
     decides as the torch model on every logged observation;
  3. evaluate: harvest-logs --policies=default,tflite:POLICY on each
     held-out corpus, per object and, with a link template, linked.
The vocabulary (feature quantiles) comes from the default exploration and
stays fixed, so every round's policy reads its features alike.

usage:
  bc_max.py --train_corpus=DIR --heldout=NAME=DIR [--heldout=...]
            [--link=NAME=TEMPLATE ...] --work=DIR [--rounds=2] [--explore=7]
            [--epochs=N] [--learning_rate=F] [--seed=S] [--tools_dir=DIR]

Everything is written under --work and a rerun resumes: a step whose
output is complete is not redone. Progress goes to stderr; the final table
to stdout and WORK/report.json; WORK/best/ holds the best round's policy
and compare-harvests pages (default against the policy) per held-out
program.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def log(message):
    print("bc_max: " + message, file=sys.stderr, flush=True)


def tool(args, name):
    if args.tools_dir:
        return os.path.join(args.tools_dir, name)
    found = shutil.which(name)
    if not found:
        sys.exit("bc_max: %s is not on PATH (give --tools_dir)" % name)
    return found


def run(command, **kwargs):
    started = time.time()
    subprocess.run(command, check=True, **kwargs)
    return time.time() - started


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def harvest_flags(args):
    return ["--mode=plugin", "--compiler=" + args.compiler, "--progress_interval=0",
            "--compilation_timeout=%d" % args.compilation_timeout]


def explore(args, base_policy, out):
    """An --explore harvest of the training corpus with `base_policy`; reused when complete."""
    summary = os.path.join(out, "summary.json")
    if os.path.exists(summary) and "explore" in read_json(summary):
        log("explore %s: done before (%s)" % (base_policy, out))
        return read_json(summary)["explore"], 0.0
    # An interrupted exploration resumes (harvest-logs keeps the finished
    # compiles of the base harvest and of each round); only one interrupted
    # after it wrote its table is refused by harvest-logs, so it starts over.
    if os.path.exists(os.path.join(out, "explore.jsonl")):
        shutil.rmtree(out)
    seconds = run([tool(args, "harvest-logs"), "--corpus=" + args.train_corpus, "--output_dir=" + out,
                   "--policy=" + base_policy, "--explore=%d" % args.explore] + harvest_flags(args))
    found = read_json(summary)["explore"]
    log("explore %s: %d modules, %d improved, total %d -> %d (%.0f s)" % (
        base_policy, found["modules"], found["improved"], found["base_total_size"], found["kept_total_size"],
        seconds))
    return found, seconds


def train(args, harvests, vocab, out):
    report_path = out + ".report.json"
    if os.path.exists(report_path) and os.path.exists(os.path.join(out, "model.tflite")):
        log("train %s: done before" % out)
        return read_json(report_path), 0.0
    command = [sys.executable, "-m", "mlgo_corpus.train", "--vocab=" + vocab, "--output=" + out,
               "--epochs=%d" % args.epochs, "--learning_rate=%g" % args.learning_rate, "--seed=%d" % args.seed,
               "--mlgo_policy=" + tool(args, "mlgo-policy")] + ["--harvest=" + h for h in harvests]
    started = time.time()
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    report = json.loads(done.stdout)
    with open(report_path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    return report, time.time() - started


def evaluate(args, name, corpus, policy, out):
    """--policies=default,tflite:POLICY on one held-out corpus: per-object and linked totals."""
    evaluation = os.path.join(out, "evaluation.json")
    seconds = 0.0
    if not os.path.exists(evaluation):  # an interrupted batch resumes
        command = [tool(args, "harvest-logs"), "--corpus=" + corpus, "--output_dir=" + out,
                   "--policies=default,tflite:" + os.path.abspath(policy),
                   "--baseline_cache=" + os.path.join(args.work, "baselines")] + harvest_flags(args)
        if name in args.links:
            command.append("--link=" + args.links[name])
        seconds = run(command)
    result = read_json(evaluation)
    default, trained = result["policies"][0], result["policies"][1]
    row = {"program": name, "modules": result["modules"], "failed_cells": result["failed_cells"],
           "default_size": default["native_size"], "policy_size": trained["native_size"],
           "change": trained["native_size"] / default["native_size"] - 1 if default["native_size"] else None,
           "default_dir": default["directory"], "policy_dir": trained["directory"]}
    if "linked" in trained and trained["linked"]["status"] == "ok" and default.get("linked", {}).get("status") == "ok":
        row["linked_default_text"] = default["linked"]["text"]
        row["linked_policy_text"] = trained["linked"]["text"]
        row["linked_text_change"] = trained["linked"]["text_change"]
    elif "linked" in trained:
        row["linked_status"] = trained["linked"]["status"] + ": " + trained["linked"]["reason"]
    return row, seconds


def percent(x):
    return "" if x is None else "%+.2f%%" % (100 * x)


def heldout_programs(parser, args):
    """[(name, corpus)] of --heldout NAME=DIR; sets args.links from --link NAME=TEMPLATE."""
    heldout = []
    for item in args.heldout:
        name, _, corpus = item.partition("=")
        if not name or not corpus:
            parser.error("--heldout takes NAME=DIR, not %r" % item)
        heldout.append((name, corpus))
    args.links = {}
    for item in args.link:
        name, _, template = item.partition("=")
        if name not in dict(heldout):
            parser.error("--link %r names no --heldout program" % item)
        args.links[name] = template
    return heldout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train_corpus", required=True, help="the corpus to explore and train on")
    parser.add_argument("--heldout", action="append", default=[], metavar="NAME=DIR",
                        help="a held-out corpus to evaluate each round's policy on (repeatable)")
    parser.add_argument("--link", action="append", default=[], metavar="NAME=TEMPLATE",
                        help="harvest-logs --link template of held-out NAME, e.g. "
                             "'lua=clang-22 -fuse-ld=lld {objects} -lm -o {output}' (repeatable)")
    parser.add_argument("--work", required=True, help="where every step's output goes (a rerun resumes)")
    parser.add_argument("--rounds", type=int, default=2, help="BC-Max rounds (default 2)")
    parser.add_argument("--explore", type=int, default=7, help="explored trajectories per module (default 7)")
    # Not ml-compiler-opt's 1 epoch at 0.01: on a corpus of this size that
    # learns only the majority decision (models/inliner-oz/README.md).
    parser.add_argument("--epochs", type=int, default=20, help="training epochs per round (default 20)")
    parser.add_argument("--learning_rate", type=float, default=0.1, help="SGD learning rate (default 0.1)")
    parser.add_argument("--seed", type=int, default=0, help="the trainer's seed (default 0)")
    parser.add_argument("--compiler", default="clang", choices=["clang", "opt"],
                        help="harvest-logs --compiler (default clang: each module's own command line)")
    parser.add_argument("--compilation_timeout", type=int, default=300,
                        help="seconds per compile (default 300: a large module explored 8 times)")
    parser.add_argument("--tools_dir", default="", help="the mlgo-corpus tools' directory (default: PATH)")
    args = parser.parse_args()
    if args.rounds < 1 or args.explore < 1:
        parser.error("--rounds and --explore must be at least 1")
    heldout = heldout_programs(parser, args)
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    started = time.time()

    explorations = [os.path.join(args.work, "explore", "default")]
    found, _ = explore(args, "default", explorations[0])
    vocab = os.path.join(args.work, "vocab")
    if not os.path.isdir(vocab) or not os.listdir(vocab):
        run([tool(args, "training-log"), "vocab", "--output_dir=" + vocab, os.path.join(explorations[0], "logs")])
    default_train_total = found["base_total_size"]

    rounds = []
    for r in range(1, args.rounds + 1):
        round_dir = os.path.join(args.work, "round-%d" % r)
        os.makedirs(round_dir, exist_ok=True)
        policy = os.path.join(round_dir, "policy")
        report, train_seconds = train(args, explorations, vocab, policy)
        check = report["export_check"]
        verdict = ("the exported model decides as torch on all %d observations" % check["observations"]
                   if check.get("ok") else "not checked: " + check.get("reason", "?"))
        log("round %d: trained on %d steps of %d modules (%.0f s): loss %.4f, accuracy %.3f; %s" % (
            r, report["samples"], report["modules"], train_seconds, report["final_loss"], report["accuracy"],
            verdict))
        rows = []
        for name, corpus in heldout:
            row, _ = evaluate(args, name, corpus, policy, os.path.join(round_dir, "eval", name))
            rows.append(row)
            log("round %d: %s: per object %d -> %d (%s)%s" % (
                r, name, row["default_size"], row["policy_size"], percent(row["change"]),
                "; linked text %d -> %d (%s)" % (row["linked_default_text"], row["linked_policy_text"],
                                                 percent(row["linked_text_change"]))
                if "linked_text_change" in row else ""))
        # The policy's own trajectories join the next round's baselines; their
        # base total is the policy's size on the training corpus.
        mine = os.path.join(args.work, "explore", "policy-%d" % r)
        if r < args.rounds:
            policy_found, _ = explore(args, "tflite:" + os.path.abspath(policy), mine)
            explorations.append(mine)
            train_total = policy_found["base_total_size"]
        else:
            train_total = None
        total_default = sum(row["default_size"] for row in rows)
        total_policy = sum(row["policy_size"] for row in rows)
        rounds.append({"round": r, "policy": policy, "training": report, "train_seconds": train_seconds,
                       "train_corpus_default": default_train_total, "train_corpus_policy": train_total,
                       "heldout": rows, "heldout_default": total_default, "heldout_policy": total_policy,
                       "heldout_change": total_policy / total_default - 1 if total_default else None})

    best = min(rounds, key=lambda x: (x["heldout_change"] if x["heldout_change"] is not None else 0, x["round"]))
    best_dir = os.path.join(args.work, "best")
    if os.path.exists(best_dir):
        shutil.rmtree(best_dir)
    shutil.copytree(best["policy"], os.path.join(best_dir, "policy"))
    for row in best["heldout"]:
        run([tool(args, "compare-harvests"), row["default_dir"], row["policy_dir"],
             "--html=" + os.path.join(best_dir, row["program"] + ".html")], stdout=subprocess.DEVNULL)
    report = {"rounds": rounds, "best_round": best["round"], "seconds": time.time() - started,
              "explore": args.explore, "epochs": args.epochs, "learning_rate": args.learning_rate,
              "seed": args.seed}
    with open(os.path.join(args.work, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)

    print("round  held-out program      default     policy   change   linked text change")
    for x in rounds:
        for row in x["heldout"]:
            print("%5d  %-18s %10d %10d %8s   %s" % (x["round"], row["program"], row["default_size"],
                                                   row["policy_size"], percent(row["change"]),
                                                   percent(row.get("linked_text_change"))))
        print("%5d  %-18s %10d %10d %8s" % (x["round"], "(all held-out)", x["heldout_default"], x["heldout_policy"],
                                            percent(x["heldout_change"])))
    print("best round: %d (%s); %.0f s in all; report: %s" % (
        best["round"], best_dir, report["seconds"], os.path.join(args.work, "report.json")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

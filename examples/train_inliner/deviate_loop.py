#!/usr/bin/python3
"""Train an inliner that deviates from -Oz only where it pays, in one command.

  1. rollouts: harvest-logs --explore=K --explore_order=rollouts:first over
     the training corpus (plugin mode through the compile server, forked:
     each module's first K decisions flipped one at a time, the default
     followed after each flip);
  2. train: python3 -m mlgo_corpus.deviate on the rollouts, the validation
     projects held out; it exports one candidate policy per flip rate;
  3. choose: every candidate, and the default, compiled over each validation
     project (harvest-logs --policies); the candidate with the smallest
     validation total wins, or none (the policy then never deviates) when no
     candidate is smaller than the default;
  4. export the chosen policy and check that it decides as torch on every
     logged observation (the trainer's export check);
  5. evaluate it once on each held-out program, per object and linked.
Settings are chosen on the validation projects only; held-out programs
are compiled once, with the policy that ships.

usage:
  deviate_loop.py --train_corpus=DIR --validation_projects=A,B --work=DIR
                  [--heldout=NAME=DIR ...] [--link=NAME=TEMPLATE ...]
                  [--explore=K] [--rollout_modules_filter=REGEX] [--epochs=N]
                  [--learning_rate=F] [--seed=S] [--tools_dir=DIR]

--train_corpus is a combined corpus (combine-training-corpus) whose direct
subdirectories are the projects (build_training_corpus.sh makes one).
Everything goes under --work and a rerun resumes: a step whose output is
complete is not redone. Progress on stderr; the final report on stdout and
in WORK/report.json; WORK/policy is the chosen policy.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bc_max import evaluate, heldout_programs, percent, read_json, run, tool  # noqa: E402  (the same steps)


def log(message):
    print("deviate_loop: " + message, file=sys.stderr, flush=True)


def rollouts(args):
    out = os.path.join(args.work, "rollouts")
    summary = os.path.join(out, "summary.json")
    if os.path.exists(summary) and "explore" in read_json(summary):
        log("rollouts: done before (%s)" % out)
        return read_json(summary)["explore"], 0.0
    seconds = run([tool(args, "harvest-logs"), "--corpus=" + args.train_corpus, "--output_dir=" + out,
                   "--mode=plugin", "--compiler=opt", "--decision_sites", "--progress_interval=0",
                   "--explore=%d" % args.explore, "--explore_order=rollouts:first",
                   "--compilation_timeout=%d" % args.compilation_timeout] +
                  (["--modules_filter=" + args.rollout_modules_filter] if args.rollout_modules_filter else []))
    found = read_json(summary)["explore"]
    log("rollouts: %d modules, %d trajectories (%.0f s)" % (found["modules"], found.get("trajectories", 0), seconds))
    return found, seconds


def train(args, harvest):
    work = os.path.join(args.work, "train")
    report_path = os.path.join(work, "report.json")
    if os.path.exists(report_path) and "candidates" in read_json(report_path):
        log("train: done before (%s)" % work)
        return read_json(report_path), 0.0
    started = time.time()
    subprocess.run([sys.executable, "-m", "mlgo_corpus.deviate", "--harvest=" + harvest, "--work=" + work,
                    "--validation_projects=" + args.validation_projects, "--candidates", "--threshold=never",
                    "--epochs=%d" % args.epochs, "--learning_rate=%g" % args.learning_rate, "--seed=%d" % args.seed,
                    "--mlgo_policy=" + tool(args, "mlgo-policy")], check=True, stdout=subprocess.DEVNULL)
    return read_json(report_path), time.time() - started


def validate(args, candidates):
    """The validation projects' modules compiled with the default and every
    candidate: each candidate's total native size, and the default's."""
    out = os.path.join(args.work, "validate")
    if not os.path.exists(os.path.join(out, "evaluation.json")):
        projects = "|".join(re.escape(p) for p in args.validation_projects.split(","))
        run([tool(args, "harvest-logs"), "--corpus=" + args.train_corpus, "--output_dir=" + out,
             "--modules_filter=(?:%s)/" % projects, "--mode=plugin", "--compiler=opt", "--progress_interval=0",
             "--policies=" + ",".join(["default"] + ["tflite:" + c["policy"] for c in candidates])])
    result = read_json(os.path.join(out, "evaluation.json"))
    if result["failed_cells"]:
        sys.exit("deviate_loop: validation: %d compiles failed; see %s" % (result["failed_cells"], out))
    return [p["native_size"] for p in result["policies"][1:]], result["policies"][0]["native_size"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train_corpus", required=True, help="a combined corpus, one subdirectory per project")
    parser.add_argument("--validation_projects", required=True, metavar="A,B,...",
                        help="training projects held out to choose the threshold")
    parser.add_argument("--heldout", action="append", default=[], metavar="NAME=DIR",
                        help="a held-out corpus the chosen policy is evaluated on (repeatable)")
    parser.add_argument("--link", action="append", default=[], metavar="NAME=TEMPLATE",
                        help="harvest-logs --link template of held-out NAME (repeatable)")
    parser.add_argument("--work", required=True, help="where every step's output goes (a rerun resumes)")
    parser.add_argument("--explore", type=int, default=150, help="decisions rolled out per module (default 150)")
    parser.add_argument("--rollout_modules_filter", default="", metavar="REGEX",
                        help="roll out only the modules this harvest-logs --modules_filter matches (e.g. to leave "
                             "out a module whose compile takes minutes)")
    parser.add_argument("--epochs", type=int, default=30, help="training epochs (default 30)")
    parser.add_argument("--learning_rate", type=float, default=0.001, help="Adam's learning rate (default 0.001)")
    parser.add_argument("--seed", type=int, default=0, help="the trainer's seed (default 0)")
    parser.add_argument("--compiler", default="clang", choices=["clang", "opt"],
                        help="harvest-logs --compiler of the held-out evaluation (default clang)")
    parser.add_argument("--compilation_timeout", type=int, default=3600,
                        help="seconds per compile (default 3600: a base compile waits for its forked rollouts)")
    parser.add_argument("--tools_dir", default="", help="the mlgo-corpus tools' directory (default: PATH)")
    args = parser.parse_args()
    if args.explore < 1 or args.epochs < 1:
        parser.error("--explore and --epochs must be at least 1")
    heldout = heldout_programs(parser, args)
    args.work = os.path.abspath(args.work)
    args.train_corpus = os.path.abspath(args.train_corpus)
    os.makedirs(args.work, exist_ok=True)
    started = time.time()

    found, rollout_seconds = rollouts(args)
    report, train_seconds = train(args, os.path.join(args.work, "rollouts"))
    validation = report["validation"]
    log("train: %d decisions to train on, %d to validate; validation AUC %s (%.0f s)" % (
        report["train"]["decisions"], validation["decisions"],
        "%.3f" % validation["auc"] if validation["auc"] is not None else "undefined (one class)", train_seconds))
    candidates = report["candidates"]
    totals, default_total = validate(args, candidates)
    for c, total in zip(candidates, totals):
        c["validation_size"] = total
        log("validate: flip rate %g (threshold %.4f): %d -> %d (%s); rollouts promised %+d bytes" % (
            c["rate"], c["threshold"], default_total, total, percent(total / default_total - 1), -c["gain"]))
    best = min(range(len(candidates)), key=lambda i: (totals[i], candidates[i]["rate"]))
    chosen = candidates[best] if totals[best] < default_total else None
    threshold = "%r" % chosen["threshold"] if chosen else "never"
    log("choose: %s" % ("flip rate %g" % chosen["rate"] if chosen else "none is smaller: never deviate"))

    policy = os.path.join(args.work, "policy")
    done = subprocess.run([sys.executable, "-m", "mlgo_corpus.deviate", "--harvest=" + os.path.join(
        args.work, "rollouts"), "--work=" + os.path.join(args.work, "final"), "--output=" + policy,
        "--validation_projects=" + args.validation_projects, "--threshold=" + threshold,
        "--epochs=%d" % args.epochs, "--learning_rate=%g" % args.learning_rate, "--seed=%d" % args.seed,
        "--mlgo_policy=" + tool(args, "mlgo-policy")], stdout=subprocess.PIPE, text=True)
    final = json.loads(done.stdout) if done.stdout.strip() else {}
    check = final.get("export_check", {})
    if done.returncode != 0 or not check.get("ok"):
        sys.exit("deviate_loop: the export check failed: %s" % json.dumps(check))
    log("export: decides as torch on all %d observations (%d deviations)" % (
        check["observations"], check["deviations"]))

    rows = []
    for name, corpus in heldout:
        row, _ = evaluate(args, name, corpus, policy, os.path.join(args.work, "heldout", name))
        rows.append(row)
        log("held out %s: per object %d -> %d (%s)%s" % (
            name, row["default_size"], row["policy_size"], percent(row["change"]),
            "; linked text %s" % percent(row["linked_text_change"]) if "linked_text_change" in row else ""))
    result = {"rollouts": found, "rollout_seconds": rollout_seconds, "train": report["train"],
              "validation": validation, "candidates": candidates, "validation_default_size": default_total,
              "chosen": chosen, "threshold": threshold, "export_check": check, "heldout": rows,
              "seconds": time.time() - started}
    with open(os.path.join(args.work, "report.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Deviate from -Oz only where it pays: an inlining policy learned from rollout gains.

The data is a rollouts harvest (`harvest-logs --mode=plugin --explore=K
--explore_order=rollouts:ORDER --decision_sites`). For each module:
  rollouts/<module>.log       the default heuristic's log, with two more
                              columns: base_native_size and rollout_native_size
                              (the module's native size when that one decision
                              is flipped and the default followed after it; -1
                              where it was not rolled out);
  rollouts/<module>.sites.jsonl  the base's sites: the default's cost_margin
                              at each decision;
  explore.jsonl               the rollout table, checked against the logs.

The method is a cost-sensitive classifier of "flipping the default pays".
Every rolled-out decision is an example: gain = base size - rollout size
(bytes), label gain > 0, weight |gain| + zero_weight. With that weighting the
weighted cross-entropy is minimised by p = (bytes saved by flipping) / (bytes
at stake), so flipping where p > 1/2 (score f > 0) is the rule that saves the
most bytes on decisions like the training ones, flip by flip. Rollouts of
single flips do not add up when a policy flips many decisions of a module,
so the threshold on f (the decision margin) is a setting, chosen on a
validation split of the training projects (offline here, by the rollout
gains it would collect; for real by compiling, in
examples/train_inliner/deviate_loop.py).

The network reads the compiler's 38 features, inlining_default and
cost_margin, each normalised against quantiles of the training split
([x, x*x, sqrt(x)], as features.normalize), through `layers` x Dense(width,
ReLU), to one flip score f. The exported policy (export_policy with
deviate_threshold) takes the default's decision unless f > threshold, where
it takes the other; with an infinite threshold it is -Oz, bit for bit.

    python3 -m mlgo_corpus.deviate --harvest=ROLLOUTS --validation_projects=zlib,lz4 \\
        --work=WORK --output=POLICY_DIR

See docs/python.md ("Deviating from -Oz").
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised where torch is absent
    raise ImportError("mlgo_corpus.deviate needs PyTorch (Debian: python3-torch)") from e

from ._directories import Harvest
from ._native import MlgoError
from .export import export_policy
from .features import NOT_INPUTS, Vocab, normalize
from .train import TIE, find_mlgo_policy, make_model, read_explore

# What the plugin feeds as cost_margin where the heuristic's cost is not
# variable (always or never inline): beyond any variable margin, signed by
# the default's decision (src/plugin/TFLiteInProcessPolicy.cpp).
MARGIN_SUREST = 1 << 31
# Columns of a rollout log that are labels, not inputs.
ROLLOUT_COLUMNS = frozenset({"base_native_size", "rollout_native_size"})
# The two inputs about the default heuristic, beside the compiler's features.
DEFAULT_INPUTS = ("cost_margin", "inlining_default")
WIDTH, LAYERS = 64, 2
NUM_QUANTILES = 1000


def margin_input(margin: Optional[int], default: int) -> int:
    """The cost_margin the model sees: the sites file's margin, or
    +-MARGIN_SUREST (the default's side) where it is null."""
    if margin is None:
        return MARGIN_SUREST if default else -MARGIN_SUREST
    return int(margin)


@dataclass
class RolloutData:
    """Every decision of the rollout logs, column by column (n decisions)."""
    modules: List[str] = field(default_factory=list)  # harvest-qualified module names
    projects: List[str] = field(default_factory=list)  # per module: the first component of its name
    features: Dict[str, np.ndarray] = field(default_factory=dict)  # name -> int64 (n,), with DEFAULT_INPUTS
    gain: np.ndarray = field(default_factory=lambda: np.zeros(0))  # float64 (n,): bytes a flip saves; nan: not rolled out
    module_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    step: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.gain)

    @property
    def default(self) -> np.ndarray:
        return self.features["inlining_default"]

    def rolled_out(self) -> np.ndarray:
        return ~np.isnan(self.gain)

    def project_mask(self, projects: Sequence[str]) -> np.ndarray:
        wanted = np.array([p in set(projects) for p in self.projects], dtype=bool)
        return wanted[self.module_index] if len(self.projects) else np.zeros(0, dtype=bool)


def _check_table(path: str, module: str, rows: List[dict], log_rollout: np.ndarray, base_size: int) -> None:
    """The rollout table's rows for `module` must be what its log says."""
    where = "%s: module %s" % (path, module)
    seen = set()
    for row in rows:
        if row.get("trajectory") == 0:
            if row.get("status") == "ok" and row.get("native_size") != base_size:
                raise MlgoError("%s: the base's size %s is not the log's base_native_size %d" % (
                    where, row.get("native_size"), base_size))
            continue
        step = row.get("flipped_step")
        if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step < len(log_rollout):
            raise MlgoError("%s: a rollout flips step %r, but its log has %d decisions" % (
                where, step, len(log_rollout)))
        if row.get("status") != "ok":
            continue
        if row.get("native_size") != int(log_rollout[step]):
            raise MlgoError("%s: the rollout of step %d has size %s in the table and %d in the log" % (
                where, step, row.get("native_size"), int(log_rollout[step])))
        seen.add(step)
    logged = set(np.nonzero(log_rollout >= 0)[0].tolist())
    if logged != seen:
        extra = sorted(logged - seen)
        raise MlgoError("%s: the log has rollouts the table does not list (step %s)" % (where, extra[:5]))


def _check_sites(harvest_dir: str, module: str, sites: List[object]) -> None:
    """Every record of a rollout sites file has a boolean default and an
    integer (or null) cost_margin: what the trainer reads of it."""
    for number, record in enumerate(sites, 1):
        ok = (isinstance(record, dict) and isinstance(record.get("default"), bool) and
              (record.get("cost_margin") is None or
               (isinstance(record["cost_margin"], int) and not isinstance(record["cost_margin"], bool))))
        if not ok:
            raise MlgoError("%s: rollouts/%s.sites.jsonl: line %d: not a decision site (a boolean default and an "
                            "integer or null cost_margin)" % (harvest_dir, module, number))


def load_rollouts(harvest_dirs: Sequence[str], progress: Callable[[str], None] = lambda s: None) -> RolloutData:
    """The decisions of every module of the harvests with its rollout gain,
    its default's cost_margin and the compiler's features; the rollout table
    (explore.jsonl) and the sites files are checked against the logs: a
    module, a step, a length or a size that does not match is an MlgoError
    naming the file."""
    if not harvest_dirs:
        raise ValueError("no harvest given")
    data = RolloutData()
    columns: Dict[str, List[np.ndarray]] = {}
    gains, module_index, steps = [], [], []
    names: Optional[List[str]] = None
    for harvest_dir in harvest_dirs:
        table_path = os.path.join(harvest_dir, "explore.jsonl")
        table = read_explore(harvest_dir)
        harvest = Harvest(harvest_dir)
        modules = {m.name: m for m in harvest if m.status == "ok"}
        unknown = sorted(set(table) - set(modules))
        if unknown:
            raise MlgoError("%s: the table names module %s, which the harvest did not compile" % (
                table_path, unknown[0]))
        for name in sorted(modules):
            module = modules[name]
            if module.log_path is None:  # no decision, no log, nothing rolled out
                if any(row.get("trajectory") != 0 for row in table.get(name, [])):
                    raise MlgoError("%s: the table has rollouts of module %s, which made no decision" % (
                        table_path, name))
                continue
            log = module.read_rollout_log()
            n = len(log)
            if name not in table:
                raise MlgoError("%s: no row for module %s, whose rollout log has %d decisions" % (
                    table_path, name, n))
            if not n:
                continue
            for column in ROLLOUT_COLUMNS:
                if column not in log.features:
                    raise MlgoError("%s: %s has no %s column" % (harvest_dir, name, column))
            base = log.features["base_native_size"].reshape(n)
            rollout = log.features["rollout_native_size"].reshape(n)
            if len(set(base.tolist())) != 1:
                raise MlgoError("%s: %s: base_native_size differs between steps" % (harvest_dir, name))
            _check_table(table_path, name, table[name], rollout, int(base[0]))
            sites = module.read_rollout_sites()
            if sites is None:
                raise MlgoError("%s: %s has no rollouts/%s.sites.jsonl (the cost margins); harvest in plugin mode" % (
                    harvest_dir, name, name))
            if len(sites) != n:
                raise MlgoError("%s: %s's sites file has %d records, its rollout log %d decisions" % (
                    harvest_dir, name, len(sites), n))
            default = log.features["inlining_default"].reshape(n)
            _check_sites(harvest_dir, name, sites)
            site_default = np.array([int(s["default"]) for s in sites], dtype=np.int64)
            if not np.array_equal(site_default, default):
                first = int(np.nonzero(site_default != default)[0][0])
                raise MlgoError("%s: %s's sites file disagrees with its rollout log at decision %d (default)" % (
                    harvest_dir, name, first))
            own = [f for f in log.feature_names if f not in NOT_INPUTS and f not in ROLLOUT_COLUMNS]
            if names is None:
                names = own
            elif own != names:
                raise MlgoError("%s: %s's log has other features than the first module's" % (harvest_dir, name))
            for f in own:
                columns.setdefault(f, []).append(log.features[f].reshape(n).astype(np.int64))
            columns.setdefault("inlining_default", []).append(default.astype(np.int64))
            columns.setdefault("cost_margin", []).append(np.array(
                [margin_input(s["cost_margin"], d) for s, d in zip(sites, default.tolist())], dtype=np.int64))
            gain = np.where(rollout >= 0, base.astype(np.float64) - rollout.astype(np.float64), np.nan)
            gains.append(gain)
            module_index.append(np.full(n, len(data.modules), dtype=np.int64))
            steps.append(np.arange(n, dtype=np.int64))
            data.modules.append(name if len(harvest_dirs) == 1 else "%s:%s" % (harvest_dir, name))
            data.projects.append(name.split("/", 1)[0])
        progress("deviate: %s: %d modules" % (harvest_dir, len(modules)))
    if not gains:
        raise MlgoError("%s: no decisions" % ", ".join(harvest_dirs))
    data.features = {k: np.concatenate(v) for k, v in columns.items()}
    data.gain = np.concatenate(gains)
    data.module_index = np.concatenate(module_index)
    data.step = np.concatenate(steps)
    return data


# --- Normalisation ----------------------------------------------------------------

def quantile_boundaries(values: np.ndarray, count: int = NUM_QUANTILES) -> np.ndarray:
    """`count` quantile edges of values, as features.Vocab reads them."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    if not len(values):
        return np.zeros(1, dtype=np.float32)
    edges = values[np.minimum((np.arange(count) * len(values)) // count, len(values) - 1)]
    return edges.astype(np.float32)


def write_vocab(features: Dict[str, np.ndarray], mask: np.ndarray, vocab_dir: str) -> Vocab:
    """<feature>.buckets for every input over the decisions in `mask`;
    inlining_default gets the one edge 1 (it is fed as it is, 0 or 1)."""
    os.makedirs(vocab_dir, exist_ok=True)
    for name, column in features.items():
        edges = (np.array([1.0], dtype=np.float32) if name == "inlining_default"
                 else quantile_boundaries(column[mask]))
        with open(os.path.join(vocab_dir, name + ".buckets"), "w", encoding="utf-8") as f:
            f.write("".join("%r\n" % float(e) for e in edges))
    return Vocab.load(vocab_dir)


# --- Training -------------------------------------------------------------------

@dataclass
class Fit:
    model: torch.nn.Sequential
    epoch_losses: List[float]


def fit(x: np.ndarray, gain: np.ndarray, zero_weight: float, epochs: int, learning_rate: float, seed: int,
        width: int = WIDTH, layers: int = LAYERS, batch_size: int = 256,
        progress: Callable[[str], None] = lambda s: None) -> Fit:
    """Adam on the weighted cross-entropy of "the flip pays" (gain > 0),
    each decision weighted by its bytes at stake |gain| + zero_weight
    (normalised to mean 1). Same seed, same network."""
    torch.manual_seed(seed)
    order_rng = np.random.default_rng(seed)
    model = make_model(x.shape[1], width, layers)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    yt = torch.from_numpy((gain > 0).astype(np.float32))
    w = np.abs(gain) + zero_weight
    wt = torch.from_numpy((w / w.mean()).astype(np.float32))
    losses = []
    for epoch in range(epochs):
        order = torch.from_numpy(order_rng.permutation(len(xt)))
        total, batches = 0.0, 0
        for start in range(0, len(xt), batch_size):
            idx = order[start:start + batch_size]
            optimizer.zero_grad()
            z = model(xt[idx])[:, 0]
            loss = (wt[idx] * torch.nn.functional.binary_cross_entropy_with_logits(z, yt[idx], reduction="none")).mean()
            loss.backward()
            optimizer.step()
            total += float(loss)
            batches += 1
        losses.append(total / max(batches, 1))
        progress("deviate: epoch %d/%d: mean loss %.6f" % (epoch + 1, epochs, losses[-1]))
    return Fit(model, losses)


def scores(model: torch.nn.Module, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)))[:, 0].numpy().astype(np.float64)


def auc(score: np.ndarray, positive: np.ndarray) -> float:
    """ROC AUC (ties count half); nan without both classes."""
    score, positive = np.asarray(score, dtype=np.float64), np.asarray(positive, dtype=bool)
    p, q = int(positive.sum()), int((~positive).sum())
    if not p or not q:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    sorted_scores = score[order]
    i = 0
    while i < len(score):  # average ranks over ties
        j = i
        while j + 1 < len(score) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1
        i = j + 1
    return float((ranks[positive].sum() - p * (p + 1) / 2.0) / (p * q))


def _finite(x: float) -> Optional[float]:
    """x, or None (JSON's null) where it is nan: the report stays JSON."""
    return None if math.isnan(x) else x


def threshold_table(score: np.ndarray, rolled: np.ndarray, gain: np.ndarray, rates: Sequence[float]) -> List[dict]:
    """For each flip rate r: the threshold above which the fraction r of
    these decisions scores (score: every decision, as the policy meets
    them; rolled: which were rolled out), the flips it makes, and what the
    rolled-out ones among them collect by their rollouts. (The classifier's
    own rule is f > 0; on little data it is not calibrated, so the rate,
    not 0, is the setting. Rollouts of the first K decisions of a module
    score otherwise than its later ones, so the rate is of all decisions.)"""
    table = []
    ordered = np.sort(score)[::-1]
    for rate in rates:
        k = int(math.floor(rate * len(score)))
        threshold = (float(ordered[k]) if k < len(ordered) else float(ordered[-1])) if len(score) else 0.0
        flips = score > threshold
        known = flips & rolled
        table.append({"rate": rate, "threshold": threshold, "flips": int(flips.sum()),
                      "rolled_out_flips": int(known.sum()), "paying": int((gain[known] > 0).sum()),
                      "gain": float(gain[known].sum())})
    return table


# --- Export and its check ---------------------------------------------------------

def export(model: torch.nn.Sequential, vocab_dir: str, out_dir: str, names: Sequence[str], threshold: float) -> None:
    export_policy(model, vocab_dir, out_dir, features=list(names), with_sqrt=True, deviate_threshold=threshold)


def policy_decisions(score: np.ndarray, default: np.ndarray, threshold: float) -> np.ndarray:
    """The exported policy's decisions: the default's, flipped where score > threshold."""
    return np.where(score > threshold, 1 - default, default).astype(np.int64)


def check_export(model: torch.nn.Sequential, policy_dir: str, features: Dict[str, np.ndarray], names: Sequence[str],
                 vocab: Vocab, threshold: float, mlgo_policy: Optional[str] = None) -> dict:
    """Runs the exported model.tflite under `mlgo-policy eval` (the plugin's
    evaluator) on every observation, fed the compiler's features,
    inlining_default and cost_margin by name, and compares each decision
    with torch's. A disagreement where |score - threshold| < TIE is a near
    tie, not a failure."""
    mlgo_policy = mlgo_policy or find_mlgo_policy()
    if not mlgo_policy:
        return {"checked": False, "reason": "mlgo-policy not found (PATH, or give --mlgo_policy)"}
    n = len(features["inlining_default"])
    score = scores(model, normalize(features, vocab, names, with_sqrt=True))
    ours = policy_decisions(score, features["inlining_default"], threshold)
    columns = [features[name].tolist() for name in names]
    with tempfile.TemporaryFile("w+") as observations:
        for row in zip(*columns):
            observations.write(json.dumps(dict(zip(names, row))) + "\n")
        observations.seek(0)
        run = subprocess.run([mlgo_policy, "eval", "--observations=-", policy_dir], stdin=observations,
                             capture_output=True, text=True)
    if run.returncode != 0:
        return {"checked": False, "ok": False, "reason": "mlgo-policy eval failed: " + run.stderr.strip()[-500:]}
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    if len(rows) != n:
        return {"checked": True, "ok": False, "reason": "mlgo-policy gave %d answers for %d observations" % (len(rows), n)}
    theirs = np.array([r["decision"] for r in rows], dtype=np.int64)
    clear = np.abs(score - threshold) >= TIE
    differ = np.nonzero((theirs != ours) & clear)[0]
    return {"checked": True, "ok": len(differ) == 0, "observations": n, "different_decisions": int(len(differ)),
            "near_ties": int((~clear).sum()), "deviations": int((ours != features["inlining_default"]).sum()),
            "evaluator": mlgo_policy}


# --- The command line ---------------------------------------------------------------

RATES = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05)


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 -m mlgo_corpus.deviate",
        description="Train an inlining policy that keeps -Oz's decision unless its classifier expects flipping it "
                    "to pay, from a rollouts harvest (harvest-logs --explore_order=rollouts:ORDER --decision_sites). "
                    "Progress on stderr, a JSON report on stdout and in WORK/report.json.")
    parser.add_argument("--harvest", action="append", required=True, metavar="DIR",
                        help="a rollouts harvest of the training corpus (repeatable)")
    parser.add_argument("--validation_projects", default="", metavar="A,B,...",
                        help="projects (first component of a module's name) whose decisions are held out of training "
                             "to choose the threshold and report the AUC; none: the threshold is --threshold")
    parser.add_argument("--work", required=True, metavar="DIR",
                        help="where the vocabulary, the network, the report and the candidates go")
    parser.add_argument("--output", metavar="POLICY_DIR",
                        help="the policy at the chosen threshold (model.tflite + output_spec.json)")
    parser.add_argument("--threshold", default="auto", metavar="F|auto|never",
                        help="the flip score above which the policy deviates: a number, never (the policy is -Oz), or "
                             "auto (the candidate whose flips collect the most rollout gain on the validation "
                             "projects; default)")
    parser.add_argument("--candidates", action="store_true",
                        help="also export a policy per flip rate %s of all the validation decisions to "
                             "WORK/candidates/rate-R/, for a real compile to choose among" % (list(RATES),))
    parser.add_argument("--epochs", type=int, default=30, metavar="N", help="passes over the data (default 30)")
    parser.add_argument("--learning_rate", type=float, default=0.001, metavar="F", help="Adam's (default 0.001)")
    parser.add_argument("--zero_weight", type=float, default=1.0, metavar="BYTES",
                        help="bytes added to every decision's weight, so that flips that change nothing count "
                             "(default 1)")
    parser.add_argument("--width", type=int, default=WIDTH, metavar="N", help="units per layer (default %d)" % WIDTH)
    parser.add_argument("--layers", type=int, default=LAYERS, metavar="N", help="hidden layers (default %d)" % LAYERS)
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seeds the initial weights and the shuffle: the same seed, the same policy (default 0)")
    parser.add_argument("--mlgo_policy", metavar="PATH",
                        help="the mlgo-policy tool that checks the export (default: PATH, then beside the package)")
    args = parser.parse_args(argv)
    for flag in ("epochs", "width", "layers"):
        if getattr(args, flag) < 1:
            parser.error("--%s must be at least 1" % flag)
    if args.learning_rate <= 0 or args.zero_weight < 0:
        parser.error("--learning_rate must be positive and --zero_weight not negative")
    if args.threshold not in ("auto", "never"):
        try:
            float(args.threshold)
        except ValueError:
            parser.error("--threshold: a number, auto or never, not %r" % args.threshold)
    if args.threshold == "auto" and not args.validation_projects:
        parser.error("--threshold=auto chooses on --validation_projects; give them or a --threshold")
    return args


def run(args: argparse.Namespace) -> dict:
    started = time.monotonic()
    torch.set_num_threads(1)  # the same sums in the same order: reproducible
    data = load_rollouts(args.harvest, _progress)
    validation = [p for p in args.validation_projects.split(",") if p]
    unknown = sorted(set(validation) - set(data.projects))
    if unknown:
        raise MlgoError("--validation_projects: no module of project %s (projects: %s)" % (
            unknown[0], ", ".join(sorted(set(data.projects)))))
    held = data.project_mask(validation)
    rolled = data.rolled_out()
    train_mask, val_mask = rolled & ~held, rolled & held
    if not train_mask.any():
        raise MlgoError("%s: no rolled-out decision to train on" % ", ".join(args.harvest))
    _progress("deviate: %d decisions, %d rolled out: %d to train on, %d to validate" % (
        len(data), int(rolled.sum()), int(train_mask.sum()), int(val_mask.sum())))

    vocab_dir = os.path.join(args.work, "vocab")
    vocab = write_vocab(data.features, ~held, vocab_dir)
    names = sorted(data.features)
    x = normalize(data.features, vocab, names, with_sqrt=True)
    result = fit(x[train_mask], data.gain[train_mask], args.zero_weight, args.epochs, args.learning_rate, args.seed,
                 args.width, args.layers, progress=_progress)
    torch.save(result.model.state_dict(), os.path.join(args.work, "network.pt"))
    score = scores(result.model, x)

    def summary(mask, every):
        g, s = data.gain[mask], score[mask]
        paying = g > 0
        return {"decisions": int(every.sum()), "rolled_out": int(mask.sum()), "paying": int(paying.sum()),
                "costing": int((g < 0).sum()), "gain_if_all_paying_flipped": float(g[paying].sum()),
                "auc": _finite(auc(s[g != 0], paying[g != 0])),
                "thresholds": threshold_table(score[every], rolled[every], np.nan_to_num(data.gain[every]), RATES)}

    report = {"harvests": list(args.harvest), "validation_projects": validation, "features": names,
              "epochs": args.epochs, "learning_rate": args.learning_rate, "zero_weight": args.zero_weight,
              "width": args.width, "layers": args.layers, "seed": args.seed, "epoch_losses": result.epoch_losses,
              "train": summary(train_mask, ~held), "validation": summary(val_mask, held) if val_mask.any() else None}
    if args.threshold == "never":
        threshold = math.inf
    elif args.threshold == "auto":
        if not val_mask.any():
            raise MlgoError("--validation_projects %s: no rolled-out decision" % ",".join(validation))
        best = max(report["validation"]["thresholds"], key=lambda t: (t["gain"], -t["rate"]))
        threshold = best["threshold"] if best["gain"] > 0 else math.inf
    else:
        threshold = float(args.threshold)
    report["threshold"] = threshold if math.isfinite(threshold) else "never"

    if args.candidates and report["validation"]:
        report["candidates"] = []
        for t in report["validation"]["thresholds"]:
            out = os.path.join(args.work, "candidates", "rate-%g" % t["rate"])
            export(result.model, vocab_dir, out, names, t["threshold"])
            report["candidates"].append(dict(t, policy=out))
    if args.output:
        export(result.model, vocab_dir, args.output, names, threshold)
        report["exported"] = os.path.join(args.output, "model.tflite")
        report["export_check"] = check_export(result.model, args.output, data.features, names, vocab, threshold,
                                              args.mlgo_policy)
    report["seconds"] = time.monotonic() - started
    with open(os.path.join(args.work, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    return report


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        os.makedirs(args.work, exist_ok=True)
        report = run(args)
    except (MlgoError, OSError, ValueError, KeyError) as e:
        print("mlgo_corpus.deviate: error: %s" % (e.args[0] if isinstance(e, KeyError) and e.args else e),
              file=sys.stderr)
        return 1
    print(json.dumps(report))
    check = report.get("export_check", {})
    return 0 if check.get("ok", not check.get("checked")) else 1


if __name__ == "__main__":
    sys.exit(main())

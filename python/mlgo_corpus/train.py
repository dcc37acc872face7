"""Weighted behavioural cloning (BC-Max) of the inliner, in PyTorch.

ml-compiler-opt's imitation-learning trainer (weighted_bc_trainer), on the
harvests `harvest-logs --explore=K` writes (one per base policy):

1. BC-Max data: for each module, the kept (smallest) trajectory of the
   harvest whose kept native size is smallest (the first harvest on ties);
   its log gives the steps (features, action = inlining_decision), and its
   size bucket (SIZE_THRESHOLDS) labels every step.
2. Profiles: `_max` (each module's chosen size) and, per harvest, `_pol`
   (its base trajectory's size), in ml-compiler-opt's profile JSON; pairs
   (comparator, eval) drive TrainingWeights, the per-bucket distribution p
   by exponentiated gradient; a sample of bucket b weighs min(p) / p_b.
3. The network: features in sorted name order, normalised with_sqrt
   ([x, x*x, sqrt(x)]), 4 x Dense(100, ReLU), one logit; sigmoid
   cross-entropy weighted per sample, plain SGD, shuffled batches of 128
   (remainder dropped).
4. Export: export_policy wants two logits (no, yes), so the one logit z
   becomes [0, z]; the exported arg-max inlines iff z > 0 (a tie, z == 0,
   does not inline, as ARG_MAX picks the first), exactly what decide()
   says. check_export runs the exported model.tflite with `mlgo-policy eval`
   (our native evaluator, the one harvest-logs --policy=tflite: uses) on the
   observations and compares with torch.

    python3 -m mlgo_corpus.train --harvest=bc-max --vocab=vocab --output=policy

See docs/python.md ("BC-Max training").
"""

import argparse
import bisect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised where torch is absent
    raise ImportError("mlgo_corpus.train needs PyTorch (Debian: python3-torch)") from e

from ._directories import Harvest
from ._log import Log
from ._native import MlgoError
from .export import export_policy
from .features import NOT_INPUTS, Vocab, normalize

# ml-compiler-opt's size buckets (bytes; imitation_learning.gin's partitions):
# 19 thresholds, 20 buckets.
SIZE_THRESHOLDS: Tuple[float, ...] = (285.0, 376.0, 452.0, 512.0, 571.0, 627.5, 720.0, 809.5, 1304.0, 1832.0,
                                      2467.0, 3344.0, 4545.0, 6459.0, 9845.0, 17953.0, 29430.5, 85533.5, 124361.0)
WIDTH, LAYERS = 100, 4
# Below this, the native evaluator and torch may order a near-zero logit
# differently (they sum in different orders): not a disagreement.
TIE = 1e-4


def size_bucket(loss: float, thresholds: Sequence[float] = SIZE_THRESHOLDS) -> int:
    """The number of thresholds <= loss: a loss equal to a threshold goes up."""
    return bisect.bisect_right(list(thresholds), loss)


# --- Profiles ---------------------------------------------------------------

def write_profile(path: str, entries: Sequence[Mapping]) -> None:
    """ml-compiler-opt's profile file: a JSON array (2-space indent) of
    {"module_name", "loss", "horizon"}; loss a float (bytes), horizon the
    trajectory's decisions."""
    rows = [{"module_name": e["module_name"], "loss": float(e["loss"]), "horizon": int(e["horizon"])}
            for e in entries]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=2)
        f.write("\n")


def read_profile(path: str) -> Dict[str, float]:
    """module_name -> loss of a profile file (horizon is not needed, as in
    ml-compiler-opt's trainer). Errors name the file and the entry."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)
    except (OSError, ValueError) as e:
        raise MlgoError("%s: not a profile file: %s" % (path, e)) from None
    if not isinstance(rows, list):
        raise MlgoError("%s: not a profile file: expected a JSON array" % path)
    losses: Dict[str, float] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("module_name"), str):
            raise MlgoError("%s: entry %d: no string module_name" % (path, i))
        loss = row.get("loss")
        if isinstance(loss, bool) or not isinstance(loss, (int, float)):
            raise MlgoError("%s: entry %d (%s): loss is not a number" % (path, i, row["module_name"]))
        losses[row["module_name"]] = float(loss)
    return losses


# --- Bucket weights ----------------------------------------------------------

def _softmax(w: np.ndarray) -> np.ndarray:
    e = np.exp(w - w.max())
    return e / e.sum()


class TrainingWeights:
    """ml-compiler-opt's per-bucket distribution p, by exponentiated gradient
    on the regret of an eval profile against a comparator.

    Starts from w = ones (p uniform). Each update(comparator, evaluated):
    regret_m = eval loss - comparator loss for the modules both have, in the
    bucket of the *eval* loss; L_b = sum of max(regret, 0) over bucket b,
    scaled by max|L_b| + 1e-6; w -= eta * L; q = softmax(w); p becomes the
    running average of the uniform start and every q. Buckets where the eval
    policy loses get a lower p, so their samples weigh more:
    weight = min(p) / p[label], in (0, 1].
    """

    def __init__(self, thresholds: Sequence[float] = SIZE_THRESHOLDS, eta: float = 1.0):
        self.thresholds = list(thresholds)
        self.eta = eta
        self.w = np.ones(len(self.thresholds) + 1)
        self.p = _softmax(self.w)
        self.rounds = 1
        self.skipped: List[str] = []  # modules of one profile only (not comparable)

    @property
    def buckets(self) -> int:
        return len(self.w)

    def bucket_regret(self, comparator: Mapping[str, float], evaluated: Mapping[str, float]) -> np.ndarray:
        """L_b before scaling."""
        regret = np.zeros(self.buckets)
        for module, loss in evaluated.items():
            if module not in comparator:
                self.skipped.append(module)
                continue
            regret[size_bucket(loss, self.thresholds)] += max(loss - comparator[module], 0.0)
        self.skipped += [m for m in comparator if m not in evaluated]
        return regret

    def update(self, comparator: Mapping[str, float], evaluated: Mapping[str, float]) -> np.ndarray:
        """One pair; returns the new p."""
        regret = self.bucket_regret(comparator, evaluated)
        regret = regret / (np.abs(regret).max() + 1e-6)
        self.w = self.w - self.eta * regret
        q = _softmax(self.w)
        self.rounds += 1
        self.p = ((self.rounds - 1) * self.p + q) / self.rounds
        return self.p

    def sample_weights(self, labels: np.ndarray) -> np.ndarray:
        """min(p) / p[label] for each sample's bucket label (float32)."""
        labels = np.asarray(labels)
        if len(labels) and (labels.min() < 0 or labels.max() >= self.buckets):
            raise ValueError("a label outside the %d buckets" % self.buckets)
        return (self.p.min() / self.p[labels]).astype(np.float32)


# --- BC-Max data from explore harvests ----------------------------------------

@dataclass
class ChosenTrajectory:
    module: str
    harvest: str       # the harvest directory whose kept trajectory won
    native_size: int   # its size: the module's _max loss
    decisions: List[int]
    log: Optional[Log] = None


@dataclass
class BCMaxData:
    """The chosen trajectories' steps, side by side, in module order."""
    harvests: List[str]
    chosen: List[ChosenTrajectory]
    features: Dict[str, np.ndarray]          # name -> (steps, 1), every scalar log feature
    actions: np.ndarray                      # (steps,) int64: inlining_decision
    labels: np.ndarray                       # (steps,) int64: size bucket of the module's chosen loss
    max_profile: List[dict]                  # _max: the chosen trajectories
    pol_profiles: List[List[dict]] = field(default_factory=list)  # _pol of each harvest: its base trajectory

    def __len__(self) -> int:
        return len(self.actions)

    def default_pairs(self) -> List[Tuple[Dict[str, float], Dict[str, float]]]:
        """(comparator = _max, eval = _pol) for each harvest, in order."""
        best = _losses(self.max_profile)
        return [(best, _losses(pol)) for pol in self.pol_profiles]


def _losses(profile: Sequence[Mapping]) -> Dict[str, float]:
    return {e["module_name"]: float(e["loss"]) for e in profile}


def read_explore(harvest_dir: str) -> Dict[str, List[dict]]:
    """module -> its explore.jsonl lines (base first), in file order."""
    path = os.path.join(harvest_dir, "explore.jsonl")
    if not os.path.isfile(path):
        raise MlgoError("%s: missing: not a harvest-logs --explore=K harvest" % path)
    trajectories: Dict[str, List[dict]] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                t = json.loads(line)
            except ValueError as e:
                raise MlgoError("%s: line %d: not JSON: %s" % (path, number, e)) from None
            missing = [k for k in ("module", "trajectory", "kept", "status") if not isinstance(t, dict) or k not in t]
            if missing:
                raise MlgoError("%s: line %d: not an explore trajectory (no %s)" % (path, number, ", ".join(missing)))
            trajectories.setdefault(t["module"], []).append(t)
    return trajectories


def _size_of(t: dict) -> Optional[int]:
    return t.get("native_size") if t.get("status") == "ok" else None


def load_harvests(harvest_dirs: Sequence[str], progress: Callable[[str], None] = lambda s: None) -> BCMaxData:
    """BC-Max over explore harvests (one per base policy)."""
    if not harvest_dirs:
        raise ValueError("no harvest given")
    explored = [read_explore(d) for d in harvest_dirs]
    harvests = [Harvest(d) for d in harvest_dirs]
    modules: List[str] = []
    for table in explored:  # the first harvest's order, then modules only later ones have
        modules += [m for m in table if m not in modules]

    chosen: List[ChosenTrajectory] = []
    pol_profiles: List[List[dict]] = [[] for _ in harvest_dirs]
    for module in modules:
        best: Optional[Tuple[int, int, dict]] = None  # (size, harvest index, trajectory)
        for h, table in enumerate(explored):
            lines = table.get(module, [])
            base = [t for t in lines if t["trajectory"] == 0 and _size_of(t) is not None]
            if base and base[0].get("decisions"):  # no decisions, no trajectory (ml-compiler-opt's rule)
                pol_profiles[h].append({"module_name": module, "loss": float(base[0]["native_size"]),
                                        "horizon": len(base[0].get("decisions") or [])})
            kept = [t for t in lines if t["kept"] and _size_of(t) is not None]
            if kept and (best is None or kept[0]["native_size"] < best[0]):  # strict: ties stay with the first
                best = (kept[0]["native_size"], h, kept[0])
        if best is None:
            progress("train: %s: no successful trajectory in any harvest; left out" % module)
            continue
        size, h, trajectory = best
        if not trajectory.get("decisions"):
            continue  # a module without decisions has no log and teaches nothing; in no profile either
        chosen.append(ChosenTrajectory(module, harvest_dirs[h], int(size), list(trajectory["decisions"] or [])))
        chosen[-1].log = _read_kept_log(harvests[h], harvest_dirs[h], module, chosen[-1].decisions)

    return _assemble(list(harvest_dirs), chosen, pol_profiles)


def _read_kept_log(harvest: Harvest, harvest_dir: str, module: str, decisions: List[int]) -> Log:
    path = os.path.join(harvest_dir, "logs", module + ".log")
    if module not in harvest or harvest[module].log_path is None:
        raise MlgoError("%s: missing: the kept trajectory of %s has no log in the journal" % (path, module))
    try:
        log = harvest[module].read_log()
    except MlgoError as e:
        raise MlgoError("%s: cannot read the kept trajectory's log: %s" % (path, e)) from None
    if log.decisions is None or log.decision_name != "inlining_decision":
        raise MlgoError("%s: not an inliner log (no inlining_decision)" % path)
    logged = log.decisions.reshape(len(log), -1)[:, 0].tolist()
    if logged != decisions:
        raise MlgoError("%s: its %d decisions are not the kept trajectory's %d of explore.jsonl" % (
            path, len(logged), len(decisions)))
    return log


def _scalar_features(log: Log) -> List[str]:
    return [s["name"] for s in log.specs if int(np.prod(s["shape"])) == 1 and s["name"] != log.decision_name]


def _assemble(harvest_dirs, chosen, pol_profiles) -> BCMaxData:
    with_steps = [c for c in chosen if len(c.log)]
    names = _scalar_features(with_steps[0].log) if with_steps else []
    for c in with_steps:
        missing = [n for n in names if n not in c.log.features]
        if missing:
            raise MlgoError("%s: lacks features the other logs have: %s" % (
                os.path.join(c.harvest, "logs", c.module + ".log"), ", ".join(missing)))
    features = {n: np.concatenate([c.log.features[n].reshape(len(c.log), 1) for c in with_steps])
                if with_steps else np.zeros((0, 1), np.int64) for n in names}
    actions = (np.concatenate([c.log.decisions.reshape(len(c.log), -1)[:, 0] for c in with_steps]).astype(np.int64)
               if with_steps else np.zeros(0, np.int64))
    labels = (np.concatenate([np.full(len(c.log), size_bucket(c.native_size), np.int64) for c in with_steps])
              if with_steps else np.zeros(0, np.int64))
    max_profile = [{"module_name": c.module, "loss": float(c.native_size), "horizon": len(c.decisions)}
                   for c in chosen]
    return BCMaxData(harvest_dirs, chosen, features, actions, labels, max_profile, pol_profiles)


def write_profiles(data: BCMaxData, prefix: str) -> List[str]:
    """PREFIX_max.json and the harvests' PREFIX_pol.json (one harvest) or
    PREFIX_pol<i>.json (harvest i of several). Returns the paths, _max first."""
    paths = [prefix + "_max.json"]
    write_profile(paths[0], data.max_profile)
    for i, pol in enumerate(data.pol_profiles):
        paths.append(prefix + ("_pol.json" if len(data.pol_profiles) == 1 else "_pol%d.json" % i))
        write_profile(paths[-1], pol)
    return paths


def input_features(data: BCMaxData, vocab: Vocab, vocab_dir: str) -> List[str]:
    """The network's inputs: every scalar log feature but the decision and
    inlining_default, sorted; each needs its quantile file."""
    wanted = sorted(n for n in data.features if n not in NOT_INPUTS)
    missing = [n for n in wanted if n not in vocab.boundaries]
    if missing:
        raise MlgoError("%s: missing: the logs have %s; run `training-log vocab` over the logs" % (
            os.path.join(vocab_dir, missing[0] + ".buckets"), ", ".join(missing)))
    return vocab.input_features(wanted)


# --- The network ---------------------------------------------------------------

def make_model(inputs: int, width: int = WIDTH, layers: int = LAYERS) -> torch.nn.Sequential:
    """ml-compiler-opt's: `layers` x Dense(width, ReLU) with kernels
    ~ Normal(0, 0.01^2), then Dense(1) (Glorot-uniform, Keras' default);
    biases 0. Seed torch first for a reproducible start."""
    modules: List[torch.nn.Module] = []
    fan_in = inputs
    for _ in range(layers):
        linear = torch.nn.Linear(fan_in, width)
        torch.nn.init.normal_(linear.weight, mean=0.0, std=0.01)
        torch.nn.init.zeros_(linear.bias)
        modules += [linear, torch.nn.ReLU()]
        fan_in = width
    logit = torch.nn.Linear(fan_in, 1)
    torch.nn.init.xavier_uniform_(logit.weight)
    torch.nn.init.zeros_(logit.bias)
    modules.append(logit)
    return torch.nn.Sequential(*modules)


def decide(model: torch.nn.Module, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(decisions, logits z) on normalised inputs: inline iff z > 0
    (sigmoid > 0.5; z == 0 does not inline, as the exported arg-max)."""
    with torch.no_grad():
        z = model(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)))[:, 0].numpy()
    return (z > 0).astype(np.int64), z


@dataclass
class TrainResult:
    model: torch.nn.Sequential
    steps: int
    epoch_losses: List[float]    # mean weighted batch loss of each epoch
    final_loss: float            # weighted loss over every sample after training
    accuracy: float
    weighted_accuracy: float     # sum of weight where right / sum of weight


def weighted_loss(model, x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """(1/N) sum of weight * sigmoid cross-entropy on the logit (Keras'
    sample-weighted BCE over a batch of N)."""
    z = model(x)[:, 0]
    return (weight * torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none")).mean()


def train(x: np.ndarray, actions: np.ndarray, weights: np.ndarray, epochs: int = 1, batch_size: int = 128,
          learning_rate: float = 0.01, seed: int = 0,
          progress: Callable[[str], None] = lambda s: None) -> TrainResult:
    """Plain SGD on shuffled batches (the remainder of each epoch dropped).
    torch.manual_seed(seed) fixes the initial weights, numpy's generator of
    `seed` the order: the same seed gives the same weights."""
    torch.manual_seed(seed)
    order_rng = np.random.default_rng(seed)
    model = make_model(x.shape[1])
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    yt = torch.from_numpy(np.asarray(actions, dtype=np.float32))
    wt = torch.from_numpy(np.asarray(weights, dtype=np.float32))
    batches = len(xt) // batch_size
    steps, epoch_losses = 0, []
    for epoch in range(epochs):
        order = torch.from_numpy(order_rng.permutation(len(xt)))
        total = 0.0
        for b in range(batches):
            idx = order[b * batch_size:(b + 1) * batch_size]
            optimizer.zero_grad()
            loss = weighted_loss(model, xt[idx], yt[idx], wt[idx])
            loss.backward()
            optimizer.step()
            total += float(loss)
            steps += 1
        epoch_losses.append(total / batches if batches else float("nan"))
        progress("train: epoch %d/%d: %d steps, mean loss %.6f" % (epoch + 1, epochs, batches, epoch_losses[-1]))
    with torch.no_grad():
        final_loss = float(weighted_loss(model, xt, yt, wt)) if len(xt) else float("nan")
    decisions, _ = decide(model, x)
    right = decisions == np.asarray(actions)
    w = np.asarray(weights, dtype=np.float64)
    return TrainResult(model, steps, epoch_losses, final_loss,
                       float(right.mean()) if len(right) else float("nan"),
                       float((w * right).sum() / w.sum()) if len(right) else float("nan"))


# --- Export ---------------------------------------------------------------------

def two_logit_model(model: torch.nn.Sequential) -> torch.nn.Sequential:
    """The same network with its last Linear giving [0, z] (no, yes): the
    arg-max inlines iff z > 0, as decide()."""
    layers = list(model)
    last = layers[-1]
    pair = torch.nn.Linear(last.in_features, 2)
    with torch.no_grad():
        pair.weight.zero_()
        pair.bias.zero_()
        pair.weight[1] = last.weight[0]
        pair.bias[1] = last.bias[0]
    return torch.nn.Sequential(*layers[:-1], pair)


def export(model: torch.nn.Sequential, vocab_dir: str, out_dir: str, features: Sequence[str]) -> List[str]:
    """out_dir/model.tflite + output_spec.json (export_policy, with_sqrt)."""
    return export_policy(two_logit_model(model), vocab_dir, out_dir, features=list(features), with_sqrt=True)


def find_mlgo_policy() -> Optional[str]:
    """mlgo-policy on PATH, else beside the package (build/bin from
    build/python; <prefix>/bin from <prefix>/lib/python3/dist-packages)."""
    found = shutil.which("mlgo-policy")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    for relative in ("../../bin", "../../../../bin"):
        candidate = os.path.normpath(os.path.join(here, relative, "mlgo-policy"))
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def check_export(model: torch.nn.Sequential, policy_dir: str, features: Mapping[str, np.ndarray],
                 names: Sequence[str], vocab: Vocab, mlgo_policy: Optional[str] = None) -> dict:
    """Runs policy_dir's model.tflite under our native evaluator
    (`mlgo-policy eval`, one process for every observation, no TensorFlow)
    and compares each decision and the yes-logit with torch's. A
    disagreement away from a near-tie (|z| < TIE) fails the check."""
    mlgo_policy = mlgo_policy or find_mlgo_policy()
    if not mlgo_policy:
        return {"checked": False, "reason": "mlgo-policy not found (PATH, or give --mlgo_policy)"}
    n = len(next(iter(features.values()))) if features else 0
    decisions, z = decide(model, normalize(features, vocab, names, with_sqrt=True))
    columns = [np.asarray(features[name]).reshape(n, -1)[:, 0].tolist() for name in names]
    with tempfile.TemporaryFile("w+") as observations:
        for row in zip(*columns):
            observations.write(json.dumps(dict(zip(names, (int(v) for v in row)))) + "\n")
        observations.seek(0)
        run = subprocess.run([mlgo_policy, "eval", policy_dir], stdin=observations, capture_output=True, text=True)
    if run.returncode != 0:
        return {"checked": False, "ok": False, "reason": "mlgo-policy eval failed: " + run.stderr.strip()[-500:]}
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    if len(rows) != n:
        return {"checked": True, "ok": False, "reason": "mlgo-policy gave %d answers for %d observations" % (
            len(rows), n)}
    theirs = np.array([r["decision"] for r in rows], dtype=np.int64)
    logits = np.array([r["outputs"]["inlining_logits"] for r in rows], dtype=np.float64).reshape(n, 2)
    clear = np.abs(z) >= TIE
    differ = np.nonzero((theirs != decisions) & clear)[0]
    worst = float(np.abs(logits[:, 1] - logits[:, 0] - z).max()) if n else 0.0
    return {"checked": True, "ok": len(differ) == 0 and worst < TIE, "observations": n,
            "different_decisions": int(len(differ)), "near_ties": int((~clear).sum()),
            "max_logit_difference": worst, "evaluator": mlgo_policy}


# --- The command line -------------------------------------------------------------

def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 -m mlgo_corpus.train",
        description="Weighted behavioural cloning (ml-compiler-opt's BC-Max trainer) on harvest-logs --explore "
                    "harvests; exports an MLGO policy directory. Progress on stderr, a JSON report on stdout.")
    parser.add_argument("--harvest", action="append", required=True, metavar="DIR",
                        help="a harvest-logs --explore=K output directory (repeatable: one per base policy; "
                             "each module trains on the smallest kept trajectory, the first harvest on ties)")
    parser.add_argument("--vocab", required=True, metavar="DIR",
                        help="the <feature>.buckets quantile files (training-log vocab) of every input feature")
    parser.add_argument("--output", required=True, metavar="POLICY_DIR",
                        help="where model.tflite and output_spec.json go")
    parser.add_argument("--epochs", type=int, default=1, metavar="N", help="passes over the data (default 1)")
    parser.add_argument("--batch_size", type=int, default=128, metavar="N",
                        help="samples per SGD step; each epoch's remainder is dropped (default 128)")
    parser.add_argument("--learning_rate", type=float, default=0.01, metavar="F",
                        help="plain SGD's learning rate (default 0.01)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seeds the initial weights and the shuffle: the same seed, the same policy (default 0)")
    parser.add_argument("--profiling_data", action="append", default=[], metavar="FILE",
                        help="a profile JSON file (repeatable, an even count: comparator then eval, pair by pair) "
                             "for the bucket weights; default: each harvest's pair (_max, _pol)")
    parser.add_argument("--write_profiles", metavar="PREFIX",
                        help="write PREFIX_max.json and PREFIX_pol.json (PREFIX_pol<i>.json for harvest i of "
                             "several), ml-compiler-opt's profile files")
    parser.add_argument("--mlgo_policy", metavar="PATH",
                        help="the mlgo-policy tool that checks the export (default: PATH, then beside the package)")
    parser.add_argument("--no_export_check", action="store_true",
                        help="do not run the exported model against torch's decisions")
    args = parser.parse_args(argv)
    if len(args.profiling_data) % 2:
        parser.error("--profiling_data takes pairs (comparator, eval): %d files given" % len(args.profiling_data))
    for flag in ("epochs", "batch_size"):
        if getattr(args, flag) < 1:
            parser.error("--%s must be at least 1" % flag)
    if args.learning_rate <= 0:
        parser.error("--learning_rate must be positive")
    return args


def run(args: argparse.Namespace) -> dict:
    started = time.monotonic()
    data = load_harvests(args.harvest, _progress)
    _progress("train: %d modules, %d steps from %d harvest(s)" % (len(data.chosen), len(data), len(args.harvest)))
    if not len(data):
        raise MlgoError("%s: no decisions to train on" % ", ".join(args.harvest))
    profiles_written = write_profiles(data, args.write_profiles) if args.write_profiles else []

    weights = TrainingWeights()
    if args.profiling_data:
        files = args.profiling_data
        pairs = [(read_profile(files[i]), read_profile(files[i + 1])) for i in range(0, len(files), 2)]
    else:
        pairs = data.default_pairs()
    for comparator, evaluated in pairs:
        weights.update(comparator, evaluated)
    sample_weights = weights.sample_weights(data.labels)

    vocab = Vocab.load(args.vocab)
    names = input_features(data, vocab, args.vocab)
    x = normalize(data.features, vocab, names, with_sqrt=True)
    if len(x) < args.batch_size:
        raise MlgoError("%s: %d steps are fewer than one batch of %d: give a smaller --batch_size" % (
            ", ".join(args.harvest), len(x), args.batch_size))
    _progress("train: %d inputs (%d features), %d buckets, %d profile pair(s)" % (
        x.shape[1], len(names), weights.buckets, len(pairs)))
    result = train(x, data.actions, sample_weights, args.epochs, args.batch_size, args.learning_rate, args.seed,
                   _progress)

    export(result.model, args.vocab, args.output, names)
    _progress("train: exported %s" % os.path.join(args.output, "model.tflite"))
    check = ({"checked": False, "reason": "--no_export_check"} if args.no_export_check
             else check_export(result.model, args.output, data.features, names, vocab, args.mlgo_policy))
    return {
        "samples": int(len(data)),
        "modules": len(data.chosen),
        "chosen_from": {h: sum(c.harvest == h for c in data.chosen) for h in args.harvest},
        "features": names,
        "epochs": args.epochs,
        "steps": result.steps,
        "epoch_losses": result.epoch_losses,
        "final_loss": result.final_loss,
        "accuracy": result.accuracy,
        "weighted_accuracy": result.weighted_accuracy,
        "bucket_distribution": weights.p.tolist(),
        "profile_pairs": len(pairs),
        "profile_modules_left_out": len(weights.skipped),  # in one file of a pair only
        "profiles_written": profiles_written,
        "exported": os.path.join(args.output, "model.tflite"),
        "export_check": check,
        "seconds": time.monotonic() - started,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        report = run(args)
    except (MlgoError, OSError, ValueError, KeyError) as e:
        print("mlgo_corpus.train: error: %s" % (e.args[0] if isinstance(e, KeyError) and e.args else e),
              file=sys.stderr)
        return 1
    print(json.dumps(report))
    check = report["export_check"]
    return 0 if check.get("ok", not check.get("checked")) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Feature normalisation as ml-compiler-opt does it, in numpy.

ml-compiler-opt normalises each int feature against its quantile file
(<feature>.buckets, written by `training-log vocab`): the bucket index of the
value among the quantile boundaries (the number of boundaries <= value),
divided by the boundary count, gives x in [0, 1]; the network sees [x, x*x]
(and sqrt(x) with with_sqrt), features concatenated in sorted name order
(tf_agents flattens the observation dict by key). inlining_default is
discarded. export_policy builds exactly this into the TFLite graph, with the
same float32 arithmetic, so a network trained on normalize()'s output makes
the same decisions inside the compiler.
"""

import os
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np

# Never normalised inputs of a policy: the default heuristic's own decision
# (ml-compiler-opt discards it) and the outputs.
NOT_INPUTS = frozenset({"inlining_default", "inlining_decision", "reward"})


class Vocab:
    """The quantile boundaries of every feature of a vocab directory."""

    def __init__(self, boundaries: Mapping[str, np.ndarray]):
        self.boundaries: Dict[str, np.ndarray] = {k: np.asarray(v, dtype=np.float32) for k, v in boundaries.items()}

    @classmethod
    def load(cls, vocab_dir: "os.PathLike[str] | str") -> "Vocab":
        vocab_dir = os.fspath(vocab_dir)
        boundaries = {}
        for name in sorted(os.listdir(vocab_dir)):
            if not name.endswith(".buckets"):
                continue
            path = os.path.join(vocab_dir, name)
            with open(path, encoding="utf-8") as f:
                try:
                    values = [float(line) for line in f if line.strip()]
                except ValueError as e:
                    raise ValueError("%s: not a quantile file: %s" % (path, e)) from None
            if not values:
                raise ValueError("%s: no boundaries" % path)
            if any(b < a for a, b in zip(values, values[1:])):
                raise ValueError("%s: boundaries are not sorted" % path)
            boundaries[name[: -len(".buckets")]] = np.asarray(values, dtype=np.float32)
        if not boundaries:
            raise ValueError("%s: no <feature>.buckets files" % vocab_dir)
        return cls(boundaries)

    def input_features(self, available: Optional[Sequence[str]] = None) -> List[str]:
        """The features a policy normalises: every vocab feature (that the
        compiler sends, when `available` is given) except NOT_INPUTS, sorted."""
        names = [n for n in self.boundaries if n not in NOT_INPUTS]
        if available is not None:
            names = [n for n in names if n in set(available)]
        return sorted(names)


def normalize_feature(values: np.ndarray, boundaries: np.ndarray, with_sqrt: bool = False) -> np.ndarray:
    """(n,) or (n, 1) values -> (n, 2) [x, x*x] (or (n, 3) with sqrt), float32."""
    values = np.asarray(values).reshape(len(values), -1)[:, 0]
    buckets = np.searchsorted(boundaries, values.astype(np.float32), side="right").astype(np.float32)
    x = buckets / np.float32(len(boundaries))
    parts = [x, x * x]
    if with_sqrt:
        parts.append(np.sqrt(x))
    return np.stack(parts, axis=1).astype(np.float32)


def normalize(features: Mapping[str, np.ndarray], vocab: Vocab, names: Sequence[str],
              with_sqrt: bool = False) -> np.ndarray:
    """The network input for n observations: (n, len(names) * k) float32.

    features: {name: (n, 1) or (n,) array}, e.g. a Log's features."""
    missing = [n for n in names if n not in features]
    if missing:
        raise KeyError("features missing from the observations: %s" % ", ".join(missing))
    return np.concatenate([normalize_feature(features[n], vocab.boundaries[n], with_sqrt) for n in names], axis=1)

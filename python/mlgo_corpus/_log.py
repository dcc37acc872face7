"""Training logs (LLVM's MLGO format) as numpy arrays, one per feature."""

import os
from typing import Dict, Iterator, List, Optional

import numpy as np

from . import _native


class Log:
    """Observations of a training log, column by column.

    features:        {name: array of shape (n, *spec shape)}, in header order,
                     dtype as the header declares (int64_t -> int64, ...).
    specs:           the header's feature specs ({"name", "type", "port", "shape"}).
    decisions:       the decision column (inlining_decision, index_to_evict or
                     priority), or None when the log's problem is unknown.
    rewards:         the score column (n, *score shape), zero where no outcome
                     was logged; None when the header declares no score.
    has_reward:      bool (n,): which observations an outcome followed.
    contexts:        context names (functions, or the module for the inliner).
    context_index:   int32 (n,): each observation's index into contexts.
    observation_ids: int64 (n,): each observation's number in its context.
    """

    def __init__(self, data: dict):
        self.specs: List[dict] = data["specs"]
        self.features: Dict[str, np.ndarray] = data["features"]
        self.score_spec: Optional[dict] = data["score"]
        self.rewards: Optional[np.ndarray] = data["rewards"]
        self.has_reward: np.ndarray = data["has_reward"]
        self.contexts: List[str] = data["contexts"]
        self.context_index: np.ndarray = data["context_index"]
        self.observation_ids: np.ndarray = data["observation_ids"]
        self.problem: Optional[str] = data["problem"]
        self.decision_name: Optional[str] = data["decision"]

    def __len__(self) -> int:
        return len(self.observation_ids)

    @property
    def decisions(self) -> Optional[np.ndarray]:
        if self.decision_name is None:
            return None
        return self.features[self.decision_name]

    @property
    def feature_names(self) -> List[str]:
        return [s["name"] for s in self.specs]

    def observation(self, i: int) -> dict:
        """Observation i as {feature name: array of the spec's shape}."""
        return {name: column[i] for name, column in self.features.items()}

    def context(self, name: str) -> "Log":
        """The observations of one context, in log order (a copy)."""
        if name not in self.contexts:
            raise KeyError(name)
        mask = self.context_index == self.contexts.index(name)
        data = {
            "specs": self.specs,
            "features": {k: v[mask] for k, v in self.features.items()},
            "score": self.score_spec,
            "rewards": None if self.rewards is None else self.rewards[mask],
            "has_reward": self.has_reward[mask],
            "contexts": [name],
            "context_index": np.zeros(int(mask.sum()), dtype=np.int32),
            "observation_ids": self.observation_ids[mask],
            "problem": self.problem,
            "decision": self.decision_name,
        }
        return Log(data)

    def __repr__(self) -> str:
        return "Log(%d observations, %d features, %d contexts, problem=%s)" % (
            len(self), len(self.specs), len(self.contexts), self.problem)


def read_log(path: "os.PathLike[str] | str") -> Log:
    """Reads a whole training log.

    Each tensor is copied once, from the file into its column; memory is
    bounded by the file's size. A log whose streams have different headers
    is an error: read it with iter_log. Raises MlgoError on a malformed log.
    """
    return Log(_native.read_log(os.fspath(path)))


def iter_log(path: "os.PathLike[str] | str", batch_size: int = 4096) -> Iterator[Log]:
    """Streams a log in batches of at most batch_size observations.

    Memory stays bounded by one batch, however large the log. A batch never
    separates an observation from its outcome, and holds one header's
    observations (a capture with several headers yields one batch per header
    at least). Context indices are per batch.
    """
    return (Log(batch) for batch in _native.LogBatches(os.fspath(path), batch_size))

"""torch.utils.data adapters over harvests and logs (only where torch is
importable; the rest of the package never imports torch).

    from mlgo_corpus import Harvest
    from mlgo_corpus.data import ObservationDataset, LogStream

    ds = ObservationDataset(Harvest("harvest"), features=["callee_users", "node_count"])
    loader = torch.utils.data.DataLoader(ds, batch_size=256, shuffle=True)
    for x, decision in loader: ...

ObservationDataset holds every observation of the chosen logs in memory (as
numpy columns, one copy); LogStream is an IterableDataset that streams logs
of any size in batches, split across DataLoader workers by log.
"""

import os
from typing import Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

try:
    import torch
    from torch.utils.data import Dataset, IterableDataset, get_worker_info
except ImportError as e:  # pragma: no cover - exercised where torch is absent
    raise ImportError("mlgo_corpus.data needs PyTorch (Debian: python3-torch)") from e

from ._directories import Harvest
from ._log import Log, iter_log, read_log

Paths = Union[Harvest, Sequence[Union[str, os.PathLike]]]


def _log_paths(source: Paths) -> List[str]:
    if isinstance(source, Harvest):
        return [m.log_path for m in source.with_logs()]
    return [os.fspath(p) for p in source]


def _read_logs(source: Paths) -> Iterator[Tuple[str, Log]]:
    """(path, log) of each log; a harvest's are read as Harvest reads them
    (no symbolic link followed below the harvest)."""
    if isinstance(source, Harvest):
        for m in source.with_logs():
            yield m.log_path, m.read_log()
    else:
        for p in source:
            yield os.fspath(p), read_log(p)


def _matrix(log: Log, features: Sequence[str]) -> np.ndarray:
    """(n, sum of feature sizes): the chosen features side by side."""
    if not len(log):
        return np.zeros((0, 0))
    return np.concatenate([log.features[f].reshape(len(log), -1) for f in features], axis=1)


class ObservationDataset(Dataset):
    """(x, decision) pairs of every observation in the logs, in log order.

    x: the chosen features side by side (float32 unless transform says
    otherwise); decision: the log's decision column (int64). transform, if
    given, maps a Log to the x matrix instead (e.g. features.normalize with a
    vocab), so training sees exactly what the exported policy computes.
    """

    def __init__(self, source: Paths, features: Optional[Sequence[str]] = None,
                 transform: Optional[Callable[[Log], np.ndarray]] = None):
        xs, ys = [], []
        self.features = list(features) if features is not None else None
        for path, log in _read_logs(source):
            if not len(log):
                continue
            if log.decisions is None:
                raise ValueError("%s: no decision column (problem unknown)" % path)
            if self.features is None:
                self.features = [n for n in log.feature_names if n != log.decision_name]
            x = transform(log) if transform is not None else _matrix(log, self.features).astype(np.float32)
            xs.append(np.asarray(x))
            ys.append(log.decisions.reshape(len(log), -1)[:, 0].astype(np.int64))
        self.x = torch.from_numpy(np.concatenate(xs)) if xs else torch.zeros((0, 0))
        self.y = torch.from_numpy(np.concatenate(ys)) if ys else torch.zeros((0,), dtype=torch.int64)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class LogStream(IterableDataset):
    """Streams Log batches (iter_log) over many logs; with DataLoader
    workers, each worker reads its share of the logs. Use
    DataLoader(stream, batch_size=None) to receive the Log batches as they
    are, or give `collate` to turn each into tensors."""

    def __init__(self, source: Paths, batch_size: int = 4096,
                 collate: Optional[Callable[[Log], object]] = None):
        self.paths = _log_paths(source)
        # A harvest's logs are read as Harvest reads them (no link followed below it).
        self._modules = source.with_logs() if isinstance(source, Harvest) else None
        self.batch_size = batch_size
        self.collate = collate

    def __iter__(self) -> Iterator[object]:
        worker = get_worker_info()
        mine = range(len(self.paths)) if worker is None else range(worker.id, len(self.paths), worker.num_workers)
        for i in mine:
            batches = (self._modules[i].iter_log(self.batch_size) if self._modules is not None
                       else iter_log(self.paths[i], self.batch_size))
            for batch in batches:
                yield self.collate(batch) if self.collate is not None else batch

"""mlgo_corpus: MLGO training data as numpy arrays, without TensorFlow.

Reads what mlgo-corpus' tools write (training logs, TFRecord datasets,
harvest directories, corpora) through the same C++ readers the tools use.
Bad input raises MlgoError (a ValueError) naming the file and the reason.

    >>> import mlgo_corpus
    >>> log = mlgo_corpus.read_log("harvest/logs/a.o.log")
    >>> log.features["callee_basic_block_count"].shape
    (42, 1)
    >>> log.decisions[:5, 0]
    array([1, 0, 0, 1, 1])

Submodules: policy (exec: policies in one function), features (ml-compiler-opt's
normalisation), export (export_policy), data (torch.utils.data adapters;
imports torch), train (ml-compiler-opt's weighted BC / BC-Max trainer;
imports torch; python3 -m mlgo_corpus.train). See docs/python.md.
"""

from ._native import MlgoError
from ._log import Log, read_log, iter_log
from ._tfrecord import read_tfrecord
from ._directories import Harvest, HarvestModule, Corpus, CorpusModule
from .features import Vocab, normalize
from .export import export_policy
from .env import InlinerEnv

__all__ = [
    "MlgoError",
    "Log",
    "read_log",
    "iter_log",
    "read_tfrecord",
    "Harvest",
    "HarvestModule",
    "Corpus",
    "CorpusModule",
    "Vocab",
    "normalize",
    "export_policy",
    "InlinerEnv",
]

"""Harvest directories (harvest-logs' output) and MLGO corpora."""

import json
import os
from typing import Dict, Iterator, List, Optional

from . import _native
from ._log import Log


# A harvest directory is someone else's data: its files are read only when
# they are regular files, never through a symbolic link in any component
# below the harvest (logs/sub -> /elsewhere could point anywhere) or from a
# FIFO (which would block the read forever). The native readers open them so.


class HarvestModule:
    """One module of a harvest: its latest journal record and its files.

    record:      the journal record (harvest_journal.schema.json) as a dict.
    log_path:    logs/<module>.log when the record promises one, else None.
    sites_path:  logs/<module>.sites.jsonl (exists with --decision_sites).
    """

    def __init__(self, entry: dict, harvest_path: str):
        self.record: dict = json.loads(entry["json"])
        self.log_path: Optional[str] = entry["log"]
        self.sites_path: str = entry["sites"]
        self._harvest_path = harvest_path
        self._log_name: str = entry["log_name"]
        self._sites_name: str = entry["sites_name"]

    name = property(lambda self: self.record["module"])
    status = property(lambda self: self.record["status"])
    ok = property(lambda self: self.record["status"] == "ok")
    reason = property(lambda self: self.record.get("reason", ""))
    decisions = property(lambda self: self.record.get("decisions", 0))
    native_size = property(lambda self: self.record.get("native_size"))
    default_size = property(lambda self: self.record.get("default_size"))
    reward = property(lambda self: self.record.get("reward"))
    regalloc_score = property(lambda self: self.record.get("regalloc_score"))

    def read_log(self) -> Log:
        """The module's training log; MlgoError when it has none."""
        if self.log_path is None:
            raise _native.MlgoError("%s: no log (status %s%s)" % (
                self.name, self.status, ", " + self.reason if self.reason else ""))
        return Log(_native.read_log_beneath(self._harvest_path, self._log_name))

    def iter_log(self, batch_size: int = 4096) -> Iterator[Log]:
        """The module's log in batches (mlgo_corpus.iter_log), read as read_log reads it."""
        if self.log_path is None:
            raise _native.MlgoError("%s: no log (status %s%s)" % (
                self.name, self.status, ", " + self.reason if self.reason else ""))
        return (Log(batch) for batch in _native.LogBatches(self._harvest_path, self._log_name, batch_size))

    def read_rollout_log(self) -> Log:
        """The base trajectory's log with its rollouts beside the features
        (harvest-logs --explore_order=rollouts: or search:): two more int64
        columns, base_native_size and rollout_native_size (the native size of
        flipping that step and following the base; -1 where it was not rolled
        out). MlgoError when the harvest has none for this module."""
        relative = "rollouts/" + self._log_name[len("logs/"):]
        if _native.read_file_beneath(self._harvest_path, relative) is None:
            raise _native.MlgoError("%s: no rollouts log (%s); harvest with --explore_order=rollouts:ORDER" % (
                self.name, relative))
        return Log(_native.read_log_beneath(self._harvest_path, relative))

    def sites(self) -> Optional[List[dict]]:
        """The decision sites (harvest-logs --decision_sites), or None."""
        return self._read_sites(self._sites_name)

    def read_rollout_sites(self) -> Optional[List[dict]]:
        """The base trajectory's decision sites, beside its rollout log
        (rollouts/<module>.sites.jsonl: each decision's call site and the
        default's cost_margin), or None when the harvest wrote none."""
        return self._read_sites("rollouts/" + self._sites_name[len("logs/"):])

    def _read_sites(self, relative: str) -> Optional[List[dict]]:
        data = _native.read_file_beneath(self._harvest_path, relative)
        if data is None:
            return None
        try:
            text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as open() reads lines
            return [json.loads(line) for line in text.split("\n") if line.strip()]
        except ValueError as e:  # UnicodeDecodeError is one
            raise _native.MlgoError("%s: not a sites file: %s" % (os.path.join(self._harvest_path, relative), e)) from None

    def __repr__(self) -> str:
        return "HarvestModule(%r, %s, native_size=%s)" % (self.name, self.status, self.native_size)


class Harvest:
    """A harvest-logs (or merge-harvest) output directory.

    The journal is read and validated by the tools' own reader: a record with
    a wrong field, or a module name that would leave the directory, raises
    MlgoError naming the line. Iterating yields HarvestModule in journal order.
    """

    def __init__(self, path: "os.PathLike[str] | str"):
        self.path = os.fspath(path)
        data = _native.read_harvest(self.path)
        self.options: Optional[dict] = json.loads(data["options"]) if data["options"] else None
        self.summary: Optional[dict] = json.loads(data["summary"]) if data["summary"] else None
        self.torn_tail: bool = data["torn_tail"]
        self.modules: List[HarvestModule] = [HarvestModule(r, self.path) for r in data["records"]]
        self._by_name: Dict[str, HarvestModule] = {m.name: m for m in self.modules}

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[HarvestModule]:
        return iter(self.modules)

    def __getitem__(self, name: str) -> HarvestModule:
        return self._by_name[name]

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def with_logs(self) -> List[HarvestModule]:
        """The modules whose records promise a log."""
        return [m for m in self.modules if m.log_path is not None]

    def sizes(self) -> Dict[str, int]:
        """Module -> native size, for the modules that have one."""
        return {m.name: m.native_size for m in self.modules if m.native_size is not None}

    def rewards(self) -> Dict[str, float]:
        """Module -> reward (policies other than the default), where present."""
        return {m.name: m.reward for m in self.modules if m.reward is not None}

    def __repr__(self) -> str:
        return "Harvest(%r, %d modules)" % (self.path, len(self))


class CorpusModule:
    def __init__(self, corpus: "Corpus", name: str):
        self.corpus = corpus
        self.name = name

    @property
    def bitcode_path(self) -> str:
        return os.path.join(self.corpus.path, self.name + ".bc")

    @property
    def cmd_path(self) -> str:
        return os.path.join(self.corpus.path, self.name + ".cmd")

    def bitcode(self) -> bytes:
        with open(self.bitcode_path, "rb") as f:
            return f.read()

    def command_line(self) -> List[str]:
        """The module's .cmd (NUL-separated cc1 arguments) as a list."""
        return _native.read_command_line(self.cmd_path)

    def __repr__(self) -> str:
        return "CorpusModule(%r)" % self.name


class Corpus:
    """An MLGO corpus: corpus_description.json and its modules' .bc/.cmd.

    Module names are checked as the tools check them (relative, inside the
    corpus); a name that would leave it raises MlgoError.
    """

    def __init__(self, path: "os.PathLike[str] | str"):
        self.path = os.fspath(path)
        data = _native.read_corpus(self.path)
        self.description: dict = json.loads(data["fields"])
        self.modules: List[CorpusModule] = [CorpusModule(self, n) for n in data["modules"]]
        self._by_name = {m.name: m for m in self.modules}

    @property
    def has_thinlto(self) -> bool:
        return bool(self.description.get("has_thinlto", False))

    @property
    def global_command_override(self) -> Optional[List[str]]:
        return self.description.get("global_command_override")

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[CorpusModule]:
        return iter(self.modules)

    def __getitem__(self, name: str) -> CorpusModule:
        return self._by_name[name]

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return "Corpus(%r, %d modules)" % (self.path, len(self))

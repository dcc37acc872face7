"""A gym-style inliner environment over LLVM's interactive ML inliner.

    env = mlgo_corpus.InlinerEnv("corpus", "m1.o")
    observation, info = env.reset()
    while True:
        action = policy(observation)          # 0: do not inline, 1: inline
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    env.close()

reset() starts opt-22 (default<Oz>) on the module with the interactive
channel; our C++ host (the one harvest-logs uses) hands each of the
compiler's queries to step()'s caller. An observation is {feature name:
numpy array of the spec's shape}, every feature the compiler sends, with
inlining_default (the ordinary inliner's decision). Each step's reward is
0.0; the last one (terminated=True) carries the reward harvest-logs records,
1 - (size + 0.01) / (default + 0.01) of the module's native size (llc-22
-O2, .text and friends) against the default inliner's, computed once per
environment. A compile that fails or times out ends the episode with
truncated=True and the reason in info. close(), a new reset(), a timeout or
a crash leave no process and no FIFO behind (each episode's channel lives
in a temporary directory the episode removes). gymnasium is not needed; the
API follows it.
"""

import os
import tempfile
from typing import Dict, Optional, Tuple

import numpy as np

from . import _native
from ._directories import Corpus


class InlinerEnv:
    metadata = {"render_modes": []}
    #: Discrete(2): 0 = do not inline, 1 = inline.
    action_space = (0, 1)

    def __init__(self, corpus, module: str, opt_path: str = "opt-22", llc_path: str = "llc-22",
                 passes: str = "default<Oz>", timeout: float = 60.0, work_dir: Optional[str] = None):
        corpus = corpus if isinstance(corpus, Corpus) else Corpus(corpus)
        if module not in corpus:
            raise KeyError("%s: no module %r" % (corpus.path, module))
        self.module = module
        self.bitcode = corpus[module].bitcode_path
        self.opt_path, self.llc_path, self.passes, self.timeout = opt_path, llc_path, passes, float(timeout)
        self.work_dir = work_dir
        self._episode = None
        self._directory = None
        self._default_size: Optional[int] = None
        self._steps = 0

    # -- the gym API ---------------------------------------------------------

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Dict[str, np.ndarray], dict]:
        """Starts a new episode (closing any running one); returns the first
        observation and info. A module with no call site to decide ends at
        once: the observation is {} and info["terminated"] is True. A compile
        that fails or times out before its first query raises MlgoError
        with the reason (and the compiler's stderr tail)."""
        self._close_episode()
        self._directory = tempfile.mkdtemp(prefix="mlgo-inliner-env-", dir=self.work_dir)
        self._episode = _native.InlinerEpisode(self.bitcode, self.opt_path, self.llc_path, self.passes, self.timeout,
                                               os.path.join(self._directory, "episode"))
        self._steps = 0
        query = self._episode.next()
        if query is None:
            info = self._final_info()
            if info["status"] != "ok":
                raise _native.MlgoError("%s: the compile %s before its first decision (%s): %s%s" % (
                    self.module, "timed out" if info["status"] == "timeout" else "failed", info["reason"],
                    info["detail"], (": " + info["stderr_tail"].strip()) if info["stderr_tail"].strip() else ""))
            info["terminated"] = True
            return {}, info
        observation, index = query
        return observation, {"observation_index": index}

    def step(self, action) -> Tuple[Dict[str, np.ndarray], float, bool, bool, dict]:
        if self._episode is None:
            raise RuntimeError("step() before reset() (or after the episode ended)")
        decision = self._check_action(action)
        self._episode.answer(decision)
        self._steps += 1
        query = self._episode.next()
        if query is not None:
            observation, index = query
            return observation, 0.0, False, False, {"observation_index": index}
        info = self._final_info()
        terminated = info["status"] == "ok"
        reward = info.get("reward", 0.0) if terminated else 0.0
        return {}, reward, terminated, not terminated, info

    def close(self) -> None:
        self._close_episode()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self._close_episode()
        except Exception:
            pass

    # -- helpers -------------------------------------------------------------

    def default_size(self) -> int:
        """The module's native size with the ordinary inliner (computed once)."""
        if self._default_size is None:
            directory = tempfile.mkdtemp(prefix="mlgo-inliner-baseline-", dir=self.work_dir)
            try:
                self._default_size = _native.default_native_size(self.bitcode, self.opt_path, self.llc_path,
                                                                 self.passes, self.timeout,
                                                                 os.path.join(directory, "work"))
            finally:
                _remove_tree(directory)
        return self._default_size

    @staticmethod
    def _check_action(action) -> int:
        value = np.asarray(action)
        if value.size != 1 or not (np.issubdtype(value.dtype, np.integer) or value.dtype == np.bool_):
            raise ValueError("an action is 0 (do not inline) or 1 (inline), not %r" % (action,))
        decision = int(value.reshape(-1)[0])
        if decision not in (0, 1):
            raise ValueError("an action is 0 (do not inline) or 1 (inline), not %r" % (action,))
        return decision

    def _final_info(self) -> dict:
        result = self._episode.result()
        self._close_episode()
        info = dict(result)
        info["steps"] = self._steps
        if result["status"] == "ok" and result["native_size"] is not None:
            baseline = self.default_size()
            info["default_size"] = baseline
            info["reward"] = _native.size_reward(result["native_size"], baseline)
        return info

    def _close_episode(self) -> None:
        if self._episode is not None:
            self._episode.close()
            self._episode = None
        if self._directory is not None:
            _remove_tree(self._directory)
            self._directory = None


def _remove_tree(path: str) -> None:
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    if os.path.isdir(path):
        os.rmdir(path)

"""Exec policies in one Python function: harvest-logs --policy=exec:CMD.

    # my_policy.py
    from mlgo_corpus import policy

    def decide(observation):
        # observation: {feature name: numpy array of the spec's shape}
        return observation["inlining_default"][0]

    policy.serve(decide)

    $ harvest-logs --corpus=corpus --output_dir=out --policy=exec:'python3 my_policy.py'

When harvest-logs explores with this policy as the base
(--explore, --explore_order=uncertain) it sets MLGO_POLICY_CERTAINTY=1, and
decide() then returns (decision, certainty): how sure it was, smaller being
less sure (e.g. |p(yes) - p(no)|); the exploration flips the least sure
decisions first. serve() sends it after the decision as a float64.

serve() reads the compiler's channel bytes that harvest-logs forwards on
standard input (LLVM's training-log format: a header per module, context
lines, one observation per decision) with the tools' own C++ reader, calls
decide() for every observation and writes its answer in the header's advice
type (int64 for the inliner's decision and the eviction index, float for
regalloc priority) to standard output, flushed at once.
"""

import os
import struct
import sys
from typing import Callable, Dict, Optional

import numpy as np

from . import _native

# The advice's struct format by its type name (little-endian, as LLVM reads it).
_FORMATS = {"int64_t": "<q", "int32_t": "<i", "float": "<f", "double": "<d", "uint8_t": "<B", "int8_t": "<b"}
# A stream without an advice spec is the inliner's: one int64.
_INLINER_ADVICE = {"name": "inlining_decision", "type": "int64_t", "port": 0, "shape": [1]}


class Stream:
    """What decide(observation, stream) may want to know besides the features."""

    def __init__(self, header: dict):
        self.features = header["features"]
        self.advice = header["advice"] or _INLINER_ADVICE
        self.context: Optional[str] = None
        self.observations = 0


def _reply_bytes(value, advice: dict) -> bytes:
    fmt = _FORMATS.get(advice["type"])
    if fmt is None:
        raise ValueError("unsupported advice type %r" % advice["type"])
    count = int(np.prod(advice["shape"])) if advice["shape"] else 1
    values = np.asarray(value).reshape(-1)
    if values.size != count:
        raise ValueError("decide() returned %d values; the advice %r needs %d" % (values.size, advice["name"], count))
    return b"".join(struct.pack(fmt, v.item()) for v in values)


def serve(decide: Callable[..., object], stdin_fd: int = 0, stdout_fd: int = 1, pass_stream: bool = False) -> int:
    """Answers every observation on stdin_fd with decide(observation) on
    stdout_fd until the input ends; returns the number of answers.

    decide gets {feature name: numpy array}; with pass_stream=True also a
    Stream (its features, advice spec, context and count so far). It returns
    the decision: a number (or an array of the advice's size); with
    MLGO_POLICY_CERTAINTY=1 in the environment, (decision, certainty). A malformed
    channel raises MlgoError; harvest-logs then sees the policy exit and
    fails the module with policy_error (the policy's stderr is kept in
    OUT/policy.<slot>.stderr).
    """
    certainty = os.environ.get("MLGO_POLICY_CERTAINTY") == "1"
    out = os.fdopen(os.dup(stdout_fd), "wb", buffering=0)
    stream: Optional[Stream] = None
    answered = 0
    try:
        for kind, value in _native.ChannelReader(stdin_fd):
            if kind == "header":
                stream = Stream(value)
            elif kind == "context" and stream is not None:
                stream.context = value
            elif kind == "observation" and stream is not None:
                decision = decide(value, stream) if pass_stream else decide(value)
                if certainty:
                    if not isinstance(decision, tuple) or len(decision) != 2:
                        raise ValueError("MLGO_POLICY_CERTAINTY=1: decide() must return (decision, certainty)")
                    decision, sure = decision
                    out.write(_reply_bytes(decision, stream.advice) + struct.pack("<d", float(sure)))
                else:
                    out.write(_reply_bytes(decision, stream.advice))
                stream.observations += 1
                answered += 1
    finally:
        out.close()
    return answered


def main(argv=None) -> int:
    """python3 -m mlgo_corpus.policy: a policy answering the compiler's own
    default decision (inlining_default), for checking a setup end to end."""
    serve(lambda observation: observation["inlining_default"].reshape(-1)[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())

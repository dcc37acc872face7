#!/usr/bin/env python3
"""An independent reader of MLGO training logs, written from the format rules
in /work/shared/specs/training-log-protocol.md (section 1) with the
strictness of LLVM's llvm/lib/Analysis/models/log_reader.py: a context line
must be followed at once by an observation (a context at end of file, or two
context lines in a row, fail there). It shares no code with our C++ reader.

Usage: independent_log_reader.py LOG...
Prints one line per log: "<path>: <observations> observations in <contexts>
contexts"; exits 1 at the first log it cannot read, naming it and why.
"""
import json
import sys

from tensor_spec import read_exact, tensor_bytes


def read_log(path):
    with open(path, "rb") as f:
        header = json.loads(f.readline())
        observation_size = sum(tensor_bytes(s) for s in header["features"])
        score_size = tensor_bytes(header["score"]) if "score" in header else None
        observations, contexts = 0, set()
        context = None
        while True:
            line = f.readline()
            if not line:
                break
            event = json.loads(line)
            if "context" in event:
                context = event["context"]
                contexts.add(context)
                # As log_reader.py does: the next line must be an observation.
                event = json.loads(f.readline())
            if context is None:
                raise ValueError("observation before any context")
            index = int(event["observation"])
            read_exact(f, observation_size, f"observation {index} of context {context!r}")
            observations += 1
            if score_size is not None:
                outcome = json.loads(f.readline())
                if int(outcome["outcome"]) != index:
                    raise ValueError(f"outcome {outcome['outcome']} after observation {index}")
                read_exact(f, score_size, f"outcome {index}")
        if observations == 0:
            raise ValueError("a log without observations")
        return observations, len(contexts)


def main():
    for path in sys.argv[1:]:
        try:
            observations, contexts = read_log(path)
        except Exception as e:  # any failure of the reader is the finding
            print(f"{path}: cannot read: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        print(f"{path}: {observations} observations in {contexts} contexts")
    return 0


if __name__ == "__main__":
    sys.exit(main())

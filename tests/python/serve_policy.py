#!/usr/bin/python3
"""An exec: policy written with mlgo_corpus.policy.serve, for the tests.

usage: serve_policy.py default|never|always|wrong-size|certain
default echoes inlining_default; never/always answer 0/1; wrong-size answers
two values where the advice is one (serve must refuse it: the module fails
with policy_error and this process's stderr says why); certain echoes
inlining_default with scripts/echo_default_policy.py's certainty,
|node_count - 20.5| (harvest-logs --explore asks for it)."""
import sys

from mlgo_corpus import policy

kind = sys.argv[1]
decide = {
    "default": lambda o: o["inlining_default"].reshape(-1)[0],
    "never": lambda o: 0,
    "always": lambda o: 1,
    "wrong-size": lambda o: [1, 1],
    "certain": lambda o: (o["inlining_default"].reshape(-1)[0], abs(float(o["node_count"].reshape(-1)[0]) - 20.5)),
}[kind]
policy.serve(decide)

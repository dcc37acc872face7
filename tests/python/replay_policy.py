#!/usr/bin/python3
"""An exec: policy that answers with the actions in a JSON list, in order
(check_env.py's replay of an InlinerEnv episode through harvest-logs).

usage: replay_policy.py ACTIONS.json"""
import json
import sys

from mlgo_corpus import policy

actions = iter(json.load(open(sys.argv[1])))
policy.serve(lambda observation: next(actions))

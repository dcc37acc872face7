#!/usr/bin/python3
"""Validates JSON (or JSON Lines with --lines) documents against a JSON Schema."""
import json
import sys

import jsonschema


def main():
    args = sys.argv[1:]
    lines = "--lines" in args
    args = [a for a in args if a != "--lines"]
    schema = json.load(open(args[0]))
    for path in args[1:]:
        text = open(path, encoding="utf-8", errors="surrogateescape").read()
        docs = [json.loads(l) for l in text.splitlines() if l] if lines else [json.loads(text)]
        for doc in docs:
            jsonschema.validate(doc, schema)
    print("ok")


main()

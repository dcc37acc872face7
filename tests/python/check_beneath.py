#!/usr/bin/python3
"""mlgo_corpus.Harvest follows no symbolic link below the harvest (issue #33):
with HARVEST/logs/sub planted as a link, sub/m0's log and sites file are
refused with an error naming the link, also when streamed or read by
mlgo_corpus.data (when PyTorch is there); m1's still read.

usage: check_beneath.py HARVEST
"""
import sys

import mlgo_corpus


def main() -> int:
    harvest = sys.argv[1]
    h = mlgo_corpus.Harvest(harvest)
    m = h["sub/m0"]
    expected = harvest + "/logs/sub: a symbolic link below " + harvest
    failures = 0
    readers = [("read_log", m.read_log), ("sites", m.sites), ("iter_log", lambda: list(m.iter_log(8)))]
    try:
        from mlgo_corpus import data  # needs PyTorch
        only_sub = mlgo_corpus.Harvest(harvest)
        only_sub.modules = [only_sub["sub/m0"]]
        readers += [("ObservationDataset", lambda: data.ObservationDataset(only_sub)),
                    ("LogStream", lambda: list(data.LogStream(only_sub, batch_size=8)))]
    except ImportError:
        pass
    for what, read in readers:
        try:
            read()
            print("%s: read through the link" % what)
            failures += 1
        except mlgo_corpus.MlgoError as e:
            if expected not in str(e):
                print("%s: the error does not name the link: %s" % (what, e))
                failures += 1
    if len(h["m1"].read_log()) == 0 or not h["m1"].sites():
        print("m1: its log or sites could not be read")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

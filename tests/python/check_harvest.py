#!/usr/bin/python3
"""Checks mlgo_corpus against the tools on a real harvest directory.

usage: check_harvest.py HARVEST_DIR TRAINING_LOG DECODER TFRECORD

- Harvest(dir): one module per journal module, each record equal to the
  journal's latest line for it;
- read_log: every logged observation equals `training-log dump` (context,
  number, every feature element, outcome); iter_log gives the same columns
  in batches of 1, 7 and 1000;
- read_tfrecord: equals an independent decoder built on the real protobuf
  library (tests/e2e/decode_sequence_examples.py).
Prints a JSON summary; any difference is an AssertionError (exit 1).
"""
import json
import math
import subprocess
import sys

import numpy as np

import mlgo_corpus


def same_value(ours, theirs):
    """One element: the dump writes NaN and infinities as null."""
    if theirs is None or isinstance(theirs, str):
        return isinstance(ours, float) and not math.isfinite(ours)
    return ours == theirs


def element_list(array):
    return [v.item() if hasattr(v, "item") else v for v in np.asarray(array).reshape(-1)]


def check_log(module, training_log):
    log = module.read_log()
    dump = subprocess.run([training_log, "dump", module.log_path], capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in dump.stdout.splitlines()]
    assert len(rows) == len(log), (module.name, len(rows), len(log))
    assert len(rows) == module.decisions or log.problem != "inliner", (module.name, len(rows), module.decisions)
    for i, row in enumerate(rows):
        assert log.contexts[log.context_index[i]] == row["context"], (module.name, i)
        assert int(log.observation_ids[i]) == row["observation"], (module.name, i)
        for spec in log.specs:
            column = log.features[spec["name"]]
            assert column.shape == (len(log),) + tuple(spec["shape"]), (spec, column.shape)
            ours = element_list(column[i])
            theirs = row[spec["name"]]
            theirs = theirs if isinstance(theirs, list) else [theirs]
            assert len(ours) == len(theirs) and all(map(same_value, ours, theirs)), (module.name, i, spec["name"])
        if "outcome" in row:
            assert log.has_reward[i], (module.name, i)
            outcome = row["outcome"] if isinstance(row["outcome"], list) else [row["outcome"]]
            assert all(map(same_value, element_list(log.rewards[i]), outcome)), (module.name, i)
        else:
            assert not log.has_reward[i], (module.name, i)
    assert log.decisions is not None and log.decisions.shape[0] == len(log)

    for batch_size in (1, 7, 1000):
        batches = list(mlgo_corpus.iter_log(module.log_path, batch_size=batch_size))
        assert all(0 < len(b) <= batch_size for b in batches), batch_size
        for name, column in log.features.items():
            assert np.array_equal(np.concatenate([b.features[name] for b in batches]), column, equal_nan=column.dtype.kind == "f"), (name, batch_size)
        assert np.array_equal(np.concatenate([b.has_reward for b in batches]), log.has_reward)
        names = [b.contexts[j] for b in batches for j in b.context_index]
        assert names == [log.contexts[j] for j in log.context_index], batch_size
    return len(log), int(log.has_reward.sum())


def check_tfrecord(path, decoder):
    decoded = json.loads(subprocess.run([sys.executable, decoder, path], capture_output=True, text=True,
                                        check=True).stdout)
    ours = mlgo_corpus.read_tfrecord(path)
    assert len(ours) == len(decoded), (len(ours), len(decoded))
    steps = 0
    for record, expected in zip(ours, decoded):
        assert set(record) == set(expected), (sorted(record), sorted(expected))
        for key, their_steps in expected.items():
            our_steps = record[key]
            our_steps = [our_steps[i] for i in range(len(our_steps))]
            assert len(our_steps) == len(their_steps), key
            for ours_step, theirs_step in zip(our_steps, their_steps):
                values = element_list(ours_step)
                assert len(values) == len(theirs_step) and all(map(same_value, values, theirs_step)), key
            steps += len(their_steps)
    return len(ours), steps


def main():
    out, training_log, decoder, tfrecord = sys.argv[1:5]
    harvest = mlgo_corpus.Harvest(out)
    latest = {}
    with open(out + "/harvest.jsonl", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if "module" in record:
                latest[record["module"]] = record
    assert {m.name for m in harvest} == set(latest), (sorted(m.name for m in harvest), sorted(latest))
    for module in harvest:
        assert module.record == latest[module.name], module.name
        assert (module.log_path is not None) == (module.ok and module.record.get("log_written", False))
    assert harvest.summary is not None and harvest.options is not None

    observations = rewarded = logs = 0
    for module in harvest.with_logs():
        n, r = check_log(module, training_log)
        observations += n
        rewarded += r
        logs += 1
    assert logs > 0 and observations > 0
    records, steps = check_tfrecord(tfrecord, decoder)
    assert records > 0 and steps > 0
    print(json.dumps({"modules": len(harvest), "logs": logs, "observations": observations, "rewarded": rewarded,
                      "tfrecord_records": records, "tfrecord_steps": steps}))


main()

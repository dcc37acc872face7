#!/usr/bin/python3
"""Checks harvest-logs --explore's ml-compiler-opt files against what its
imitation-learning trainer expects (shared/specs/imitation-learning.md
sections 3-5) and against the exploration's own table:

  check_imitation.py OUT TFRECORD

- every record holds the 42 keys the trainer declares, each one value per
  step, all lists of one length H >= 1 (the kept trajectory's decisions);
- action = the kept decisions, reward = the kept native size, label = its
  size bucket, module_name = the module, one record per module with
  decisions, in module order;
- OUT/profile_max.json and OUT/profile_pol.json: the kept and the base
  trajectory's loss and horizon, the same modules in the same order.
Prints "ok" or raises.
"""
import bisect
import json
import sys

import numpy as np

import mlgo_corpus

THRESHOLDS = [285.0, 376.0, 452.0, 512.0, 571.0, 627.5, 720.0, 809.5, 1304.0, 1832.0, 2467.0, 3344.0, 4545.0,
              6459.0, 9845.0, 17953.0, 29430.5, 85533.5, 124361.0]
INPUTS = """call_argument_setup call_penalty callee_basic_block_count callee_conditionally_executed_blocks callee_users
caller_basic_block_count caller_conditionally_executed_blocks caller_users callsite_cost callsite_height
case_cluster_penalty cold_cc_penalty constant_args constant_offset_ptr_args cost_estimate dead_blocks edge_count
indirect_call_penalty is_callee_avail_external is_caller_avail_external is_multiple_blocks jump_table_penalty
last_call_to_static_bonus load_elimination load_relative_intrinsic lowered_call_arg_setup
nested_inline_cost_estimate nested_inlines node_count nr_ctant_params num_loops simplified_instructions sroa_losses
sroa_savings switch_penalty threshold unsimplified_common_instructions""".split()
INT64_KEYS = INPUTS + ["inlining_default", "label", "policy_label", "action"]


def main(out, tfrecord):
    assert len(INPUTS) == 37
    table = [json.loads(line) for line in open(out + "/explore.jsonl") if line.strip()]
    kept = {t["module"]: t for t in table if t["kept"]}
    base = {t["module"]: t for t in table if t["trajectory"] == 0}
    modules = sorted(m for m in kept if kept[m]["decisions"])
    records = mlgo_corpus.read_tfrecord(tfrecord)
    assert len(records) == len(modules), (len(records), modules)
    for module, record in zip(modules, records):
        t = kept[module]
        h = len(t["decisions"])
        for key in INT64_KEYS:
            assert key in record, (module, key)
            values = record[key]
            assert isinstance(values, np.ndarray) and values.dtype == np.int64, (module, key, type(values))
            assert values.shape == (h, 1), (module, key, values.shape, h)
        assert record["reward"].dtype == np.float32 and record["reward"].shape == (h, 1), module
        assert np.all(record["reward"] == np.float32(t["native_size"])), module
        assert record["module_name"] == [[module.encode()]] * h, (module, record["module_name"][:1])
        assert record["action"][:, 0].tolist() == t["decisions"], module
        assert np.all(record["label"] == bisect.bisect_right(THRESHOLDS, t["native_size"])), module
        assert np.all(record["policy_label"] == 0), module
    for suffix, source in (("_max", kept), ("_pol", base)):
        text = open(out + "/profile" + suffix + ".json").read()
        profile = json.loads(text)
        assert text.startswith("[\n  {"), "2-space indent"
        assert [p["module_name"] for p in profile] == modules, suffix
        for p in profile:
            t = source[p["module_name"]]
            assert isinstance(p["loss"], float) and p["loss"] == float(t["native_size"]), (suffix, p)
            assert p["horizon"] == len(t["decisions"]), (suffix, p)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

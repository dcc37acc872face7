#!/usr/bin/env bash
# Benchmark: harvest-logs --explore=7 (issue 34) against what it replaces,
# 8 plain harvests of the same modules (the base trajectory and 7 more,
# each a full compile), on the generated C corpus of bench/harvest.sh and on
# zstd's lib (from npm, as bench/harvest.sh). Both with --mode=plugin,
# --policy=default, --num_workers=2, the compile server as auto decides
# (so the explorations fork at their flipped decision: --explore_fork;
# MLGO_EXPLORE_FORK=false measures them compiled whole), alternating, into
# fresh output directories; medians of ROUNDS.
#
#   bench/explore.sh [N [ROUNDS]]     (default: 40 generated modules, 3 rounds)
#
# Prints per corpus: the plain harvest, the exploration, the ratio
# exploration / (8 x plain) (a module with fewer than 7 decisions has fewer
# than 7 explorations), the share of the parent trajectory's decisions that
# come after each flipped one (what a fork chain still runs: the later the
# flips, the less it costs), and each round's time. Then what the last
# exploration found for K = 1, 3, 7 (each K's figure is the best of the
# first K explorations of the same chain): total native size, change,
# modules improved, and per improved module the median and largest gain.
# Environment: MLGO_BUILD_DIR (default: build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
n=${1:-40}
rounds=${2:-3}
work=$root/bench/.work
# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"
explore_corpora "$n"
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"

for entry in "${corpora[@]}"; do
  name=${entry%%:*} corpus=${entry#*:}
  out=$work/explore_bench
  plain=() explored=()
  for ((r = 0; r < rounds; r++)); do
    rm -rf "$out" && t0=$(now)
    "$bin/harvest-logs" -q --corpus="$corpus" --output_dir="$out/plain" --mode=plugin --num_workers=2
    t1=$(now)
    "$bin/harvest-logs" -q --corpus="$corpus" --output_dir="$out/explored" --mode=plugin --num_workers=2 --explore=7 \
      --explore_fork="${MLGO_EXPLORE_FORK:-true}"
    t2=$(now)
    plain+=("$(echo "$t1 - $t0" | bc)") explored+=("$(echo "$t2 - $t1" | bc)")
  done
  p=$(median "${plain[@]}") e=$(median "${explored[@]}")
  python3 - "$name" "$p" "$e" "$out/explored" <<'EOF'
import json, statistics, sys
name, plain, explored, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
chains = {}
for line in open(out + "/explore.jsonl"):
    t = json.loads(line)
    chains.setdefault(t["module"], []).append(t)
modules = len(chains)
trajectories = sum(len(c) - 1 for c in chains.values())
print(f"{name}: {modules} modules, {trajectories} explored trajectories")
print(f"  plain harvest {plain:.2f} s; --explore=7 {explored:.2f} s")
print(f"  exploration / (8 x plain) = {explored / (8 * plain):.3f}x")
rounds = []
for r in range(1, 8):
    try:
        rounds.append(json.load(open(f"{out}/explore/round-{r}/summary.json"))["seconds"])
    except FileNotFoundError:
        break
# Where the flips fall: a forked exploration pays from its flipped decision
# on, so the share of its parent's decisions after it bounds what forking
# saves (the parent: the newest earlier trajectory that ended ok).
after = []
for c in chains.values():
    parent = len(c[0]["decisions"])
    for t in c[1:]:
        if t["flipped_step"] is not None:
            after.append((parent - t["flipped_step"] - 1, parent))
        if t["status"] == "ok":
            parent = len(t["decisions"])
if after:
    print(f"  decisions after the flipped one: {sum(a for a, _ in after) / sum(n for _, n in after):.1%} of the parent "
          f"trajectory's (pooled), {statistics.mean(a / n for a, n in after):.1%} (mean per trajectory)")
print("  each round (its modules are the ones with decisions, the larger ones): " +
      ", ".join(f"{s:.2f} s" for s in rounds))
base = sum(c[0]["native_size"] for c in chains.values())
print(f"  K | total native size | change | improved | median gain | largest gain   (base {base})")
for k in (1, 3, 7):
    total, gains = 0, []
    for c in chains.values():
        sizes = [t["native_size"] for t in c[:k + 1] if t["native_size"] is not None]
        best = min(sizes)
        total += best
        if best < c[0]["native_size"]:
            gains.append(1 - best / c[0]["native_size"])
    median = statistics.median(gains) if gains else 0
    print(f"  {k} | {total} | {total / base - 1:+.3%} | {len(gains)} | {median:.2%} | {max(gains, default=0):.2%}")
EOF
done

#!/usr/bin/env bash
# Benchmark: mlgo_corpus.InlinerEnv steps per second against a harvest of
# the same modules.
#
#   bench/python_env.sh [N]     (default: 20 modules of bench/harvest.sh's C corpus)
#
# The environment runs one episode per module, answering every query with
# the compiler's own inlining_default (so both do the same compiles), one
# module at a time; the harvest is harvest-logs --mode=interactive
# --num_workers=1 --compile_server=off over the same modules (the channel
# and host the environment uses, exec'd opt as the environment runs it).
# Both run opt and llc per module; the environment also compiles each
# module once more with the ordinary inliner (its reward's baseline). Prints
# decisions, seconds and decisions/s for each, and the ratio.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MLGO_BUILD_DIR:-$root/build}/bin
package=${MLGO_BUILD_DIR:-$root/build}/python
[ -f "$package/mlgo_corpus/env.py" ] || { echo "build first: scripts/setup.sh (python3-dev, pybind11-dev)" >&2; exit 1; }
work=$root/bench/.work
n=${1:-20}
# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"
dir=$work/harvest_c_$n
generate "$n" "$dir"
out=$work/python_env_$n
rm -rf "$out" && mkdir -p "$out"

t0=$(date +%s.%N)
"$bin/harvest-logs" -q --corpus="$dir/corpus" --output_dir="$out/harvest" --mode=interactive --num_workers=1 \
  --compile_server=off --policy=default >/dev/null
t1=$(date +%s.%N)
harvest_seconds=$(echo "$t1 - $t0" | bc -l)
harvest_decisions=$(grep -o '"decisions": [0-9]*' "$out/harvest/summary.json" | grep -o '[0-9]*$')

PYTHONPATH=$package /usr/bin/python3 - "$dir/corpus" "$out" "$harvest_seconds" "$harvest_decisions" <<'PY'
import sys, time
import mlgo_corpus
corpus, out, harvest_seconds, harvest_decisions = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
steps = 0
start = time.perf_counter()
for module in mlgo_corpus.Corpus(corpus):
    env = mlgo_corpus.InlinerEnv(corpus, module.name, work_dir=out)
    observation, info = env.reset()
    while observation:
        observation, reward, terminated, truncated, info = env.step(int(observation["inlining_default"][0]))
        steps += 1
        if terminated or truncated:
            break
    env.close()
seconds = time.perf_counter() - start
print("%-30s %-10s %-10s %-12s" % ("run", "decisions", "seconds", "decisions/s"))
print("%-30s %-10d %-10.2f %-12.0f" % ("harvest-logs (interactive)", harvest_decisions, harvest_seconds,
                                       harvest_decisions / harvest_seconds))
print("%-30s %-10d %-10.2f %-12.0f" % ("InlinerEnv (Python agent)", steps, seconds, steps / seconds))
print("InlinerEnv runs at %.2fx the harvest's decision rate" % ((steps / seconds) / (harvest_decisions / harvest_seconds)))
PY

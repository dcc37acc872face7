#!/usr/bin/env bash
# Bound on what sharing code generation could save an exploration (issue
# 34's second half): for each explored trajectory, the share of its
# optimized module (IR text of its function bodies) that is identical to a
# function of an earlier trajectory of the same chain, weighted by the
# module's llc time. Perfect sharing would skip exactly that llc work and
# nothing else, so the exploration's cost could fall by at most that many
# plain compiles. Prints it as a fraction of 8 plain compiles of the
# corpus (opt + llc per module, CPU time of opt-22 and llc-22 run here,
# once), to subtract from the ratio bench/explore.sh measures (an
# estimate: that ratio is of whole harvests' wall time).
#
#   bench/explore_bound.sh [N]     (default: the 40 generated modules, and zstd's lib)
#
# Reads the trajectories of an --explore=7 run it makes (plugin, default
# policy, 2 workers), replays each one's decisions with the plugin's
# replay: policy to get its optimized module, and compares functions by
# their text with the metadata and attribute groups they use written out
# and numbered within the function (module-wide numbers shift whenever an
# earlier function gains or loses metadata).
# Environment: MLGO_BUILD_DIR (default: build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MLGO_BUILD_DIR:-$root/build}
bin=$build/bin
plugin=$build/lib/mlgo-corpus/libMLGOInlineAdvisor.so
[ -x "$bin/harvest-logs" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
n=${1:-40}
work=$root/bench/.work
# shellcheck source=bench/corpora.sh
source "$root/bench/corpora.sh"
explore_corpora "$n"

for entry in "${corpora[@]}"; do
  name=${entry%%:*} corpus=${entry#*:}
  out=$work/explore_bound
  rm -rf "$out" && mkdir -p "$out/replays"
  "$bin/harvest-logs" -q --corpus="$corpus" --output_dir="$out/explored" --mode=plugin --num_workers=2 --explore=7
  python3 - "$name" "$corpus" "$out" "$plugin" <<'EOF'
import collections, json, os, re, resource, subprocess, sys
name, corpus, out, plugin = sys.argv[1:5]

def cpu(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

def functions(bc):
    """Each defined function's text, with the metadata nodes and attribute
    groups it reaches inlined and renumbered in order of first use, and
    the length of its own text (its weight)."""
    text = subprocess.run(["llvm-dis-22", bc, "-o", "-"], check=True, capture_output=True, text=True).stdout
    nodes, groups, bodies, current, lines = {}, {}, {}, None, []
    for line in text.splitlines():
        if m := re.match(r"^!(\d+) = (.*)$", line):
            nodes[m.group(1)] = m.group(2)
        elif m := re.match(r"^attributes #(\d+) = (.*)$", line):
            groups[m.group(1)] = m.group(2)
    for line in text.splitlines():
        if line.startswith("define "):
            current, lines = re.search(r'@("[^"]+"|[\w.$]+)\(', line).group(1), [line]
        elif current is not None:
            lines.append(line)
            if line == "}":
                bodies[current], current = "\n".join(lines), None
    def canonical(body):
        order = {}
        def number(m):
            if m.group(1) not in order:
                order[m.group(1)] = len(order)
            return "!m%d" % order[m.group(1)]
        out = re.sub(r"!(\d+)\b", number, body)
        done = 0
        while done < len(order):  # the nodes reached, each once, as numbered
            key = list(order)[done]
            out += "\n!m%d = " % done + re.sub(r"!(\d+)\b", number, nodes.get(key, "?"))
            done += 1
        return re.sub(r"#(\d+)\b", lambda m: groups.get(m.group(1), "#?"), out)
    return {f: (canonical(b), len(b)) for f, b in bodies.items()}

chains = collections.defaultdict(list)
for line in open(f"{out}/explored/explore.jsonl"):
    t = json.loads(line)
    chains[t["module"]].append(t)
plain = saving = 0.0
explored = 0
for module, chain in sorted(chains.items()):
    bc = f"{corpus}/{module}.bc"
    optimized = f"{out}/replays/plain.bc"
    opt_s = cpu(["opt-22", "-passes=default<Oz>", "-load-pass-plugin=" + plugin, bc, "-o", optimized])
    llc_s = cpu(["llc-22", "-filetype=obj", optimized, "-o", f"{out}/replays/plain.o"])
    plain += 8 * (opt_s + llc_s)
    seen = collections.defaultdict(set)
    for t in chain:
        if t["status"] != "ok":
            continue
        replay, optimized = f"{out}/replays/replay.jsonl", f"{out}/replays/t.bc"
        with open(replay, "w") as f:
            f.write(json.dumps({"module": module, "decisions": t["decisions"]}) + "\n")
        subprocess.run(["opt-22", "-passes=default<Oz>", "-load-pass-plugin=" + plugin,
                        "-mlgo-inliner-policy=replay:" + replay, "-mlgo-inliner-module=" + module, bc,
                        "-o", optimized], check=True)
        bodies = functions(optimized)
        if t["trajectory"] > 0:
            explored += 1
            total = sum(size for _, size in bodies.values())
            same = sum(size for f, (b, size) in bodies.items() if b in seen[f])
            saving += llc_s * same / max(total, 1)
        for f, (b, _) in bodies.items():
            seen[f].add(b)
print(f"{name}: {len(chains)} modules, {explored} explored trajectories")
print(f"  llc work on functions an earlier trajectory of the chain already had: "
      f"{saving:.2f} s of {plain:.2f} s (8 plain compiles) = {saving / plain:.3f}")
print(f"  so sharing code generation perfectly lowers bench/explore.sh's ratio by at most {saving / plain:.3f}")
EOF
done

#!/usr/bin/env bash
# A single-node Slurm (munged, slurmctld, slurmd) on this machine, as root,
# without systemd, with every file under DIR: configuration, munge key and
# socket, state, spool, logs and pid files. Used by the Slurm tests and
# bench/slurm.sh; handy to try scripts/slurm/submit.sh locally.
#
#   local-cluster.sh start DIR [--owner PID]   prints the slurm.conf path; export SLURM_CONF=<it>
#   local-cluster.sh stop DIR                  cancels every job, stops the daemons, and fails if
#                                              any process of this cluster survives
#
# --owner PID: a watchdog stops the cluster when PID dies (a killed test
# leaves no daemon behind). Ports are picked free at start.
set -euo pipefail
usage() {
  echo "usage: $0 start DIR [--owner PID] | stop DIR" >&2
  exit 2
}
[ $# -ge 2 ] || usage
action=$1 dir=$(realpath -m -- "$2")
shift 2
conf=$dir/slurm.conf

alive() { # PID: running and not a zombie (PID 1 here may not reap)
  [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# Processes of this cluster, never the shells that manage it: the daemons
# (their command lines name $conf or the munge socket), slurmstepd, and job
# processes (SLURM_JOB_ID set) that inherited SLURM_CONF=$conf.
cluster_pids() {
  python3 - "$conf" "$dir/socket/" <<'PY'
import os, sys
conf, socket = sys.argv[1], sys.argv[2]
for pid in filter(str.isdigit, os.listdir("/proc")):
    if int(pid) == os.getpid():
        continue
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                continue
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().decode(errors="replace")
        if conf in cmdline or socket in cmdline:
            print(pid)
            continue
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().decode(errors="replace").split("\0")
        with open(f"/proc/{pid}/comm") as f:
            comm = f.read().strip()
    except OSError:
        continue
    if "SLURM_CONF=" + conf in env and (comm == "slurmstepd" or any(e.startswith("SLURM_JOB_ID=") for e in env)):
        print(pid)
PY
}

stop() {
  export SLURM_CONF=$conf
  if [ -f "$dir/run/slurmctld.pid" ] && alive "$(cat "$dir/run/slurmctld.pid")"; then
    local jobs
    jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    [ -z "${jobs// /}" ] || scancel $jobs 2>/dev/null || true
    for _ in $(seq 100); do
      [ -z "$(squeue -h 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local name pid
  for name in watchdog slurmd slurmctld munged; do
    [ -s "$dir/run/$name.pid" ] || continue
    pid=$(cat "$dir/run/$name.pid")
    [ "$pid" = "${BASHPID:-$$}" ] && continue # the watchdog stopping the cluster
    alive "$pid" && kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/run/$name.pid"
  done
  # Whatever the daemons left behind (orphaned job steps), by pid.
  local left
  for _ in 1 2 3; do
    left=$(cluster_pids)
    [ -z "$left" ] && return 0
    kill -9 $left 2>/dev/null || true
    sleep 0.3
  done
  left=$(cluster_pids)
  if [ -n "$left" ]; then
    echo "local-cluster.sh: processes of $dir survive: $left" >&2
    return 1
  fi
}

start() {
  local owner=
  while [ $# -gt 0 ]; do
    case $1 in
    --owner) owner=$2; shift 2 ;;
    *) usage ;;
    esac
  done
  for t in munged mungekey slurmctld slurmd sbatch; do
    command -v "$t" >/dev/null || { echo "local-cluster.sh: $t not found: install slurm-wlm and munge (scripts/setup.sh)" >&2; exit 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "local-cluster.sh: needs root (slurmd starts jobs as their user)" >&2; exit 1; }
  mkdir -p "$dir"/{munge,socket,state,spool,log,run}
  # munged wants its key private and every directory above its socket
  # searchable by all.
  chmod 0700 "$dir/munge"
  chmod 0755 "$dir" "$dir/socket"
  local host cpus mem ports
  host=$(hostname -s) cpus=$(nproc) mem=$(($(awk '/^MemTotal:/{print $2}' /proc/meminfo) / 1024 * 9 / 10))
  [ -s "$dir/munge/munge.key" ] || mungekey -c -k "$dir/munge/munge.key" >/dev/null
  munged --socket="$dir/socket/munge.socket" --key-file="$dir/munge/munge.key" --log-file="$dir/log/munged.log" \
    --pid-file="$dir/run/munged.pid" --seed-file="$dir/munge/munge.seed"
  munge -S "$dir/socket/munge.socket" -n | unmunge -S "$dir/socket/munge.socket" >/dev/null
  ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  read -r ctld_port slurmd_port <<<"$ports"
  cat >"$conf" <<CONF
ClusterName=mlgo-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/socket/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$conf
  slurmctld -f "$conf"
  slurmd -f "$conf"
  local state=
  for _ in $(seq 150); do
    state=$(sinfo -h -N -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  if [ "$state" != idle ]; then
    echo "local-cluster.sh: the node is '$state', not idle, after 30 s; logs in $dir/log:" >&2
    tail -n 20 "$dir"/log/*.log >&2 || true
    stop || true
    exit 1
  fi
  if [ -n "$owner" ]; then
    setsid bash -c 'echo $$ >"$1/run/watchdog.pid"
      while [ -r /proc/$2/stat ] && [ "$(awk "{print \$3}" /proc/$2/stat)" != Z ]; do sleep 0.5; done
      "$3" stop "$1"' watchdog "$dir" "$owner" "$(realpath "$0")" </dev/null >>"$dir/log/watchdog.log" 2>&1 &
  fi
  echo "$conf"
}

case $action in
start) start "$@" ;;
stop) stop ;;
*) usage ;;
esac

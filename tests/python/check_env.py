#!/usr/bin/python3
"""mlgo_corpus.InlinerEnv against harvest-logs on a real corpus.

usage: check_env.py CORPUS HARVEST_LOGS WORK

1. A seeded random agent runs an episode on every module; then, per module,
   harvest-logs --mode=interactive replays the agent's actions as an exec:
   policy (tests/python/replay_policy.py): the env's observations equal the
   harvest's log feature by feature, its final native size, default size
   and reward equal the journal's.
2. close() half-way, a new reset() half-way and a SIGKILLed Python process
   half-way leave no opt process; close() leaves no FIFO or directory.
3. A corrupt module raises MlgoError at reset(); a compiler that hangs is
   killed at the timeout and reported; a bad action is a ValueError.
Prints a JSON summary; a difference is an AssertionError.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

import mlgo_corpus

HERE = os.path.dirname(os.path.abspath(__file__))


def opt_processes(marker):
    """Live processes whose command line mentions `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z" and int(pid) != os.getpid():
            found.append(cmd)
    return found


def wait_until_gone(marker, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not opt_processes(marker):
            return True
        time.sleep(0.05)
    return False


def random_episodes(corpus, work):
    rng = random.Random(7)
    episodes = {}
    for module in mlgo_corpus.Corpus(corpus):
        env = mlgo_corpus.InlinerEnv(corpus, module.name, work_dir=work)
        observation, info = env.reset()
        seen, actions = [], []
        while True:
            seen.append(observation)
            action = rng.randint(0, 1)
            actions.append(action)
            observation, reward, terminated, truncated, info = env.step(action)
            assert not truncated, info
            if terminated:
                break
            assert reward == 0.0
        env.close()
        episodes[module.name] = (seen, actions, reward, info)
    return episodes


def replay_and_compare(corpus, harvest_logs, work, episodes):
    compared = 0
    for name, (seen, actions, reward, info) in episodes.items():
        actions_file = os.path.join(work, name + ".actions.json")
        with open(actions_file, "w") as f:
            json.dump(actions, f)
        out = os.path.join(work, "replay-" + name)
        policy = "exec:env PYTHONPATH=%s %s %s %s" % (os.environ["PYTHONPATH"], sys.executable,
                                                     os.path.join(HERE, "replay_policy.py"), actions_file)
        subprocess.run([harvest_logs, "--progress_interval=0", "--corpus=" + corpus, "--output_dir=" + out,
                        "--mode=interactive", "--num_workers=1", "--modules_filter=" + name.replace(".", "\\.") + "$",
                        "--policy=" + policy], check=True, capture_output=True)
        harvest = mlgo_corpus.Harvest(out)
        module = harvest[name]
        assert module.ok, module.record
        log = module.read_log()
        assert len(log) == len(seen), (name, len(log), len(seen))
        for i, observation in enumerate(seen):
            for feature, value in observation.items():
                assert np.array_equal(log.features[feature][i], value), (name, i, feature)
            assert int(log.decisions[i, 0]) == actions[i], (name, i)
        assert module.native_size == info["native_size"], (name, module.record, info)
        assert module.default_size == info["default_size"], (name, module.record, info)
        assert abs(module.reward - reward) < 1e-12, (name, module.record, reward)
        compared += len(seen)
    return compared


def cleanup_checks(corpus, work):
    name = mlgo_corpus.Corpus(corpus).modules[0].name
    # close() half-way: no opt, no directory (so no FIFO).
    env = mlgo_corpus.InlinerEnv(corpus, name, work_dir=work)
    env.reset()
    env.step(1)
    directory = env._directory
    assert os.path.isdir(directory) and opt_processes(directory)
    env.close()
    assert not os.path.exists(directory), directory
    assert wait_until_gone(directory), "opt survived close()"
    # A new reset() half-way ends the old episode the same way.
    env.reset()
    first = env._directory
    env.reset()
    assert not os.path.exists(first) and wait_until_gone(first)
    env.close()
    # A SIGKILLed Python process half-way: opt dies with it.
    marker = os.path.join(work, "killed")
    os.makedirs(marker, exist_ok=True)
    child = subprocess.Popen([sys.executable, "-c",
                              "import mlgo_corpus, sys, time\n"
                              "env = mlgo_corpus.InlinerEnv(sys.argv[1], sys.argv[2], work_dir=sys.argv[3])\n"
                              "env.reset(); env.step(0)\n"
                              "print('ready', flush=True); time.sleep(600)\n", corpus, name, marker],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    assert opt_processes(marker), "no opt while the episode runs"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert wait_until_gone(marker), "opt survived its SIGKILLed host"


def failure_checks(corpus, work):
    broken = os.path.join(work, "broken")
    shutil.copytree(corpus, broken)
    name = mlgo_corpus.Corpus(broken).modules[0].name
    with open(os.path.join(broken, name + ".bc"), "wb") as f:
        f.write(b"BC\xc0\xde not bitcode")
    try:
        mlgo_corpus.InlinerEnv(broken, name, work_dir=work).reset()
        raise AssertionError("a corrupt module started an episode")
    except mlgo_corpus.MlgoError as e:
        assert name in str(e) and "failed" in str(e), str(e)
    hang = os.path.join(work, "hanging-opt")
    with open(hang, "w") as f:
        f.write("#!/bin/sh\nexec sleep 600\n")
    os.chmod(hang, 0o755)
    env = mlgo_corpus.InlinerEnv(corpus, name, opt_path=hang, timeout=2, work_dir=work)
    started = time.time()
    try:
        env.reset()
        raise AssertionError("a hanging compiler started an episode")
    except mlgo_corpus.MlgoError as e:
        assert "timed out" in str(e), str(e)
    assert time.time() - started < 30
    assert wait_until_gone(hang), "the hanging compiler survived its timeout"
    env = mlgo_corpus.InlinerEnv(corpus, mlgo_corpus.Corpus(corpus).modules[0].name, work_dir=work)
    env.reset()
    for bad in (2, -1, 0.5, "1", [1, 0]):
        try:
            env.step(bad)
            raise AssertionError("accepted action %r" % (bad,))
        except ValueError:
            pass
    env.step(np.int64(1))
    env.step(True)
    env.close()


def main():
    corpus, harvest_logs, work = sys.argv[1:4]
    episodes = random_episodes(corpus, work)
    compared = replay_and_compare(corpus, harvest_logs, work, episodes)
    cleanup_checks(corpus, work)
    failure_checks(corpus, work)
    left = [e for e in os.listdir(work) if e.startswith("mlgo-inliner-")]
    assert not left, left
    print(json.dumps({"modules": len(episodes), "observations_compared": compared}))


main()

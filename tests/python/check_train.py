#!/usr/bin/python3
"""mlgo_corpus.train's parts without a harvest: the bucket weights against
values computed by hand here, size labels at the thresholds, the model's
shape and initialisation, the weighted loss, the two-logit export form,
profile files, reproducibility for a seed and a loss that decreases on a
learnable dataset.

usage: check_train.py WORK
Prints a JSON summary; a failure is an AssertionError (exit 1).
"""
import json
import math
import os
import sys

import numpy as np
import torch

from mlgo_corpus import MlgoError
from mlgo_corpus import train as bc

checked = []


def check(name):
    def register(f):
        f()
        checked.append(name)
        return f
    return register


def softmax(values):
    exps = [math.exp(v) for v in values]
    return [e / sum(exps) for e in exps]


@check("bucket_weights_by_hand")
def _():
    # Thresholds 10 and 20: buckets (<10), [10, 20), (>=20).
    weights = bc.TrainingWeights(thresholds=[10.0, 20.0])
    assert np.allclose(weights.p, [1 / 3] * 3)
    # Pair 1. Regret in the bucket of the eval loss:
    #   a: 8 - 5 = 3 -> bucket 0;  b: 15 - 15 = 0 -> bucket 1;
    #   c: 40 - 30 = 10 -> bucket 2;  d: 20 - 12 = 8 -> bucket 2 (20 is a threshold: up);
    #   e is only in the eval profile: left out.
    # L = [3, 0, 18], scaled by 18 + 1e-6.
    comparator = {"a": 5.0, "b": 15.0, "c": 30.0, "d": 12.0}
    evaluated = {"a": 8.0, "b": 15.0, "c": 40.0, "d": 20.0, "e": 3.0}
    s1 = 18 + 1e-6
    w1 = [1 - 3 / s1, 1 - 0 / s1, 1 - 18 / s1]
    q1 = softmax(w1)
    p1 = [(1 / 3 + q) / 2 for q in q1]
    assert np.allclose(weights.update(comparator, evaluated), p1, rtol=0, atol=1e-12), (weights.p, p1)
    # Pair 2: x: 5 - 1 = 4 -> bucket 0; y: 12 - 2 = 10 -> bucket 1; z: 25 - 30 < 0 counts 0 in bucket 2.
    # L = [4, 10, 0], scaled by 10 + 1e-6; w keeps going from w1.
    s2 = 10 + 1e-6
    w2 = [w1[0] - 4 / s2, w1[1] - 10 / s2, w1[2] - 0]
    q2 = softmax(w2)
    p2 = [(1 / 3 + a + b) / 3 for a, b in zip(q1, q2)]
    got = weights.update({"x": 1.0, "y": 2.0, "z": 30.0}, {"x": 5.0, "y": 12.0, "z": 25.0})
    assert np.allclose(got, p2, rtol=0, atol=1e-12), (got, p2)
    assert weights.rounds == 3
    # Sample weights: min(p) / p[label].
    labels = np.array([0, 1, 2, 2, 0])
    expected = [min(p2) / p2[label] for label in labels]
    assert np.allclose(weights.sample_weights(labels), expected, rtol=1e-6), (weights.sample_weights(labels), expected)
    assert max(expected) == 1.0 and min(expected) < 1.0
    # The bucket that lost most (bucket 1 of pair 2) weighs most.
    assert int(np.argmax(weights.sample_weights(np.arange(3)))) == int(np.argmin(p2))
    try:
        weights.sample_weights(np.array([3]))
        raise AssertionError("a label past the buckets was accepted")
    except ValueError:
        pass


@check("no_regret_keeps_uniform")
def _():
    weights = bc.TrainingWeights()
    assert weights.buckets == 20 and len(bc.SIZE_THRESHOLDS) == 19
    weights.update({"m": 500.0}, {"m": 500.0})
    assert np.allclose(weights.p, 1 / 20) and np.allclose(weights.sample_weights(np.arange(20)), 1.0)


@check("labels_at_thresholds_go_up")
def _():
    thresholds = bc.SIZE_THRESHOLDS
    for i, t in enumerate(thresholds):
        assert bc.size_bucket(t) == i + 1, (t, bc.size_bucket(t))
        assert bc.size_bucket(np.nextafter(t, -np.inf)) == i, t
    assert bc.size_bucket(0) == 0 and bc.size_bucket(284) == 0 and bc.size_bucket(285) == 1
    assert bc.size_bucket(627.5) == 6 and bc.size_bucket(627) == 5
    assert bc.size_bucket(124361) == 19 and bc.size_bucket(10 ** 9) == 19


@check("model_shape_and_initialisation")
def _():
    torch.manual_seed(0)
    model = bc.make_model(114)
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    assert [tuple(l.weight.shape) for l in linears] == [(100, 114), (100, 100), (100, 100), (100, 100), (1, 100)]
    assert sum(isinstance(m, torch.nn.ReLU) for m in model) == 4 and not isinstance(model[-1], torch.nn.ReLU)
    for l in linears:
        assert float(l.bias.abs().max()) == 0.0
    hidden = torch.cat([l.weight.flatten() for l in linears[:-1]])
    assert abs(float(hidden.std()) - 0.01) < 0.0005 and abs(float(hidden.mean())) < 0.0005, float(hidden.std())
    bound = math.sqrt(6 / (100 + 1))  # Glorot uniform
    last = linears[-1].weight
    assert float(last.abs().max()) <= bound and float(last.abs().max()) > bound / 2


@check("weighted_loss_is_the_mean_of_weighted_sigmoid_cross_entropy")
def _():
    torch.manual_seed(1)
    model = bc.make_model(3)
    x = torch.rand(6, 3)
    y = torch.tensor([0, 1, 1, 0, 1, 0], dtype=torch.float32)
    w = torch.tensor([1.0, 0.5, 0.25, 1.0, 0.75, 0.1])
    with torch.no_grad():
        z = model(x)[:, 0].double().numpy()
    p = 1 / (1 + np.exp(-z))
    labels, weights = y.double().numpy(), w.double().numpy()
    expected = np.mean(weights * -(labels * np.log(p) + (1 - labels) * np.log(1 - p)))
    got = float(bc.weighted_loss(model, x, y, w))
    assert abs(got - expected) < 1e-6, (got, expected)


@check("two_logits_are_zero_and_z")
def _():
    torch.manual_seed(2)
    model = bc.make_model(5)
    pair = bc.two_logit_model(model)
    x = np.random.default_rng(0).random((50, 5)).astype(np.float32)
    decisions, z = bc.decide(model, x)
    with torch.no_grad():
        logits = pair(torch.from_numpy(x)).numpy()
    assert np.all(logits[:, 0] == 0) and np.allclose(logits[:, 1], z, atol=1e-7)
    assert np.array_equal(decisions, logits.argmax(axis=1)) and np.array_equal(decisions, (z > 0).astype(np.int64))
    # A tie does not inline, in torch as in an arg-max that picks the first.
    with torch.no_grad():
        for m in model:
            if isinstance(m, torch.nn.Linear):
                m.weight.zero_()
    tie_decisions, tie_z = bc.decide(model, x)
    assert np.all(tie_z == 0) and np.all(tie_decisions == 0)
    assert model[-1].weight.shape == (1, 100), "two_logit_model must not change the trained model"


@check("profile_files")
def _():
    work = sys.argv[1]
    path = os.path.join(work, "p_max.json")
    bc.write_profile(path, [{"module_name": "a.o", "loss": 1234, "horizon": 7},
                            {"module_name": "sub/b.o", "loss": 99.5, "horizon": 0}])
    text = open(path, encoding="utf-8").read()
    assert text.startswith('[\n  {\n    "module_name": "a.o",\n    "loss": 1234.0,\n    "horizon": 7\n  },'), text
    assert json.loads(text) == [{"module_name": "a.o", "loss": 1234.0, "horizon": 7},
                                {"module_name": "sub/b.o", "loss": 99.5, "horizon": 0}]
    assert bc.read_profile(path) == {"a.o": 1234.0, "sub/b.o": 99.5}
    bad = os.path.join(work, "bad.json")
    for content, reason in (('{"a": 1}', "expected a JSON array"), ('[{"module_name": "m", "loss": "x"}]',
                                                                     "loss is not a number"), ("[", "not a profile")):
        with open(bad, "w") as f:
            f.write(content)
        try:
            bc.read_profile(bad)
            raise AssertionError("accepted " + content)
        except MlgoError as e:
            assert bad in str(e) and reason in str(e), str(e)


@check("a_harvest_without_explore_is_named")
def _():
    plain = os.path.join(sys.argv[1], "plain")
    os.makedirs(plain, exist_ok=True)
    try:
        bc.load_harvests([plain])
        raise AssertionError("accepted a harvest without explore.jsonl")
    except MlgoError as e:
        assert os.path.join(plain, "explore.jsonl") in str(e) and "missing" in str(e), str(e)


def learnable(n=512, k=6, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, k)).astype(np.float32)
    y = (x[:, 0] > 0.2).astype(np.int64)
    w = rng.choice([0.25, 1.0], size=n).astype(np.float32)
    return x, y, w


@check("same_seed_same_weights")
def _():
    x, y, w = learnable()
    a = bc.train(x, y, w, epochs=2, batch_size=128, seed=7)
    b = bc.train(x, y, w, epochs=2, batch_size=128, seed=7)
    c = bc.train(x, y, w, epochs=2, batch_size=128, seed=8)
    assert a.steps == b.steps == 8
    sa, sb, sc = a.model.state_dict(), b.model.state_dict(), c.model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa), "the same seed gave different weights"
    assert not all(torch.equal(sa[k], sc[k]) for k in sa), "another seed gave the same weights"
    assert a.epoch_losses == b.epoch_losses and a.final_loss == b.final_loss


@check("remainder_dropped")
def _():
    x, y, w = learnable(n=300)
    assert bc.train(x, y, w, epochs=3, batch_size=128).steps == 6


@check("loss_decreases_on_a_learnable_dataset")
def _():
    # ml-compiler-opt's start (4 layers of Normal(0, 0.01^2) kernels) passes
    # almost no signal, so a few hundred SGD steps learn what the last layer
    # can: here the 76% majority of y = (x0 > 0.2). The loss must fall well
    # below the untrained network's.
    rng = np.random.default_rng(0)
    x = rng.random((512, 6)).astype(np.float32)
    y = (x[:, 0] > 0.2).astype(np.int64)
    w = rng.choice([0.25, 1.0], size=len(y)).astype(np.float32)
    torch.manual_seed(3)
    untrained = bc.make_model(x.shape[1])
    with torch.no_grad():
        before = float(bc.weighted_loss(untrained, torch.from_numpy(x), torch.from_numpy(y.astype(np.float32)),
                                        torch.from_numpy(w)))
    result = bc.train(x, y, w, epochs=20, batch_size=128, learning_rate=0.1, seed=3)
    assert result.final_loss < 0.85 * before, (before, result.final_loss)
    assert result.epoch_losses[-1] < result.epoch_losses[0], result.epoch_losses
    assert result.accuracy >= y.mean() - 1e-9, (result.accuracy, y.mean())
    # Training starts from the same seed's untrained network: one epoch already lowers the loss.
    one = bc.train(x, y, w, epochs=1, batch_size=128, learning_rate=0.1, seed=3)
    assert one.final_loss < before, (before, one.final_loss)


print(json.dumps({"checked": checked}))

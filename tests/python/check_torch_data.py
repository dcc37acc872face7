#!/usr/bin/python3
"""mlgo_corpus.data (torch adapters) on a real harvest: ObservationDataset
holds every logged observation once, with its decision, in log order;
LogStream split over two DataLoader workers yields every observation exactly
once; a transform (features.normalize) gives the network's input.

usage: check_torch_data.py HARVEST VOCAB
"""
import json
import sys

import numpy as np
import torch

import mlgo_corpus
from mlgo_corpus.data import LogStream, ObservationDataset
from mlgo_corpus.features import Vocab, normalize


def main():
    harvest = mlgo_corpus.Harvest(sys.argv[1])
    vocab = Vocab.load(sys.argv[2])
    logs = [m.read_log() for m in harvest.with_logs()]
    total = sum(len(log) for log in logs)
    names = ["callee_users", "node_count"]

    ds = ObservationDataset(harvest, features=names)
    assert len(ds) == total, (len(ds), total)
    expected_x = np.concatenate([np.concatenate([log.features[n] for n in names], axis=1) for log in logs])
    expected_y = np.concatenate([log.decisions[:, 0] for log in logs])
    assert np.array_equal(ds.x.numpy(), expected_x.astype(np.float32))
    assert np.array_equal(ds.y.numpy(), expected_y)
    seen = 0
    for x, y in torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0)):
        assert x.shape[1] == 2 and x.dtype == torch.float32 and y.dtype == torch.int64
        seen += len(y)
    assert seen == total

    inputs = vocab.input_features(logs[0].feature_names)
    normalized = ObservationDataset(harvest, transform=lambda log: normalize(log.features, vocab, inputs))
    assert normalized.x.shape == (total, 2 * len(inputs)), normalized.x.shape

    stream = LogStream(harvest, batch_size=50, collate=lambda b: (b.observation_ids.copy(), len(b)))
    counted = 0
    for ids, n in torch.utils.data.DataLoader(stream, batch_size=None, num_workers=2):
        assert 0 < n <= 50
        counted += n
    assert counted == total, (counted, total)
    print(json.dumps({"observations": total}))


main()

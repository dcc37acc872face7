#!/usr/bin/python3
"""An independent TransE in PyTorch (Debian's python3-torch), the same model
and hyperparameters as mlgo-ir2vec train: L1 distance |h + r - t|, vectors
uniform in +-6/sqrt(dim) (relations then normalised), entities normalised to
unit length every epoch, the triplets shuffled every epoch, one negative per
triplet with its head or tail (a fair coin) replaced by a uniform entity,
plain SGD on the summed margin loss of each batch; raw hits@10 over head and
tail prediction. Its random streams are torch's, not ours: the two agree in
quality, not in vectors.

usage: transe_oracle.py DIM EPOCHS BATCH LR MARGIN SEEDS FOLD...
SEEDS is comma-separated; each FOLD directory holds train/ (the three OpenKE
files) and test2id.txt. Prints {"hits_at_10_test": the mean over every fold
and seed, "runs": [...]}.
"""
import json
import os
import sys

import torch


def read_triplets(path):
    with open(path) as f:
        count = int(f.readline())
        rows = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
    assert len(rows) == count, path
    return torch.tensor(rows, dtype=torch.long)


def count(path):
    with open(path) as f:
        return int(f.readline())


def hits_at_10(entities, relations, triplets):
    h, t, r = entities[triplets[:, 0]], entities[triplets[:, 1]], relations[triplets[:, 2]]
    truth = (h + r - t).abs().sum(1)
    tails = ((h + r).unsqueeze(1) - entities.unsqueeze(0)).abs().sum(2)
    heads = (entities.unsqueeze(0) + (r - t).unsqueeze(1)).abs().sum(2)
    tail_rank = 1 + (tails < truth.unsqueeze(1)).sum(1)
    head_rank = 1 + (heads < truth.unsqueeze(1)).sum(1)
    return float(((tail_rank <= 10).sum() + (head_rank <= 10).sum()) / (2 * len(triplets)))


def train(triplets, n_entities, n_relations, dim, epochs, batch, lr, margin, seed):
    g = torch.Generator().manual_seed(seed)
    bound = 6.0 / dim ** 0.5
    entities = (torch.rand(n_entities, dim, generator=g) * 2 - 1) * bound
    relations = (torch.rand(n_relations, dim, generator=g) * 2 - 1) * bound
    relations = relations / relations.norm(dim=1, keepdim=True)
    entities.requires_grad_(True)
    relations.requires_grad_(True)
    n = len(triplets)
    for _ in range(epochs):
        with torch.no_grad():
            entities /= entities.norm(dim=1, keepdim=True).clamp_min(1e-12)
        order = torch.randperm(n, generator=g)
        for start in range(0, n, batch):
            part = triplets[order[start:start + batch]]
            coin = torch.randint(0, 2, (len(part),), generator=g).bool()
            other = torch.randint(0, n_entities, (len(part),), generator=g)
            neg = part.clone()
            neg[coin, 0] = other[coin]
            neg[~coin, 1] = other[~coin]
            same = (neg == part).all(1)
            h, t, r = entities[part[:, 0]], entities[part[:, 1]], relations[part[:, 2]]
            nh, nt = entities[neg[:, 0]], entities[neg[:, 1]]
            loss = (margin + (h + r - t).abs().sum(1) - (nh + r - nt).abs().sum(1)).clamp_min(0)
            loss = loss[~same].sum()
            if entities.grad is not None:
                entities.grad.zero_()
                relations.grad.zero_()
            loss.backward()
            with torch.no_grad():
                entities -= lr * entities.grad
                relations -= lr * relations.grad
    with torch.no_grad():
        entities /= entities.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return entities.detach(), relations.detach()


def main():
    dim, epochs, batch = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    lr, margin = float(sys.argv[4]), float(sys.argv[5])
    seeds = [int(s) for s in sys.argv[6].split(",")]
    torch.set_num_threads(1)
    runs = []
    for fold in sys.argv[7:]:
        train_dir = os.path.join(fold, "train")
        triplets = read_triplets(os.path.join(train_dir, "train2id.txt"))
        test = read_triplets(os.path.join(fold, "test2id.txt"))
        n_entities = count(os.path.join(train_dir, "entity2id.txt"))
        n_relations = count(os.path.join(train_dir, "relation2id.txt"))
        for seed in seeds:
            e, r = train(triplets, n_entities, n_relations, dim, epochs, batch, lr, margin, seed)
            runs.append(hits_at_10(e, r, test))
    print(json.dumps({"hits_at_10_test": sum(runs) / len(runs), "runs": runs}))


main()

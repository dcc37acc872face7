#include "mlgo/embed/TransE.h"
#include "mlgo/support/SplitMix.h"

#include "mlgo/support/PathUtil.h"

#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace mlgo {
namespace {

// A "count" line, then `count` lines the callback parses; errors name the
// file and the line.
llvm::Error readCounted(llvm::StringRef path,
                        const std::function<llvm::Error(llvm::StringRef line, size_t index)> &each) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  llvm::StringRef text = (*buffer)->getBuffer();
  auto [first, rest] = text.split('\n');
  uint64_t count;
  if (first.trim().getAsInteger(10, count))
    return llvm::createStringError("%s: line 1: expected the number of lines that follow, found '%s'",
                                   path.str().c_str(), first.take_front(40).str().c_str());
  size_t index = 0;
  for (; !rest.empty(); ++index) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line.trim().empty())
      continue;
    if (index >= count)
      return llvm::createStringError("%s: more than the %llu lines line 1 announces", path.str().c_str(),
                                     static_cast<unsigned long long>(count));
    if (llvm::Error e = each(line, index))
      return llvm::createStringError("%s: line %zu: %s", path.str().c_str(), index + 2,
                                     llvm::toString(std::move(e)).c_str());
  }
  if (index != count)
    return llvm::createStringError("%s: %zu lines where line 1 announces %llu", path.str().c_str(), index,
                                   static_cast<unsigned long long>(count));
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::string>> readNames(llvm::StringRef path) {
  std::vector<std::string> names;
  if (llvm::Error e = readCounted(path, [&](llvm::StringRef line, size_t index) -> llvm::Error {
        auto [name, id] = line.rsplit('\t');
        size_t value;
        if (id.trim().getAsInteger(10, value) || value != index)
          return llvm::createStringError("expected '<name>\\t%zu'", index);
        names.push_back(name.str());
        return llvm::Error::success();
      }))
    return std::move(e);
  return names;
}

float distance(const float *h, const float *r, const float *t, unsigned dim) {
  float d = 0;
  for (unsigned k = 0; k < dim; ++k)
    d += std::fabs(h[k] + r[k] - t[k]);
  return d;
}

void normalize(float *v, unsigned dim) {
  float norm = 0;
  for (unsigned k = 0; k < dim; ++k)
    norm += v[k] * v[k];
  norm = std::sqrt(norm);
  if (norm > 0)
    for (unsigned k = 0; k < dim; ++k)
      v[k] /= norm;
}

} // namespace

llvm::Expected<std::vector<Triplet>> readTripletFile(llvm::StringRef path, size_t entities, size_t relations) {
  std::vector<Triplet> triplets;
  if (llvm::Error e = readCounted(path, [&](llvm::StringRef line, size_t) -> llvm::Error {
        llvm::SmallVector<llvm::StringRef, 3> fields;
        line.split(fields, ' ', -1, /*KeepEmpty=*/false);
        Triplet t;
        if (fields.size() != 3 || fields[0].getAsInteger(10, t.Head) || fields[1].getAsInteger(10, t.Tail) ||
            fields[2].getAsInteger(10, t.Relation))
          return llvm::createStringError("expected 'head tail relation'");
        if (t.Head >= entities || t.Tail >= entities || t.Relation >= relations)
          return llvm::createStringError("an id beyond the %zu entities or %zu relations", entities, relations);
        triplets.push_back(t);
        return llvm::Error::success();
      }))
    return std::move(e);
  return triplets;
}

llvm::Expected<TripletData> readTripletData(llvm::StringRef dir) {
  TripletData data;
  auto entities = readNames(joinPath(dir, "entity2id.txt"));
  if (!entities)
    return entities.takeError();
  auto relations = readNames(joinPath(dir, "relation2id.txt"));
  if (!relations)
    return relations.takeError();
  data.Entities = std::move(*entities);
  data.Relations = std::move(*relations);
  auto triplets = readTripletFile(joinPath(dir, "train2id.txt"), data.Entities.size(), data.Relations.size());
  if (!triplets)
    return triplets.takeError();
  data.Triplets = std::move(*triplets);
  if (data.Triplets.empty())
    return llvm::createStringError("%s/train2id.txt: no triplets to train on", dir.str().c_str());
  return data;
}

TransEModel trainTransE(const TripletData &data, const TransEOptions &options) {
  const unsigned dim = options.Dimension;
  const size_t entities = data.Entities.size(), relations = data.Relations.size();
  TransEModel model;
  model.Dimension = dim;
  model.Entities.resize(entities * dim);
  model.Relations.resize(relations * dim);
  std::mt19937_64 init(options.Seed);
  float bound = 6.0f / std::sqrt(static_cast<float>(dim));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  for (float &v : model.Entities)
    v = uniform(init);
  for (float &v : model.Relations)
    v = uniform(init);
  for (size_t r = 0; r < relations; ++r)
    normalize(&model.Relations[r * dim], dim);

  unsigned threads = options.Threads ? options.Threads : static_cast<unsigned>(tbb::info::default_concurrency());
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  const size_t n = data.Triplets.size();
  const size_t batch = std::max<size_t>(1, std::min<size_t>(options.BatchSize, n));
  // One gradient buffer per part of a batch: the parts are fixed, and summed
  // in order, so the thread count alone decides the arithmetic.
  std::vector<std::vector<float>> gradients(threads, std::vector<float>((entities + relations) * dim));
  std::vector<double> partLoss(threads);
  std::vector<size_t> order(n);
  for (unsigned epoch = 0; epoch < options.Epochs; ++epoch) {
    for (size_t e = 0; e < entities; ++e)
      normalize(&model.Entities[e * dim], dim);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(splitmix64(options.Seed ^ (uint64_t(epoch) << 32))));
    double epochLoss = 0;
    for (size_t start = 0; start < n; start += batch) {
      size_t end = std::min(n, start + batch);
      tbb::parallel_for(0u, threads, [&](unsigned part) {
        std::vector<float> &grad = gradients[part];
        std::fill(grad.begin(), grad.end(), 0.0f);
        partLoss[part] = 0;
        size_t length = end - start, from = start + length * part / threads, to = start + length * (part + 1) / threads;
        for (size_t i = from; i < to; ++i) {
          const Triplet &t = data.Triplets[order[i]];
          uint64_t draw = splitmix64(options.Seed ^ splitmix64((uint64_t(epoch) << 32) ^ i));
          Triplet negative = t;
          uint32_t other = static_cast<uint32_t>((draw >> 1) % entities);
          if (draw & 1)
            negative.Head = other;
          else
            negative.Tail = other;
          if (negative == t)
            continue;
          const float *h = &model.Entities[t.Head * dim], *r = &model.Relations[t.Relation * dim],
                      *tail = &model.Entities[t.Tail * dim];
          const float *nh = &model.Entities[negative.Head * dim], *nt = &model.Entities[negative.Tail * dim];
          float loss = static_cast<float>(options.Margin) + distance(h, r, tail, dim) - distance(nh, r, nt, dim);
          if (loss <= 0)
            continue;
          partLoss[part] += loss;
          float *gh = &grad[t.Head * dim], *gt = &grad[t.Tail * dim], *gnh = &grad[negative.Head * dim],
                *gnt = &grad[negative.Tail * dim], *gr = &grad[(entities + t.Relation) * dim];
          for (unsigned k = 0; k < dim; ++k) {
            float p = h[k] + r[k] - tail[k], q = nh[k] + r[k] - nt[k];
            float sp = (p > 0) - (p < 0), sq = (q > 0) - (q < 0);
            gh[k] += sp;
            gt[k] -= sp;
            gr[k] += sp - sq;
            gnh[k] -= sq;
            gnt[k] += sq;
          }
        }
      });
      float lr = static_cast<float>(options.LearningRate);
      for (unsigned part = 0; part < threads; ++part) {
        const std::vector<float> &grad = gradients[part];
        for (size_t i = 0; i < entities * dim; ++i)
          model.Entities[i] -= lr * grad[i];
        for (size_t i = 0; i < relations * dim; ++i)
          model.Relations[i] -= lr * grad[entities * dim + i];
        epochLoss += partLoss[part];
      }
    }
    model.FinalLoss = epochLoss;
  }
  for (size_t e = 0; e < entities; ++e)
    normalize(&model.Entities[e * dim], dim);
  return model;
}

double hitsAt10(const TransEModel &model, const std::vector<Triplet> &triplets) {
  if (triplets.empty())
    return 0;
  const unsigned dim = model.Dimension;
  const size_t entities = model.Entities.size() / dim;
  size_t hits = 0;
  for (const Triplet &t : triplets) {
    const float *h = &model.Entities[t.Head * dim], *r = &model.Relations[t.Relation * dim],
                *tail = &model.Entities[t.Tail * dim];
    float truth = distance(h, r, tail, dim);
    size_t tailRank = 1, headRank = 1;
    for (size_t e = 0; e < entities; ++e) {
      const float *x = &model.Entities[e * dim];
      tailRank += distance(h, r, x, dim) < truth;
      headRank += distance(x, r, tail, dim) < truth;
    }
    hits += (tailRank <= 10) + (headRank <= 10);
  }
  return static_cast<double>(hits) / (2.0 * triplets.size());
}

} // namespace mlgo

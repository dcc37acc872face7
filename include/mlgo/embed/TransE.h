// Native TransE training of an IR2Vec or MIR2Vec vocabulary (`mlgo-ir2vec
// train`): the knowledge-graph model LLVM's vocabulary recipe trains with
// OpenKE, here in C++ over oneTBB, deterministic for a seed and a thread
// count. VocabularyJson.h writes the result.
#pragma once

#include "mlgo/embed/Triplets.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlgo {

/// OpenKE's numeric files as `mlgo-ir2vec triplets` writes them.
struct TripletData {
  std::vector<std::string> Entities, Relations; // names by id
  std::vector<Triplet> Triplets;
};

/// Reads DIR/entity2id.txt, DIR/relation2id.txt and `trainFile` (default
/// DIR/train2id.txt); every id is checked against the counts. Errors name
/// the file and line.
llvm::Expected<TripletData> readTripletData(llvm::StringRef dir);
/// A train2id-format file (count, then "head tail relation" lines), ids
/// checked against `entities` and `relations`.
llvm::Expected<std::vector<Triplet>> readTripletFile(llvm::StringRef path, size_t entities, size_t relations);

struct TransEOptions {
  unsigned Dimension = 75; // LLVM's seed vocabularies are 75-dimensional
  unsigned Epochs = 1000;
  unsigned BatchSize = 256;
  double LearningRate = 0.01;
  double Margin = 1.0;
  uint64_t Seed = 0;
  unsigned Threads = 0; // 0 = one per hardware thread
};

/// TransE with the L1 distance |h + r - t|: vectors drawn uniformly from
/// +-6/sqrt(dim) (relations then normalised), entity vectors normalised to
/// unit L2 length at the start of every epoch, the triplets shuffled per
/// epoch, and per triplet one negative with its head or tail (a fair coin)
/// replaced by a uniformly drawn entity; plain SGD on the margin loss
/// max(0, margin + d(positive) - d(negative)), summed over a batch. Every
/// random draw is a function of the seed, the epoch and the triplet's
/// position; each batch's gradient is summed over a fixed split of the batch,
/// so a seed and a thread count give the same vectors.
struct TransEModel {
  unsigned Dimension = 0;
  std::vector<float> Entities, Relations; // row-major, Dimension per row
  double FinalLoss = 0;
};

TransEModel trainTransE(const TripletData &data, const TransEOptions &options);

/// Raw link prediction: for each triplet, the rank of its tail among all
/// entities by |h + r - e| (and of its head by |e + r - t|); the fraction of
/// ranks <= 10 over both.
double hitsAt10(const TransEModel &model, const std::vector<Triplet> &triplets);

} // namespace mlgo

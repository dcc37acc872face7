// The `<feature>.buckets` quantile files of ml-compiler-opt's
// generate_vocab, computed in one streaming pass over training logs.
#pragma once

#include "mlgo/log/LogDataset.h"
#include "mlgo/log/TrainingLog.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlgo {

/// Python's repr() of a float: shortest round trip, `.0` when integral,
/// exponent form below 1e-4 and from 1e16 (`1e-05`, `1e+16`), inf/nan.
std::string pythonFloatRepr(double value);

/// np.quantile(values, np.linspace(0, 1, buckets)) with the default linear
/// method, over values given as a sorted value -> count histogram.
std::vector<double> histogramQuantiles(const std::map<double, uint64_t> &histogram, size_t buckets);

class VocabBuilder {
public:
  /// Each feature keeps an exact histogram of its values until it holds
  /// `maxDistinct` distinct values; past that, neighbouring values are
  /// merged (the quantiles become approximate, and approximate() says so).
  explicit VocabBuilder(size_t maxDistinct = size_t(1) << 20) : MaxDistinct(maxDistinct) {}

  /// Pools every element of every step of every non-excluded feature.
  llvm::Error add(TrainingLogReader &reader);
  /// Writes `<dir>/<feature>.buckets` for every pooled feature.
  llvm::Error write(llvm::StringRef dir, size_t buckets) const;

  const std::map<std::string, std::map<double, uint64_t>> &histograms() const { return Histograms; }
  std::vector<std::string> approximate() const;
  /// The IR2Vec embedding features the logs held, which get no .buckets
  /// (ml-compiler-opt normalises embeddings separately).
  const std::set<std::string> &embeddingsLeftOut() const { return EmbeddingsLeftOut; }

private:
  void insert(std::map<double, uint64_t> &histogram, double value);

  size_t MaxDistinct;
  std::map<std::string, std::map<double, uint64_t>> Histograms;
  std::map<std::string, bool> Merged;
  std::set<std::string> EmbeddingsLeftOut;
};

/// The features generate_vocab leaves out for a problem.
bool excludedFromVocab(std::optional<Problem> problem, llvm::StringRef feature);

} // namespace mlgo

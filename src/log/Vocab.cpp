#include "mlgo/log/Vocab.h"

#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/PathComponent.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Support/FileSystem.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace mlgo {
namespace {
constexpr llvm::StringLiteral BucketsSuffix = ".buckets";
} // namespace

std::string pythonFloatRepr(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string sci(buf, end); // e.g. "-1.2345e-05"
  bool negative = sci[0] == '-';
  if (negative)
    sci.erase(0, 1);
  size_t e = sci.find('e');
  int exponent = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.')
      digits += c;
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      if (digits.size() <= static_cast<size_t>(exponent) + 1)
        out += digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
      else
        out += digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    } else {
      out += "0." + std::string(-exponent - 1, '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1)
    out += "." + digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof(exp), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp;
}

std::vector<double> histogramQuantiles(const std::map<double, uint64_t> &histogram, size_t buckets) {
  std::vector<double> values;
  std::vector<uint64_t> ends; // cumulative counts: values[k] covers sorted indices [ends[k-1], ends[k])
  uint64_t n = 0;
  for (const auto &[value, count] : histogram) {
    n += count;
    values.push_back(value);
    ends.push_back(n);
  }
  std::vector<double> edges;
  if (n == 0 || buckets == 0)
    return edges;
  auto at = [&](uint64_t index) { return values[std::upper_bound(ends.begin(), ends.end(), index) - ends.begin()]; };
  double step = buckets > 1 ? 1.0 / static_cast<double>(buckets - 1) : 0.0;
  for (size_t i = 0; i < buckets; ++i) {
    double q = (i + 1 == buckets && buckets > 1) ? 1.0 : static_cast<double>(i) * step;
    double h = static_cast<double>(n - 1) * q;
    double j = std::floor(h);
    double t = h - j;
    uint64_t lower = static_cast<uint64_t>(j);
    double a = at(lower), b = at(std::min(lower + 1, n - 1));
    double diff = b - a;
    edges.push_back(t < 0.5 ? a + diff * t : b - diff * (1 - t));
  }
  return edges;
}

bool excludedFromVocab(std::optional<Problem> problem, llvm::StringRef feature) {
  if (feature == "reward" || !problem)
    return feature == "reward";
  if (*problem == Problem::Inliner)
    return feature == "inlining_decision" || feature == "callee_embedding" || feature == "caller_embedding";
  return feature == "mask" || feature == "nr_urgent" || feature == "is_hint" || feature == "is_local" ||
         feature == "is_free" || feature == "max_stage" || feature == "min_stage";
}

void VocabBuilder::insert(std::map<double, uint64_t> &histogram, double value) {
  ++histogram[value];
  if (histogram.size() <= MaxDistinct)
    return;
  // Bounded memory: merge each pair of neighbours into the lower value.
  std::map<double, uint64_t> merged;
  for (auto it = histogram.begin(); it != histogram.end();) {
    auto lower = it++;
    uint64_t count = lower->second;
    if (it != histogram.end())
      count += (it++)->second;
    merged.emplace_hint(merged.end(), lower->first, count);
  }
  histogram.swap(merged);
}

llvm::Error VocabBuilder::add(TrainingLogReader &reader) {
  std::vector<std::map<double, uint64_t> *> targets;
  while (true) {
    auto event = reader.next();
    if (!event)
      return event.takeError();
    if (*event == TrainingLogReader::Event::End)
      return llvm::Error::success();
    const LogHeader &header = reader.header();
    if (*event == TrainingLogReader::Event::Header) {
      std::optional<Problem> problem = detectProblem(header);
      targets.clear();
      for (const TensorSpec &spec : header.Features) {
        if (excludedFromVocab(problem, spec.Name)) {
          if (llvm::StringRef(spec.Name).ends_with("_embedding"))
            EmbeddingsLeftOut.insert(spec.Name);
          targets.push_back(nullptr);
          continue;
        }
        // The name becomes <output_dir>/<name>.buckets.
        if (llvm::Error e = checkPathComponent(spec.Name, "feature name", BucketsSuffix.size()))
          return llvm::createStringError("%s: %s", reader.name().c_str(), llvm::toString(std::move(e)).c_str());
        targets.push_back(&Histograms[spec.Name]);
      }
      continue;
    }
    if (*event != TrainingLogReader::Event::Observation)
      continue;
    for (size_t f = 0; f < header.Features.size(); ++f) {
      if (!targets[f])
        continue;
      const TensorSpec &spec = header.Features[f];
      llvm::StringRef bytes = reader.feature(f);
      for (size_t i = 0, n = spec.elementCount(); i < n; ++i) {
        size_t before = targets[f]->size();
        insert(*targets[f], spec.elementAsDouble(bytes, i));
        if (targets[f]->size() < before)
          Merged[spec.Name] = true;
      }
    }
  }
}

std::vector<std::string> VocabBuilder::approximate() const {
  std::vector<std::string> names;
  for (const auto &[name, merged] : Merged)
    if (merged)
      names.push_back(name);
  return names;
}

llvm::Error VocabBuilder::write(llvm::StringRef dir, size_t buckets) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create %s: %s", dir.str().c_str(), ec.message().c_str());
  for (const auto &[name, histogram] : Histograms) // all checked before anything is written
    if (llvm::Error e = checkPathComponent(name, "feature name", BucketsSuffix.size()))
      return e;
  for (const auto &[name, histogram] : Histograms) {
    if (histogram.empty())
      continue;
    std::string text;
    for (double edge : histogramQuantiles(histogram, buckets))
      text += pythonFloatRepr(edge) + "\n";
    if (llvm::Error e = writeFileAtomically(joinPath(dir, name + BucketsSuffix.str()), text))
      return e;
  }
  return llvm::Error::success();
}

} // namespace mlgo

#include "mlgo/log/LogDump.h"

#include "mlgo/log/Vocab.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace mlgo {
namespace {

nlohmann::ordered_json tensorJson(const TensorSpec &spec, llvm::StringRef bytes) {
  auto element = [&](size_t i) -> nlohmann::ordered_json {
    if (isFloatingPoint(spec.Type))
      return spec.elementAsDouble(bytes, i);
    if (spec.Type == ElementType::UInt64)
      return static_cast<uint64_t>(spec.elementAsInt(bytes, i));
    return spec.elementAsInt(bytes, i);
  };
  if (spec.elementCount() == 1)
    return element(0);
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (size_t i = 0; i < spec.elementCount(); ++i)
    values.push_back(element(i));
  return values;
}

std::string csvValue(const TensorSpec &spec, llvm::StringRef bytes, size_t i) {
  if (!isFloatingPoint(spec.Type))
    return std::to_string(spec.elementAsInt(bytes, i));
  return pythonFloatRepr(spec.elementAsDouble(bytes, i));
}

std::string csvQuote(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

} // namespace

llvm::Error dumpLog(TrainingLogReader &reader, DumpFormat format, llvm::raw_ostream &out) {
  bool csv = format == DumpFormat::Csv;
  // An observation is printed once we know whether an outcome follows it.
  std::optional<nlohmann::ordered_json> pending;
  std::string pendingCsv;
  auto flush = [&] {
    if (pending)
      out << pending->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!pendingCsv.empty())
      out << pendingCsv << (csv && reader.header().Score ? "," : "") << "\n";
    pending.reset();
    pendingCsv.clear();
  };
  while (true) {
    auto event = reader.next();
    if (!event) {
      flush();
      return event.takeError();
    }
    const LogHeader &header = reader.header();
    switch (*event) {
    case TrainingLogReader::Event::End:
      flush();
      return llvm::Error::success();
    case TrainingLogReader::Event::Header:
      flush();
      if (csv) {
        std::string row = "context,observation";
        for (const TensorSpec &spec : header.Features)
          for (size_t i = 0, n = spec.elementCount(); i < n; ++i)
            row += "," + csvQuote(n == 1 ? spec.Name : spec.Name + "[" + std::to_string(i) + "]");
        if (header.Score)
          row += "," + csvQuote(header.Score->Name);
        out << row << "\n";
      }
      break;
    case TrainingLogReader::Event::Context:
      flush();
      break;
    case TrainingLogReader::Event::Observation:
      flush();
      if (csv) {
        pendingCsv = csvQuote(reader.context()) + "," + std::to_string(reader.observationIndex());
        for (size_t f = 0; f < header.Features.size(); ++f)
          for (size_t i = 0; i < header.Features[f].elementCount(); ++i)
            pendingCsv += "," + csvValue(header.Features[f], reader.feature(f), i);
      } else {
        nlohmann::ordered_json row;
        row["context"] = reader.context();
        row["observation"] = reader.observationIndex();
        for (size_t f = 0; f < header.Features.size(); ++f)
          row[header.Features[f].Name] = tensorJson(header.Features[f], reader.feature(f));
        pending = std::move(row);
      }
      break;
    case TrainingLogReader::Event::Outcome:
      if (pending)
        (*pending)["outcome"] = tensorJson(*header.Score, reader.outcome());
      if (!pendingCsv.empty()) {
        out << pendingCsv << "," << csvValue(*header.Score, reader.outcome(), 0) << "\n";
        pendingCsv.clear();
      }
      flush();
      break;
    }
  }
}

} // namespace mlgo

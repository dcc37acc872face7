#include "mlgo/log/LogStats.h"

#include <cstdio>

namespace mlgo {

void LogStats::add(TrainingLogReader &reader) {
  ++Files;
  std::optional<size_t> decision;
  size_t observationsBefore = Observations;
  bool contextOpen = false; // a context line not yet followed by an observation
  while (true) {
    auto event = reader.next();
    if (!event) {
      Errors.push_back(llvm::toString(event.takeError()));
      break;
    }
    if (*event != TrainingLogReader::Event::Observation && *event != TrainingLogReader::Event::Outcome && contextOpen) {
      ++EmptyContexts;
      contextOpen = false;
    }
    if (*event == TrainingLogReader::Event::End)
      break;
    const LogHeader &header = reader.header();
    if (*event == TrainingLogReader::Event::Header) {
      ++Streams;
      for (const char *name : {"inlining_decision", "index_to_evict", "priority"})
        if ((decision = header.find(name))) {
          DecisionName = name;
          break;
        }
      for (const TensorSpec &spec : header.Features)
        if (!Features.count(spec.Name))
          Order.push_back(spec.Name), Features[spec.Name];
    } else if (*event == TrainingLogReader::Event::Context) {
      ++ContextRecords;
      contextOpen = true;
    } else if (*event == TrainingLogReader::Event::Observation) {
      ++Observations;
      contextOpen = false;
      // Only contexts with observations count as contexts, as in to-tfrecord.
      Contexts.insert(reader.name() + "\n" + reader.context());
      for (size_t f = 0; f < header.Features.size(); ++f) {
        const TensorSpec &spec = header.Features[f];
        Feature &s = Features[spec.Name];
        llvm::StringRef bytes = reader.feature(f);
        for (size_t i = 0, n = spec.elementCount(); i < n; ++i) {
          double v = spec.elementAsDouble(bytes, i);
          s.Min = std::min(s.Min, v);
          s.Max = std::max(s.Max, v);
          s.Sum += v;
          ++s.Count;
        }
      }
      if (decision && !isFloatingPoint(header.Features[*decision].Type))
        ++Decisions[header.Features[*decision].elementAsInt(reader.feature(*decision), 0)];
    } else {
      ++Outcomes;
    }
  }
  LogsWithoutObservations += Observations == observationsBefore;
}

nlohmann::ordered_json LogStats::toJson() const {
  nlohmann::ordered_json out;
  out["files"] = Files;
  out["streams"] = Streams;
  out["context_records"] = ContextRecords;
  out["contexts"] = Contexts.size();
  out["empty_contexts"] = EmptyContexts;
  out["logs_without_observations"] = LogsWithoutObservations;
  out["observations"] = Observations;
  out["outcomes"] = Outcomes;
  nlohmann::ordered_json perFeature = nlohmann::ordered_json::object();
  for (const std::string &name : Order) {
    const Feature &s = Features.at(name);
    perFeature[name] =
        s.Count ? nlohmann::ordered_json{{"min", s.Min}, {"max", s.Max}, {"mean", s.Sum / s.Count}, {"values", s.Count}}
                : nlohmann::ordered_json{{"values", 0}};
  }
  out["features"] = perFeature;
  nlohmann::ordered_json histogram = nlohmann::ordered_json::object();
  for (const auto &[value, count] : Decisions)
    histogram[std::to_string(value)] = count;
  out["decision"] = {{"name", DecisionName}, {"histogram", histogram}};
  out["errors"] = Errors;
  return out;
}

std::string LogStats::toText() const {
  std::string text = "files: " + std::to_string(Files) + ", streams: " + std::to_string(Streams) +
                     ", contexts: " + std::to_string(Contexts.size()) +
                     ", observations: " + std::to_string(Observations) + ", outcomes: " + std::to_string(Outcomes) +
                     "\n";
  if (EmptyContexts || LogsWithoutObservations)
    text += "contexts without observations: " + std::to_string(EmptyContexts) +
            ", logs without observations: " + std::to_string(LogsWithoutObservations) + "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-40s %14s %14s %14s\n", "feature", "min", "max", "mean");
  text += line;
  for (const std::string &name : Order) {
    const Feature &s = Features.at(name);
    if (s.Count)
      std::snprintf(line, sizeof(line), "%-40s %14.6g %14.6g %14.6g\n", name.c_str(), s.Min, s.Max, s.Sum / s.Count);
    else
      std::snprintf(line, sizeof(line), "%-40s %14s %14s %14s\n", name.c_str(), "-", "-", "-");
    text += line;
  }
  if (!DecisionName.empty()) {
    text += "decision " + DecisionName + ":";
    for (const auto &[value, count] : Decisions)
      text += " " + std::to_string(value) + "=" + std::to_string(count);
    text += "\n";
  }
  return text;
}

} // namespace mlgo

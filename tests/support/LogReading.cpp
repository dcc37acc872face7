#include "LogReading.h"

#include "mlgo/log/TrainingLog.h"

#include <gtest/gtest.h>

namespace mlgo::test {

std::vector<LoggedObservation> readObservations(const std::string &path) {
  std::vector<LoggedObservation> out;
  auto reader = TrainingLogReader::open(path);
  EXPECT_TRUE(static_cast<bool>(reader)) << path;
  if (!reader) {
    llvm::consumeError(reader.takeError());
    return out;
  }
  while (true) {
    auto event = (*reader)->next();
    if (!event) {
      ADD_FAILURE() << llvm::toString(event.takeError());
      break;
    }
    if (*event == TrainingLogReader::Event::End)
      break;
    const LogHeader &h = (*reader)->header();
    if (*event == TrainingLogReader::Event::Observation) {
      LoggedObservation o;
      o.Context = (*reader)->context();
      o.Index = (*reader)->observationIndex();
      for (size_t f = 0; f < h.Features.size(); ++f) {
        std::vector<double> &values = o.Features[h.Features[f].Name];
        for (size_t i = 0; i < h.Features[f].elementCount(); ++i)
          values.push_back(h.Features[f].elementAsDouble((*reader)->feature(f), i));
      }
      out.push_back(std::move(o));
    } else if (*event == TrainingLogReader::Event::Outcome) {
      out.back().Outcome = h.Score->elementAsDouble((*reader)->outcome(), 0);
    }
  }
  return out;
}

std::string logWithoutRewards(const std::string &path) {
  std::string out;
  auto reader = TrainingLogReader::open(path);
  EXPECT_TRUE(static_cast<bool>(reader)) << path;
  if (!reader) {
    llvm::consumeError(reader.takeError());
    return out;
  }
  while (true) {
    auto event = (*reader)->next();
    if (!event) {
      ADD_FAILURE() << path << ": " << llvm::toString(event.takeError());
      break;
    }
    if (*event == TrainingLogReader::Event::End)
      break;
    if (*event == TrainingLogReader::Event::Header)
      out += "header " + (*reader)->header().toLine() + "\n";
    else if (*event == TrainingLogReader::Event::Context)
      out += "context " + (*reader)->context() + "\n";
    else if (*event == TrainingLogReader::Event::Observation)
      out +=
          "observation " + std::to_string((*reader)->observationIndex()) + " " + (*reader)->observation().str() + "\n";
    else
      out += "outcome\n";
  }
  return out;
}

} // namespace mlgo::test

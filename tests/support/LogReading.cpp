#include "LogReading.h"

#include "mlgo/log/TrainingLog.h"

#include <gtest/gtest.h>

#include <functional>

namespace mlgo::test {

// Every event of the log at `path` through the tools' reader; a read error
// fails the calling test.
static void visitEvents(const std::string &path,
                        const std::function<void(TrainingLogReader &, TrainingLogReader::Event)> &visit) {
  llvm::Error e = visitLog(path, [&](TrainingLogReader &reader, TrainingLogReader::Event event) {
    visit(reader, event);
    return llvm::Error::success();
  });
  if (e)
    ADD_FAILURE() << path << ": " << llvm::toString(std::move(e));
}

std::vector<LoggedObservation> readObservations(const std::string &path) {
  std::vector<LoggedObservation> out;
  visitEvents(path, [&](TrainingLogReader &reader, TrainingLogReader::Event event) {
    const LogHeader &h = reader.header();
    if (event == TrainingLogReader::Event::Observation) {
      LoggedObservation o;
      o.Context = reader.context();
      o.Index = reader.observationIndex();
      for (size_t f = 0; f < h.Features.size(); ++f) {
        std::vector<double> &values = o.Features[h.Features[f].Name];
        for (size_t i = 0; i < h.Features[f].elementCount(); ++i)
          values.push_back(h.Features[f].elementAsDouble(reader.feature(f), i));
      }
      out.push_back(std::move(o));
    } else if (event == TrainingLogReader::Event::Outcome) {
      out.back().Outcome = h.Score->elementAsDouble(reader.outcome(), 0);
    }
  });
  return out;
}

std::string logWithoutRewards(const std::string &path) {
  std::string out;
  visitEvents(path, [&](TrainingLogReader &reader, TrainingLogReader::Event event) {
    if (event == TrainingLogReader::Event::Header)
      out += "header " + reader.header().toLine() + "\n";
    else if (event == TrainingLogReader::Event::Context)
      out += "context " + reader.context() + "\n";
    else if (event == TrainingLogReader::Event::Observation)
      out += "observation " + std::to_string(reader.observationIndex()) + " " + reader.observation().str() + "\n";
    else
      out += "outcome\n";
  });
  return out;
}

} // namespace mlgo::test

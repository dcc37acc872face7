#include "mlgo/extract/Journal.h"

namespace mlgo {

nlohmann::ordered_json journalRecord(const ModuleOutcome &outcome) {
  nlohmann::ordered_json line;
  line["input"] = outcome.Input;
  if (!outcome.Member.empty())
    line["member"] = outcome.Member;
  line["name"] = outcome.Name;
  line["status"] = statusName(outcome.Status);
  line["reason"] = outcome.Reason;
  line["size"] = outcome.InputSize;
  line["mtime_ns"] = outcome.InputMtimeNs;
  return line;
}

std::vector<ModuleOutcome> outcomesFromJournal(const std::vector<nlohmann::ordered_json> &records) {
  std::vector<ModuleOutcome> outcomes;
  for (const nlohmann::ordered_json &json : records) {
    try {
      ModuleOutcome record;
      record.Input = json.at("input").get<std::string>();
      record.Member = json.value("member", "");
      record.Name = json.at("name").get<std::string>();
      auto status = parseStatus(json.at("status").get<std::string>());
      if (!status)
        continue;
      record.Status = *status;
      record.Reason = json.at("reason").get<std::string>();
      // Numbers out of range would convert to garbage (or undefined behaviour
      // for floats): such a line is not one we wrote.
      const auto &size = json.at("size"), &mtime = json.at("mtime_ns");
      if (!size.is_number_unsigned() || !mtime.is_number_integer() ||
          (mtime.is_number_unsigned() && mtime.get<uint64_t>() > uint64_t(INT64_MAX)))
        continue;
      record.InputSize = size.get<uint64_t>();
      record.InputMtimeNs = mtime.get<int64_t>();
      outcomes.push_back(std::move(record));
    } catch (const nlohmann::json::exception &) {
      continue; // not one of ours: redone
    }
  }
  return outcomes;
}

} // namespace mlgo

#include "mlgo/extract/ExtractReport.h"
#include "mlgo/support/Version.h"

#include <map>

namespace mlgo {

ExtractSummary summarize(const std::vector<ModuleOutcome> &outcomes, bool interrupted) {
  ExtractSummary s;
  s.Interrupted = interrupted;
  for (const ModuleOutcome &o : outcomes) {
    switch (o.Status) {
    case ModuleStatus::Ok:
      ++s.Ok;
      s.Resumed += o.Resumed;
      break;
    case ModuleStatus::Failed:
      ++s.Failed;
      break;
    case ModuleStatus::Filtered:
      ++s.Filtered;
      break;
    case ModuleStatus::Duplicate:
      ++s.Duplicate;
      break;
    case ModuleStatus::Skipped:
      ++s.Skipped;
      break;
    }
  }
  s.Candidates = s.Ok + s.Failed + s.Filtered;
  return s;
}

nlohmann::ordered_json buildExtractReport(const std::vector<ModuleOutcome> &outcomes, const ExtractSummary &summary,
                                          const nlohmann::ordered_json &context) {
  nlohmann::ordered_json report = context.is_object() ? context : nlohmann::ordered_json::object();
  report["format_version"] = 1;
  report["mlgo_version"] = versionString();
  report["interrupted"] = summary.Interrupted;
  report["candidates"] = summary.Candidates;
  report["totals"] = {{"ok", summary.Ok},
                      {"failed", summary.Failed},
                      {"filtered", summary.Filtered},
                      {"duplicate", summary.Duplicate},
                      {"skipped", summary.Skipped},
                      {"resumed", summary.Resumed}};
  std::map<std::string, size_t> reasons;
  nlohmann::ordered_json problems = nlohmann::ordered_json::array();
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  for (const ModuleOutcome &o : outcomes) {
    for (const std::string &w : o.Warnings) {
      nlohmann::ordered_json entry{{"input", o.Input}};
      if (!o.Member.empty())
        entry["member"] = o.Member;
      entry["name"] = o.Name;
      entry["warning"] = w;
      warnings.push_back(std::move(entry));
    }
    if (o.Status == ModuleStatus::Ok)
      continue;
    ++reasons[o.Reason];
    nlohmann::ordered_json entry{{"input", o.Input}};
    if (!o.Member.empty())
      entry["member"] = o.Member;
    entry["origin"] = o.Origin;
    entry["name"] = o.Name;
    entry["status"] = statusName(o.Status);
    entry["reason"] = o.Reason;
    entry["detail"] = o.Detail;
    problems.push_back(std::move(entry));
  }
  report["reasons"] = reasons;
  report["problems"] = std::move(problems);
  report["warnings"] = std::move(warnings);
  return report;
}

std::string describeProblems(const std::vector<ModuleOutcome> &outcomes) {
  std::map<std::string, std::map<std::string, size_t>> byStatus;
  for (const ModuleOutcome &o : outcomes)
    if (o.Status != ModuleStatus::Ok)
      ++byStatus[statusName(o.Status)][o.Reason];
  std::string text;
  for (const auto &[status, reasons] : byStatus) {
    size_t total = 0;
    std::string inner;
    for (const auto &[reason, count] : reasons) {
      total += count;
      inner += (inner.empty() ? "" : ", ") + reason + " " + std::to_string(count);
    }
    text += (text.empty() ? "" : "; ") + status + " " + std::to_string(total) + " (" + inner + ")";
  }
  return text;
}

} // namespace mlgo

#include "mlgo/compare/ComparisonReport.h"

#include "mlgo/support/Version.h"

#include <cstdio>

namespace mlgo {
namespace {

using Json = nlohmann::ordered_json;

Json optionalNumber(const std::optional<double> &value) { return value ? Json(*value) : Json(); }

Json moduleRow(const ModuleSizeChange &m) {
  return {{"module", m.Module}, {"a_size", m.ASize}, {"b_size", m.BSize}, {"change", optionalNumber(m.Change)}};
}

Json side(const ComparedHarvest &h) {
  return {{"dir", h.Dir},
          {"policy", h.Policy},
          {"modules", h.Modules},
          {"has_sites", h.HasSites},
          {"sites_files_read", h.SitesFilesRead}};
}

// A name from the data, safe to print on a terminal.
std::string printable(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string decisionWord(bool inline_) { return inline_ ? "inline" : "no inline"; }

} // namespace

std::string formatChange(const std::optional<double> &change) {
  if (!change)
    return "+inf%";
  char buf[64];
  double percent = *change * 100;
  std::snprintf(buf, sizeof buf, "%+.2f%%", percent);
  std::string text = buf;
  return text == "+0.00%" || text == "-0.00%" ? "0.00%" : text;
}

Json comparisonJson(const HarvestComparison &c, size_t top) {
  Json j;
  j["mlgo_version"] = versionString();
  j["a"] = side(c.A);
  j["b"] = side(c.B);
  j["total"] = {
      {"a_size", c.ASize}, {"b_size", c.BSize}, {"change", optionalNumber(c.Change)}, {"modules", c.Modules.size()}};
  auto linked = [](const std::optional<LinkedBinary> &l) -> Json {
    if (!l)
      return nullptr;
    return {{"status", l->Status},
            {"reason", l->Reason},
            {"text", l->Text ? Json(*l->Text) : Json()},
            {"allocated", l->Allocated ? Json(*l->Allocated) : Json()}};
  };
  j["linked"] = {{"a", linked(c.A.Linked)},
                 {"b", linked(c.B.Linked)},
                 {"text_change", optionalNumber(c.LinkedTextChange)},
                 {"allocated_change", optionalNumber(c.LinkedAllocatedChange)},
                 {"message", c.LinkMessage}};
  j["geomean"] = {{"ratio", optionalNumber(c.GeomeanRatio)},
                  {"change", c.GeomeanRatio ? Json(*c.GeomeanRatio - 1) : Json()},
                  {"modules", c.GeomeanModules}};
  j["counts"] = {{"compared", c.Modules.size()},
                 {"grown", c.Grown},
                 {"shrunk", c.Shrunk},
                 {"unchanged", c.Unchanged},
                 {"only_in_a", c.OnlyInA.size()},
                 {"only_in_b", c.OnlyInB.size()},
                 {"failed", c.Failed.size()}};
  j["modules"] = Json::array();
  for (const ModuleSizeChange &m : c.Modules)
    j["modules"].push_back(moduleRow(m));
  j["top_grown"] = Json::array();
  for (const ModuleSizeChange &m : c.topGrown(top))
    j["top_grown"].push_back(moduleRow(m));
  j["only_in_a"] = c.OnlyInA;
  j["only_in_b"] = c.OnlyInB;
  j["failed"] = Json::array();
  for (const UncomparedModule &f : c.Failed)
    j["failed"].push_back({{"module", f.Module}, {"a", f.A}, {"b", f.B}});
  j["sites"] = {{"compared", c.SitesCompared},     {"message", c.SitesMessage},   {"modules", c.SitesModules},
                {"matched", c.SitesMatched},       {"only_in_a", c.SitesOnlyInA}, {"only_in_b", c.SitesOnlyInB},
                {"flipped", c.FlippedSites.size()}};
  j["sites_problems"] = Json::array();
  for (const auto *h : {&c.A, &c.B})
    for (const auto &[module, error] : h->SitesProblems)
      j["sites_problems"].push_back({{"side", h == &c.A ? "a" : "b"}, {"module", module}, {"error", error}});
  j["flipped_sites"] = Json::array();
  for (const FlippedSite &f : c.FlippedSites)
    j["flipped_sites"].push_back({{"module", f.Module},
                                  {"caller", f.A.Caller},
                                  {"callee", f.A.Callee},
                                  {"site", f.A.Site},
                                  {"loc", f.A.Location ? Json(*f.A.Location) : Json()},
                                  {"b_loc", f.BLocation ? Json(*f.BLocation) : Json()},
                                  {"default", f.A.Default},
                                  {"a_decision", f.A.Decision},
                                  {"b_decision", f.BDecision},
                                  {"module_a_size", f.Sizes.ASize},
                                  {"module_b_size", f.Sizes.BSize},
                                  {"module_change", optionalNumber(f.Sizes.Change)}});
  return j;
}

std::string comparisonText(const HarvestComparison &c, size_t top) {
  std::string out;
  auto line = [&](const std::string &text) { out += text + "\n"; };
  for (const auto *h : {&c.A, &c.B})
    line(std::string(h == &c.A ? "A: " : "B: ") + printable(h->Dir) + " (policy " +
         (h->Policy.empty() ? "unknown" : printable(h->Policy)) + ", " + std::to_string(h->Modules) + " modules)");
  line("native size over the " + std::to_string(c.Modules.size()) + " modules ok in both: A " +
       std::to_string(c.ASize) + " bytes, B " + std::to_string(c.BSize) + " bytes, change " + formatChange(c.Change));
  // What ships, beside the per-object total.
  if (c.LinkedTextChange || c.LinkedAllocatedChange)
    line("linked binary: text A " + std::to_string(*c.A.Linked->Text) + " bytes, B " +
         std::to_string(*c.B.Linked->Text) + " bytes, change " + formatChange(c.LinkedTextChange) + "; allocated A " +
         std::to_string(*c.A.Linked->Allocated) + ", B " + std::to_string(*c.B.Linked->Allocated) + ", change " +
         formatChange(c.LinkedAllocatedChange));
  else
    line("linked binary: " + printable(c.LinkMessage));
  if (c.GeomeanRatio) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f", *c.GeomeanRatio);
    line("geometric mean of B/A per module: " + std::string(buf) + " (" + formatChange(*c.GeomeanRatio - 1) +
         ") over " + std::to_string(c.GeomeanModules) + " modules");
  }
  line("grown " + std::to_string(c.Grown) + ", shrunk " + std::to_string(c.Shrunk) + ", unchanged " +
       std::to_string(c.Unchanged) + "; only in A " + std::to_string(c.OnlyInA.size()) + ", only in B " +
       std::to_string(c.OnlyInB.size()) + ", failed in either " + std::to_string(c.Failed.size()));
  if (!c.Failed.empty()) {
    line("failed in either (not compared):");
    for (const UncomparedModule &f : c.Failed)
      line("  " + printable(f.Module) + ": A " + printable(f.A) + ", B " + printable(f.B));
  }
  for (const auto *only : {&c.OnlyInA, &c.OnlyInB})
    if (!only->empty()) {
      line(std::string(only == &c.OnlyInA ? "only in A:" : "only in B:"));
      for (const std::string &m : *only)
        line("  " + printable(m));
    }
  std::vector<ModuleSizeChange> grown = c.topGrown(top);
  if (!grown.empty()) {
    line("modules that grew most (top " + std::to_string(grown.size()) + "):");
    for (const ModuleSizeChange &m : grown)
      line("  " + formatChange(m.Change) + "  " + std::to_string(m.ASize) + " -> " + std::to_string(m.BSize) + "  " +
           printable(m.Module));
  }
  line("decision sites: " + printable(c.SitesMessage));
  for (const auto *h : {&c.A, &c.B})
    for (const auto &[module, error] : h->SitesProblems)
      line(std::string("  ") + (h == &c.A ? "A" : "B") + ", " + printable(module) + ": " + printable(error));
  if (c.SitesCompared) {
    line(std::to_string(c.FlippedSites.size()) + " flipped of " + std::to_string(c.SitesMatched) + " sites in both (" +
         std::to_string(c.SitesOnlyInA) + " only in A, " + std::to_string(c.SitesOnlyInB) + " only in B)" +
         (c.FlippedSites.size() > top ? "; the first " + std::to_string(top) + ":" : ""));
    for (size_t i = 0; i < c.FlippedSites.size() && i < top; ++i) {
      const FlippedSite &f = c.FlippedSites[i];
      line("  " + formatChange(f.Sizes.Change) + "  " + printable(f.Module) + ": " + printable(f.A.Caller) + " -> " +
           printable(f.A.Callee) + " #" + std::to_string(f.A.Site) +
           (f.A.Location ? " at " + printable(*f.A.Location) : "") + ": A " + decisionWord(f.A.Decision) + ", B " +
           decisionWord(f.BDecision) + " (default " + decisionWord(f.A.Default) + ")");
    }
  }
  return out;
}

} // namespace mlgo

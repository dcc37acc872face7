#include "mlgo/compare/HtmlReport.h"

#include "mlgo/compare/ComparisonReport.h"
#include "mlgo/support/Version.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace mlgo {
namespace {

// At most `limit` bytes of `text`, cut at a character boundary, with an
// ellipsis when cut: long mangled names must not push the charts apart.
std::string shortened(llvm::StringRef text, size_t limit) {
  if (text.size() <= limit)
    return text.str();
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return text.take_front(cut).str() + "\u2026";
}

std::string number(double value, const char *format = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

struct Bin {
  const char *Label;
  size_t Count = 0;
  const char *Colour;
};

// Per-module changes in percent: shrinking bins, unchanged, growing bins.
std::array<Bin, 11> histogram(const HarvestComparison &c) {
  std::array<Bin, 11> bins = {{{"< -20%", 0, "#2e7d32"},
                               {"-20..-10%", 0, "#388e3c"},
                               {"-10..-5%", 0, "#43a047"},
                               {"-5..-2%", 0, "#66bb6a"},
                               {"-2..0%", 0, "#a5d6a7"},
                               {"0", 0, "#9e9e9e"},
                               {"0..2%", 0, "#ef9a9a"},
                               {"2..5%", 0, "#e57373"},
                               {"5..10%", 0, "#e53935"},
                               {"10..20%", 0, "#c62828"},
                               {"> 20%", 0, "#8e0000"}}};
  for (const ModuleSizeChange &m : c.Modules) {
    size_t bin;
    if (!m.Change)
      bin = 10;
    else {
      double p = *m.Change * 100;
      if (m.BSize == m.ASize)
        bin = 5;
      else if (m.BSize < m.ASize)
        bin = p < -20 ? 0 : p < -10 ? 1 : p < -5 ? 2 : p < -2 ? 3 : 4;
      else
        bin = p <= 2 ? 6 : p <= 5 ? 7 : p <= 10 ? 8 : p <= 20 ? 9 : 10;
    }
    ++bins[bin].Count;
  }
  return bins;
}

std::string histogramSvg(const HarvestComparison &c) {
  auto bins = histogram(c);
  size_t most = 1;
  for (const Bin &b : bins)
    most = std::max(most, b.Count);
  const int width = 1000, height = 280, top = 30, bottom = 40, barWidth = 70, gap = (width - 11 * barWidth) / 12;
  std::string svg = "<svg width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"histogram of per-module size changes\">\n";
  int base = height - bottom;
  svg += "<line x1=\"0\" y1=\"" + std::to_string(base) + "\" x2=\"" + std::to_string(width) + "\" y2=\"" +
         std::to_string(base) + "\" stroke=\"#555\"/>\n";
  for (size_t i = 0; i < bins.size(); ++i) {
    int x = gap + static_cast<int>(i) * (barWidth + gap);
    int h = static_cast<int>(static_cast<double>(bins[i].Count) / static_cast<double>(most) * (base - top));
    svg += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(base - h) + "\" width=\"" +
           std::to_string(barWidth) + "\" height=\"" + std::to_string(h) + "\" fill=\"" + bins[i].Colour +
           "\"><title>" + htmlEscape(bins[i].Label) + ": " + std::to_string(bins[i].Count) +
           " modules</title></rect>\n";
    svg += "<text x=\"" + std::to_string(x + barWidth / 2) + "\" y=\"" + std::to_string(base - h - 6) +
           "\" text-anchor=\"middle\">" + std::to_string(bins[i].Count) + "</text>\n";
    svg += "<text x=\"" + std::to_string(x + barWidth / 2) + "\" y=\"" + std::to_string(base + 20) +
           "\" text-anchor=\"middle\" font-size=\"12\">" + htmlEscape(bins[i].Label) + "</text>\n";
  }
  return svg + "</svg>\n";
}

std::string regressionsSvg(const std::vector<ModuleSizeChange> &grown) {
  const int width = 1000, row = 24, labelWidth = 420, barSpace = 460;
  int height = std::max<int>(1, static_cast<int>(grown.size())) * row + 10;
  std::string svg = "<svg width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"modules that grew most\">\n";
  if (grown.empty())
    return svg + "<text x=\"10\" y=\"20\">no module grew</text>\n</svg>\n";
  double most = 0;
  for (const ModuleSizeChange &m : grown)
    most = std::max(most, m.Change ? *m.Change : 0.0);
  for (size_t i = 0; i < grown.size(); ++i) {
    const ModuleSizeChange &m = grown[i];
    int y = static_cast<int>(i) * row + 5;
    double fraction = !m.Change ? 1.0 : most > 0 ? *m.Change / most : 0;
    int length = std::max(2, static_cast<int>(fraction * barSpace));
    std::string name = htmlEscape(m.Module);
    svg +=
        "<g><title>" + name + ": " + std::to_string(m.ASize) + " -&gt; " + std::to_string(m.BSize) + " bytes</title>\n";
    svg += "<text x=\"" + std::to_string(labelWidth - 8) + "\" y=\"" + std::to_string(y + 16) +
           "\" text-anchor=\"end\" font-size=\"13\">" + htmlEscape(shortened(m.Module, 56)) + "</text>\n";
    svg += "<rect x=\"" + std::to_string(labelWidth) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" +
           std::to_string(length) + "\" height=\"" + std::to_string(row - 8) + "\" fill=\"#c62828\"/>\n";
    svg += "<text x=\"" + std::to_string(labelWidth + length + 6) + "\" y=\"" + std::to_string(y + 16) +
           "\" font-size=\"13\">" + htmlEscape(formatChange(m.Change)) + "</text>\n</g>\n";
  }
  return svg + "</svg>\n";
}

std::string cell(const std::string &text, const char *cls = nullptr) {
  return std::string("<td") + (cls ? std::string(" class=\"") + cls + "\"" : "") + ">" + htmlEscape(text) + "</td>";
}

std::string decisionText(bool inline_) { return inline_ ? "inline" : "no inline"; }

} // namespace

std::string htmlEscape(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string htmlReport(const HarvestComparison &c, size_t top) {
  std::string page;
  auto add = [&](const std::string &text) { page += text; };
  add("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      // Nothing on this page may be fetched or run: it is data from others.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<title>compare-harvests: " +
      htmlEscape(c.B.Policy.empty() ? c.B.Dir : c.B.Policy) + " against " +
      htmlEscape(c.A.Policy.empty() ? c.A.Dir : c.A.Policy) + "</title>\n");
  add("<style>\nbody{font-family:sans-serif;margin:24px;color:#222;background:#fff}\n"
      "table{border-collapse:collapse;margin:8px 0}\ntd,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\n"
      "td.n{text-align:right;font-variant-numeric:tabular-nums}\nth{background:#eee}\n"
      ".grew{color:#b71c1c}\n.shrank{color:#1b5e20}\nsvg text{font-family:sans-serif}\n"
      "code{word-break:break-all}\n</style>\n</head>\n<body>\n");
  add("<h1>Native size: B against A</h1>\n<table>\n");
  add("<tr><th></th><th>directory</th><th>policy</th><th>modules</th><th>native size (modules ok in both)</th></tr>\n");
  add("<tr><th>A</th>" + cell(c.A.Dir) + cell(c.A.Policy) + cell(std::to_string(c.A.Modules), "n") +
      cell(std::to_string(c.ASize), "n") + "</tr>\n");
  add("<tr><th>B</th>" + cell(c.B.Dir) + cell(c.B.Policy) + cell(std::to_string(c.B.Modules), "n") +
      cell(std::to_string(c.BSize), "n") + "</tr>\n</table>\n");
  add("<p id=\"total\">Change of the total: <strong class=\"" +
      std::string(c.BSize > c.ASize   ? "grew"
                  : c.BSize < c.ASize ? "shrank"
                                      : "") +
      "\">" + htmlEscape(formatChange(c.Change)) + "</strong> over " + std::to_string(c.Modules.size()) +
      " modules ok in both");
  if (c.GeomeanRatio)
    add("; geometric mean of the per-module ratios " + number(*c.GeomeanRatio, "%.4f") + " (" +
        htmlEscape(formatChange(*c.GeomeanRatio - 1)) + ", " + std::to_string(c.GeomeanModules) + " modules)");
  add(".<br>Grown " + std::to_string(c.Grown) + ", shrunk " + std::to_string(c.Shrunk) + ", unchanged " +
      std::to_string(c.Unchanged) + "; only in A " + std::to_string(c.OnlyInA.size()) + ", only in B " +
      std::to_string(c.OnlyInB.size()) + ", failed in either " + std::to_string(c.Failed.size()) + ".</p>\n");

  // What ships, beside the per-object total.
  if (c.LinkedTextChange || c.LinkedAllocatedChange)
    add("<p id=\"linked\">Linked binary: text A " + std::to_string(*c.A.Linked->Text) + ", B " +
        std::to_string(*c.B.Linked->Text) + " bytes, change <strong class=\"" +
        std::string(*c.B.Linked->Text > *c.A.Linked->Text   ? "grew"
                    : *c.B.Linked->Text < *c.A.Linked->Text ? "shrank"
                                                            : "") +
        "\">" + htmlEscape(formatChange(c.LinkedTextChange)) + "</strong>; allocated A " +
        std::to_string(*c.A.Linked->Allocated) + ", B " + std::to_string(*c.B.Linked->Allocated) + ", change " +
        htmlEscape(formatChange(c.LinkedAllocatedChange)) + ".</p>\n");
  else
    add("<p id=\"linked\">Linked binary: " + htmlEscape(c.LinkMessage) + ".</p>\n");

  add("<h2>Size change per module</h2>\n" + histogramSvg(c));
  std::vector<ModuleSizeChange> grown = c.topGrown(top);
  add("<h2>Modules that grew most (top " + std::to_string(grown.size()) + ")</h2>\n" + regressionsSvg(grown));

  add("<h2>Flipped decision sites</h2>\n<p id=\"sites\">" + htmlEscape(c.SitesMessage) + "</p>\n");
  if (c.A.SitesProblems.size() + c.B.SitesProblems.size() > 0) {
    add("<ul>\n");
    for (const auto *h : {&c.A, &c.B})
      for (const auto &[module, error] : h->SitesProblems)
        add(std::string("<li>") + (h == &c.A ? "A" : "B") + ", <code>" + htmlEscape(module) +
            "</code>: " + htmlEscape(error) + "</li>\n");
    add("</ul>\n");
  }
  if (c.SitesCompared) {
    add("<p>" + std::to_string(c.FlippedSites.size()) + " flipped of " + std::to_string(c.SitesMatched) +
        " sites in both harvests (" + std::to_string(c.SitesOnlyInA) + " only in A, " + std::to_string(c.SitesOnlyInB) +
        " only in B), by the module's growth.</p>\n");
    add("<table id=\"flipped\">\n<tr><th>module</th><th>module change</th><th>caller</th><th>callee</th>"
        "<th>site</th><th>location</th><th>default</th><th>A</th><th>B</th></tr>\n");
    for (size_t i = 0; i < c.FlippedSites.size() && i < HtmlTableRows; ++i) {
      const FlippedSite &f = c.FlippedSites[i];
      add("<tr>" + cell(f.Module) + cell(formatChange(f.Sizes.Change), "n") + cell(f.A.Caller) + cell(f.A.Callee) +
          cell(std::to_string(f.A.Site), "n") + cell(f.A.Location.value_or("")) + cell(decisionText(f.A.Default)) +
          cell(decisionText(f.A.Decision)) + cell(decisionText(f.BDecision)) + "</tr>\n");
    }
    add("</table>\n");
    if (c.FlippedSites.size() > HtmlTableRows)
      add("<p>" + std::to_string(c.FlippedSites.size() - HtmlTableRows) +
          " more flipped sites are in the JSON report (--json).</p>\n");
  }

  add("<h2>Not compared</h2>\n");
  if (c.Failed.empty() && c.OnlyInA.empty() && c.OnlyInB.empty())
    add("<p>Every module is ok in both harvests.</p>\n");
  if (!c.Failed.empty()) {
    add("<table id=\"failed\">\n<tr><th>module</th><th>A</th><th>B</th></tr>\n");
    for (const UncomparedModule &f : c.Failed)
      add("<tr>" + cell(f.Module) + cell(f.A) + cell(f.B) + "</tr>\n");
    add("</table>\n");
  }
  for (const auto *only : {&c.OnlyInA, &c.OnlyInB})
    if (!only->empty()) {
      add(std::string("<p>Only in ") + (only == &c.OnlyInA ? "A" : "B") + ":</p>\n<ul>\n");
      for (const std::string &m : *only)
        add("<li><code>" + htmlEscape(m) + "</code></li>\n");
      add("</ul>\n");
    }

  add("<h2>Every module compared</h2>\n<details>\n<summary>" + std::to_string(c.Modules.size()) +
      " modules</summary>\n<table id=\"modules\">\n<tr><th>module</th><th>A</th><th>B</th><th>change</th></tr>\n");
  for (size_t i = 0; i < c.Modules.size() && i < HtmlTableRows; ++i) {
    const ModuleSizeChange &m = c.Modules[i];
    add("<tr>" + cell(m.Module) + cell(std::to_string(m.ASize), "n") + cell(std::to_string(m.BSize), "n") +
        cell(formatChange(m.Change), "n") + "</tr>\n");
  }
  add("</table>\n");
  if (c.Modules.size() > HtmlTableRows)
    add("<p>" + std::to_string(c.Modules.size() - HtmlTableRows) + " more modules are in the JSON report.</p>\n");
  add("</details>\n<p><small>" + htmlEscape(versionString()) + "</small></p>\n</body>\n</html>\n");
  return page;
}

} // namespace mlgo

// compare-harvests' report for people: one self-contained HTML page (no
// script, no external resource; a Content-Security-Policy that forbids
// loading any) with the totals, a histogram of per-module size changes and
// the top regressions as inline SVG, and the flipped decision sites as a
// table. Every name on it comes from someone else's data and is escaped.
#pragma once

#include "mlgo/compare/HarvestComparison.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlgo {

/// `text` as HTML text or attribute value: & < > " ' escaped.
std::string htmlEscape(llvm::StringRef text);

/// How many rows the page's tables show at most (the JSON report has all).
inline constexpr size_t HtmlTableRows = 2000;

/// The page; `top` is how many regressions the bar chart shows.
std::string htmlReport(const HarvestComparison &comparison, size_t top);

} // namespace mlgo

// --cmd_filter: keep a module only if some argument of its embedded command
// line matches a regular expression.
#pragma once

#include "mlgo/corpus/CommandLineSection.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <regex>
#include <string>
#include <vector>

namespace mlgo {

class CmdFilter {
public:
  /// Compiles an ECMAScript pattern. Python-only syntax that would silently
  /// mean something else here (named groups, lookbehind, inline flags, \A,
  /// \Z) is rejected, as is any invalid pattern.
  static llvm::Expected<CmdFilter> compile(const std::string &pattern);

  /// True when some argument contains a match (unanchored search).
  bool matches(llvm::StringRef commandLineSection) const;
  /// True when the pattern matches the empty string.
  bool matchesEmpty() const;
  const std::string &pattern() const { return Pattern; }

private:
  CmdFilter(std::string pattern, std::regex regex) : Pattern(std::move(pattern)), Regex(std::move(regex)) {}
  std::string Pattern;
  std::regex Regex;
};

} // namespace mlgo

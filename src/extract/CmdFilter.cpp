#include "mlgo/extract/CmdFilter.h"

namespace mlgo {

llvm::Expected<CmdFilter> CmdFilter::compile(const std::string &pattern) {
  static const char *const PythonOnly[] = {"(?P", "(?<", "(?#", "(?i", "(?m", "(?s",
                                           "(?x", "(?a", "(?u", "(?L", "\\A", "\\Z"};
  for (const char *syntax : PythonOnly)
    if (pattern.find(syntax) != std::string::npos)
      return llvm::createStringError("invalid --cmd_filter '%s': '%s' is Python-only regex syntax; patterns use "
                                     "the ECMAScript grammar",
                                     pattern.c_str(), syntax);
  try {
    return CmdFilter(pattern, std::regex(pattern, std::regex::ECMAScript | std::regex::optimize));
  } catch (const std::regex_error &e) {
    return llvm::createStringError("invalid --cmd_filter '%s': %s", pattern.c_str(), e.what());
  }
}

bool CmdFilter::matches(llvm::StringRef section) const {
  for (llvm::StringRef field : splitCommandLineSection(section))
    if (std::regex_search(field.begin(), field.end(), Regex))
      return true;
  return false;
}

bool CmdFilter::matchesEmpty() const {
  static const std::string Empty;
  return std::regex_search(Empty, Regex);
}

} // namespace mlgo

#include "mlgo/support/ShellWords.h"

namespace mlgo {

llvm::Expected<std::vector<std::string>> splitShellWords(llvm::StringRef command) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  auto isBlank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (isBlank(c)) {
      if (inWord)
        words.push_back(std::move(word));
      word.clear();
      inWord = false;
      continue;
    }
    inWord = true;
    if (c == '\'') {
      size_t close = command.find('\'', i + 1);
      if (close == llvm::StringRef::npos)
        return llvm::createStringError("unterminated single quote at offset %zu", i);
      word += command.slice(i + 1, close).str();
      i = close;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < command.size() && command[j] != '"'; ++j) {
        if (command[j] == '\\' && j + 1 < command.size() && llvm::StringRef("\"\\$`\n").contains(command[j + 1])) {
          if (command[j + 1] != '\n')
            word += command[j + 1];
          ++j;
          continue;
        }
        word += command[j];
      }
      if (j >= command.size())
        return llvm::createStringError("unterminated double quote at offset %zu", i);
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= command.size())
        return llvm::createStringError("trailing backslash");
      if (command[i + 1] != '\n')
        word += command[i + 1];
      else if (word.empty())
        inWord = false;
      ++i;
    } else {
      word += c;
    }
  }
  if (inWord)
    words.push_back(std::move(word));
  return words;
}

} // namespace mlgo

#include "mlgo/harvest/IR2VecVocabulary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

namespace mlgo {

llvm::Expected<IR2VecVocabularyInfo> checkIR2VecVocabulary(llvm::StringRef path) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError("%s: not an IR2Vec vocabulary: %s", path.str().c_str(), why.c_str());
  };
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return llvm::createStringError(ec, "%s: cannot read the IR2Vec vocabulary: %s", path.str().c_str(),
                                   ec.message().c_str());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return fail("not a regular file");
  if (status.getSize() > MaxIR2VecVocabularyBytes)
    return fail("larger than " + std::to_string(MaxIR2VecVocabularyBytes >> 20) + " MiB");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read the IR2Vec vocabulary: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception &e) {
    return fail(std::string("bad JSON: ") + e.what());
  }
  if (!json.is_object())
    return fail("the top level is not an object");
  IR2VecVocabularyInfo info;
  for (const char *section : {"Opcodes", "Types", "Arguments"})
    if (!json.contains(section))
      return fail(std::string("no \"") + section + "\" section");
  for (const auto &[section, entries] : json.items()) {
    // IR2Vec refuses an empty Opcodes, Types or Arguments section, and takes
    // an empty Predicates one (LLVM 22).
    bool required = section == "Opcodes" || section == "Types" || section == "Arguments";
    if (!entries.is_object() || (required && entries.empty()))
      return fail("section \"" + section + "\" is not a" + (required ? " non-empty" : "n") +
                  " object of entity embeddings");
    for (const auto &[entity, vector] : entries.items()) {
      if (!vector.is_array() || vector.empty())
        return fail("\"" + section + "\"." + entity + " is not a non-empty list of numbers");
      for (const auto &value : vector)
        if (!value.is_number())
          return fail("\"" + section + "\"." + entity + " holds a value that is not a number");
      if (info.Dimension == 0)
        info.Dimension = vector.size();
      else if (vector.size() != info.Dimension)
        return fail("\"" + section + "\"." + entity + " has " + std::to_string(vector.size()) +
                    " values where the others have " + std::to_string(info.Dimension));
      ++info.Entries;
    }
  }
  llvm::SmallString<256> absolute(path);
  if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
    return llvm::createStringError(ec, "%s: %s", path.str().c_str(), ec.message().c_str());
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  info.Path = absolute.str().str();
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes));
  info.Sha256 = llvm::toHex(digest, /*LowerCase=*/true);
  return info;
}

} // namespace mlgo

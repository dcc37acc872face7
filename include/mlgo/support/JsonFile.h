// Reading a whole JSON input file, with errors that name it (and carry the
// line and column of a syntax error).
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

namespace mlgo {

llvm::Expected<nlohmann::json> readJsonFile(llvm::StringRef path);

} // namespace mlgo

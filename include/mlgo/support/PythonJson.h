// JSON text byte-identical to Python's json.dump(obj, f, indent=2), which is
// how the reference tools write corpus_description.json.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>
#include <string>

namespace mlgo {

/// Appends `bytes` as a JSON string literal with ensure_ascii escaping.
/// Bytes that are not valid UTF-8 become lone surrogates \udcXX, as Python's
/// surrogateescape decoding of file names does.
void appendPythonJsonString(std::string &out, llvm::StringRef bytes);

/// Serializes `value` as json.dump(value, indent=2) would: no trailing newline.
std::string dumpPythonJson(const nlohmann::ordered_json &value);

/// Decodes JSON text whose strings may hold Python's lone-surrogate escapes
/// (\udc80-\udcff) back into the raw bytes they stand for. Any other lone
/// surrogate is an error. Errors carry line and column.
nlohmann::ordered_json parsePythonJson(llvm::StringRef text);

} // namespace mlgo

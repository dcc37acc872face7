#include "mlgo/extract/InputLoaders.h"

#include "mlgo/extract/OutputOption.h"
#include "mlgo/support/Log.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

namespace mlgo {
namespace {

struct Argument {
  std::string Text;
  std::string Origin;
};

// Linkers quote params lines that hold spaces: "a b.o" -> a b.o.
std::string unquoteLine(llvm::StringRef line) {
  if (line.size() < 2 || !line.starts_with("\"") || !line.ends_with("\""))
    return line.str();
  std::string out;
  llvm::StringRef inner = line.drop_front().drop_back();
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '\\' && i + 1 < inner.size() && (inner[i + 1] == '"' || inner[i + 1] == '\\'))
      ++i;
    out += inner[i];
  }
  return out;
}

llvm::Error readParamsFile(llvm::StringRef path, std::set<std::string> &open, std::vector<Argument> &out) {
  // The C library would stop at the NUL and open another file than the one named.
  if (path.contains('\0'))
    return llvm::createStringError("'%s': a file name with a NUL byte",
                                   llvm::StringRef(path).split('\0').first.str().c_str());
  std::string key = absolutePath(path);
  if (open.count(key))
    return llvm::createStringError("%s: response file includes itself", path.str().c_str());
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  open.insert(key);
  llvm::SmallVector<llvm::StringRef, 64> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = unquoteLine(lines[i].trim());
    std::string origin = path.str() + ":" + std::to_string(i + 1);
    if (line.size() > 1 && line[0] == '@') {
      if (llvm::Error e = readParamsFile(llvm::StringRef(line).drop_front(), open, out))
        return llvm::createStringError("%s: in @file: %s", origin.c_str(), llvm::toString(std::move(e)).c_str());
      continue;
    }
    out.push_back({std::move(line), std::move(origin)});
  }
  open.erase(key);
  return llvm::Error::success();
}

LoadedInput candidatesFromArguments(std::vector<Argument> args, llvm::StringRef objBaseDir) {
  LoadedInput loaded;
  std::vector<std::string> texts;
  for (const Argument &a : args)
    texts.push_back(a.Text);
  bool hasOutput = false;
  auto output = findOutputOption(texts);
  if (!output) {
    // A trailing `-o`: drop it and report; the objects are still usable.
    loaded.Skipped.push_back({args.back().Origin, "missing_output_value", llvm::toString(output.takeError())});
    args.pop_back();
  } else if (*output) {
    hasOutput = true;
    args.erase(args.begin() + static_cast<long>((*output)->First),
               args.begin() + static_cast<long>((*output)->First + (*output)->Count));
  } else {
    log::info("This params file does not have an explicit -o option.");
  }
  if (objBaseDir.empty())
    log::info("Object base directory not provided; assuming the current working directory");
  for (Argument &a : args) {
    if (a.Text.empty() || a.Text[0] == '-')
      continue;
    // With an output option only objects are inputs (the reference's rule);
    // without one every remaining operand is taken.
    if (hasOutput && !llvm::StringRef(a.Text).ends_with(".o")) {
      log::debug(a.Origin + ": not an object, skipped: " + a.Text);
      continue;
    }
    // open() would stop at a NUL byte and read another file than the one named.
    if (llvm::StringRef(a.Text).contains('\0')) {
      loaded.Skipped.push_back({a.Origin, "bad_object_path", "the object path contains a NUL byte"});
      continue;
    }
    loaded.Candidates.push_back({std::move(a.Text), objBaseDir.str(), std::move(a.Origin)});
  }
  return loaded;
}

} // namespace

llvm::Expected<LoadedInput> loadLinkerParams(llvm::StringRef path, llvm::StringRef objBaseDir) {
  std::vector<Argument> args;
  std::set<std::string> open;
  if (llvm::Error e = readParamsFile(path, open, args))
    return e;
  return candidatesFromArguments(std::move(args), objBaseDir);
}

llvm::Expected<LoadedInput> loadLinkerArguments(llvm::ArrayRef<std::string> texts, llvm::StringRef objBaseDir,
                                                llvm::StringRef origin) {
  std::vector<Argument> args;
  std::set<std::string> open;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string argOrigin = origin.str() + " argument " + std::to_string(i + 1);
    if (texts[i].size() > 1 && texts[i][0] == '@') {
      if (llvm::Error e = readParamsFile(llvm::StringRef(texts[i]).drop_front(), open, args))
        return llvm::createStringError("%s: in @file: %s", argOrigin.c_str(), llvm::toString(std::move(e)).c_str());
      continue;
    }
    args.push_back({texts[i], std::move(argOrigin)});
  }
  return candidatesFromArguments(std::move(args), objBaseDir);
}

} // namespace mlgo

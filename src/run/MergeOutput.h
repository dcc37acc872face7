// merge-harvest's output directory: staged, then put in place as a whole
// (an earlier merge replaced), one merge at a time, never a shard's own
// directory; each shard log placed in the staging directory as a regular
// file reached through no link. Internal to the run room.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlgo {

/// The directory holding `path` ("." for a bare name).
std::string parentOf(llvm::StringRef path);

/// Copies (or links) a shard's log into the staging directory, synced before
/// the staging directory is renamed into place (the harvest's durability
/// policy). A shard is someone else's data: its log must be a regular file
/// reached without a symbolic link in any component below the shard (that
/// would copy a file from outside the shard) nor a FIFO or device (a merge
/// that never ends).
llvm::Error placeLog(const std::string &shardDir, const std::string &relative, const std::string &to, bool hardLink);

/// Puts the finished staging directory at `dir`, replacing an earlier merge;
/// the new name is durable when this returns.
llvm::Error replaceDirectory(const std::string &staging, const std::string &dir);

/// One merge into an output directory at a time: an flock on OUT.merge-lock
/// (beside OUT, which is replaced as a whole), held until the process ends.
/// Holding it, any OUT.merge-tmp.* or OUT.merge-old.* is an earlier merge's
/// that died (SIGKILL, power loss, a second Ctrl-C): removed.
llvm::Error lockOutputAndCleanStale(const std::string &outputDir);

/// The output directory is replaced as a whole, so it must not hold a shard,
/// and an existing one must be empty or an earlier merge.
llvm::Error checkReplaceable(const std::string &outputDir, const std::vector<std::string> &shardDirs);

} // namespace mlgo

#include "SyncRecorder.h"

#include <sys/stat.h>

namespace mlgo::test {

SyncRecorder::SyncRecorder() : Previous(setSyncHook(this)) {}

SyncRecorder::~SyncRecorder() { setSyncHook(Previous); }

int SyncRecorder::sync(SyncCall call, int fd, llvm::StringRef path) {
  SyncEvent event;
  event.Call = call;
  event.Path = path.str();
  struct stat st;
  event.Directory = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  if (Observe)
    event.Snapshot = Observe(event);
  {
    std::lock_guard<std::mutex> lock(Mutex);
    Events.push_back(event);
  }
  if (FailWith) {
    errno = *FailWith;
    return -1;
  }
  return SyncHook::sync(call, fd, path);
}

std::vector<SyncEvent> SyncRecorder::events() const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Events;
}

void SyncRecorder::clear() {
  std::lock_guard<std::mutex> lock(Mutex);
  Events.clear();
}

const char *syncCallName(SyncCall call) {
  switch (call) {
  case SyncCall::Fdatasync:
    return "fdatasync";
  case SyncCall::Fsync:
    return "fsync";
  case SyncCall::Syncfs:
    return "syncfs";
  }
  return "?";
}

std::string describe(const std::vector<SyncEvent> &events) {
  std::string text;
  for (const SyncEvent &e : events)
    text += std::string(syncCallName(e.Call)) + " " + e.Path + (e.Directory ? "/" : "") +
            (e.Snapshot.empty() ? "" : " [" + e.Snapshot + "]") + "\n";
  return text.empty() ? "(no syncs)\n" : text;
}

} // namespace mlgo::test

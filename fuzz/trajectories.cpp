// A trajectories file (harvest-logs --policy=replay:FILE, the explored
// rounds' files), as readTrajectories reads it.
// Contract: any bytes give trajectories or a clear error naming the file,
// never a crash or an exception; every trajectory written back with
// trajectoryLine reads back equal.
#include "FuzzSupport.h"

#include "mlgo/policy/Trajectory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("trajectories.jsonl", data, size);
  llvm::Expected<mlgo::TrajectorySet> set = mlgo::readTrajectories(path);
  if (!set) {
    FUZZ_ERROR_MESSAGE(set.takeError(), path);
    return 0;
  }
  std::string written;
  for (const auto &[module, trajectory] : *set)
    written += mlgo::trajectoryLine(module, trajectory.Recorded, trajectory.Then);
  std::string again =
      mlgo::fuzz::writeScratch("again.jsonl", reinterpret_cast<const uint8_t *>(written.data()), written.size());
  llvm::Expected<mlgo::TrajectorySet> reread = mlgo::readTrajectories(again);
  if (!reread) {
    FUZZ_CHECK(false, "trajectories written back do not read: " + llvm::toString(reread.takeError()));
    return 0;
  }
  FUZZ_CHECK(reread->size() == set->size(), "a different number of modules read back");
  for (const auto &[module, trajectory] : *set) {
    auto it = reread->find(module);
    FUZZ_CHECK(it != reread->end(), "a module lost when written back: " + module);
    FUZZ_CHECK(it->second.Recorded == trajectory.Recorded && it->second.Then == trajectory.Then,
               "a trajectory changed when written back: " + module);
  }
  return 0;
}

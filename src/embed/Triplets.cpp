#include "mlgo/embed/Triplets.h"
#include "mlgo/support/SplitMix.h"

#include "mlgo/corpus/CorpusDescription.h"
#include "mlgo/embed/MachineVocabulary.h"
#include "mlgo/embed/ModulePipeline.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/Interrupt.h"
#include "mlgo/support/PathUtil.h"

#include "llvm/Analysis/IR2Vec.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <queue>

namespace mlgo {
namespace {

using llvm::ir2vec::Vocabulary;

uint64_t fnv1a(llvm::StringRef text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void sortUnique(std::vector<Triplet> &triplets) {
  std::sort(triplets.begin(), triplets.end());
  triplets.erase(std::unique(triplets.begin(), triplets.end()), triplets.end());
}

// A spilled run: sorted distinct triplets, 12 bytes each, native order.
class RunReader {
public:
  explicit RunReader(std::unique_ptr<llvm::MemoryBuffer> buffer) : Buffer(std::move(buffer)) {}
  bool next(Triplet &t) {
    if (At + 12 > Buffer->getBufferSize())
      return false;
    std::memcpy(&t, Buffer->getBufferStart() + At, 12);
    At += 12;
    return true;
  }

private:
  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  size_t At = 0;
};

} // namespace

static_assert(sizeof(Triplet) == 12, "runs store triplets as three uint32s");

llvm::Expected<ModuleTriplets> moduleTriplets(llvm::StringRef bitcodePath, llvm::StringRef passes) {
  auto loaded = LoadedModule::loadAfter(bitcodePath, passes);
  if (!loaded)
    return loaded.takeError();
  ModuleTriplets out;
  for (const llvm::Function &function : (*loaded)->module()) {
    if (function.isDeclaration())
      continue;
    bool havePrevious = false;
    uint32_t previous = 0;
    for (const llvm::BasicBlock &block : function)
      for (const llvm::Instruction &instruction : block.instructionsWithoutDebug()) {
        uint32_t opcode = Vocabulary::getIndex(instruction.getOpcode());
        if (havePrevious)
          out.Triplets.push_back({previous, opcode, NextRelation});
        out.Triplets.push_back({opcode, Vocabulary::getIndex(instruction.getType()->getTypeID()), TypeRelation});
        uint32_t arg = 0;
        for (const llvm::Use &use : instruction.operands())
          out.Triplets.push_back({opcode, Vocabulary::getIndex(*use.get()), ArgRelation + arg++});
        if (arg > 0)
          out.MaxRelation = std::max(out.MaxRelation, ArgRelation + arg - 1);
        previous = opcode;
        havePrevious = true;
      }
  }
  return out;
}

std::vector<std::string> ir2vecEntities() {
  std::vector<std::string> out;
  for (unsigned id = 0; id < Vocabulary::getCanonicalSize(); ++id)
    out.push_back(Vocabulary::getStringKey(id).str());
  return out;
}

TripletSet::TripletSet(std::string spillDir, size_t memoryBudget)
    : SpillDir(std::move(spillDir)), Budget(std::max<size_t>(memoryBudget, 1)) {}

TripletSet::~TripletSet() {
  for (const std::string &run : Runs)
    llvm::sys::fs::remove(run);
}

llvm::Error TripletSet::add(const std::vector<Triplet> &triplets) {
  for (const Triplet &t : triplets) {
    Pending.push_back(t);
    if (Pending.size() >= Budget) {
      // Duplicates are common: compact first, spill only if still full.
      sortUnique(Pending);
      if (Pending.size() * 2 >= Budget)
        if (llvm::Error e = spill())
          return e;
    }
  }
  return llvm::Error::success();
}

llvm::Error TripletSet::spill() {
  sortUnique(Pending);
  std::string path = joinPath(SpillDir, "run." + std::to_string(Runs.size()));
  std::string bytes(Pending.size() * 12, '\0');
  if (!Pending.empty())
    std::memcpy(bytes.data(), Pending.data(), bytes.size());
  if (llvm::Error e = writeFileAtomically(path, bytes))
    return e;
  Runs.push_back(path);
  Pending.clear();
  Pending.shrink_to_fit();
  return llvm::Error::success();
}

llvm::Error TripletSet::drain(const std::function<llvm::Error(const Triplet &)> &sink) {
  sortUnique(Pending);
  std::vector<RunReader> readers;
  for (const std::string &run : Runs) {
    auto buffer = llvm::MemoryBuffer::getFile(run, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buffer)
      return llvm::createStringError(buffer.getError(), "%s: %s", run.c_str(), buffer.getError().message().c_str());
    readers.emplace_back(std::move(*buffer));
  }
  // A k-way merge of the runs and what is still in memory.
  using Head = std::pair<Triplet, size_t>; // triplet, source (readers.size() = memory)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  size_t inMemory = 0;
  auto advance = [&](size_t source) {
    Triplet t;
    if (source < readers.size()) {
      if (readers[source].next(t))
        heads.push({t, source});
    } else if (inMemory < Pending.size()) {
      heads.push({Pending[inMemory++], source});
    }
  };
  for (size_t s = 0; s <= readers.size(); ++s)
    advance(s);
  std::optional<Triplet> last;
  while (!heads.empty()) {
    auto [t, source] = heads.top();
    heads.pop();
    if (!last || *last != t) {
      if (llvm::Error e = sink(t))
        return e;
      last = t;
    }
    advance(source);
  }
  readers.clear();
  for (const std::string &run : Runs)
    llvm::sys::fs::remove(run);
  Runs.clear();
  Pending.clear();
  return llvm::Error::success();
}

std::string chooseOptLevel(const std::vector<std::string> &levels, uint64_t seed, llvm::StringRef module) {
  if (levels.size() == 1)
    return levels.front();
  return levels[splitmix64(seed ^ fnv1a(module)) % levels.size()];
}

llvm::Expected<TripletCorpusSummary> writeCorpusTriplets(const TripletCorpusOptions &options) {
  for (const std::string &level : options.OptLevels)
    if (level != "O0" && level != "O1" && level != "O2" && level != "O3" && level != "Os" && level != "Oz")
      return llvm::createStringError("--opt_levels: '%s' is not one of O0, O1, O2, O3, Os, Oz", level.c_str());
  if (options.OptLevels.empty())
    return llvm::createStringError("--opt_levels: at least one level");
  auto corpus = readCheckedCorpusDescription(options.CorpusDir);
  if (!corpus)
    return corpus.takeError();
  if (std::error_code ec = llvm::sys::fs::create_directories(options.OutputDir))
    return llvm::createStringError(ec, "cannot create %s: %s", options.OutputDir.c_str(), ec.message().c_str());
  std::string spillDir = joinPath(options.OutputDir, ".triplet-runs");
  if (std::error_code ec = llvm::sys::fs::create_directories(spillDir))
    return llvm::createStringError(ec, "cannot create %s: %s", spillDir.c_str(), ec.message().c_str());

  TripletCorpusSummary summary;
  summary.Modules.resize(corpus->Modules.size());
  bool machine = options.Mode == EmbeddingMode::MIR;
  summary.MaxRelation = machine ? MachineNextRelation : NextRelation;
  std::unique_ptr<MachineVocabularies> layout = machine ? MachineVocabularies::layoutOnly() : nullptr;
  TripletSet set(spillDir, options.MemoryBudget);
  std::mutex setMutex;
  std::optional<llvm::Error> setError;
  unsigned workers = options.Workers ? options.Workers : static_cast<unsigned>(tbb::info::default_concurrency());
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, workers);
  tbb::parallel_for(size_t(0), corpus->Modules.size(), [&](size_t i) {
    if (interruptRequested())
      return;
    TripletModuleRecord &record = summary.Modules[i];
    record.Module = corpus->Modules[i];
    record.OptLevel = chooseOptLevel(options.OptLevels, options.Seed, record.Module);
    std::string path = joinPath(options.CorpusDir, record.Module + ".bc"), passes = "default<" + record.OptLevel + ">";
    auto triplets = machine ? machineModuleTriplets(path, passes, *layout) : moduleTriplets(path, passes);
    if (!triplets) {
      record.Error = llvm::toString(triplets.takeError());
      return;
    }
    record.Triplets = triplets->Triplets.size();
    record.Target = triplets->Target;
    std::lock_guard<std::mutex> lock(setMutex);
    summary.MaxRelation = std::max(summary.MaxRelation, triplets->MaxRelation);
    if (!setError)
      if (llvm::Error e = set.add(triplets->Triplets))
        setError = std::move(e);
  });
  if (setError)
    return std::move(*setError);
  if (interruptRequested())
    return llvm::createStringError("interrupted: no output written");
  // Machine entity ids are the target's: one target per corpus, the first
  // compiled module's in corpus order.
  const MachineVocabulary *machineEntities = nullptr;
  if (machine) {
    std::string target;
    for (const TripletModuleRecord &record : summary.Modules) {
      if (!record.Error.empty() || record.Target.empty())
        continue;
      if (target.empty())
        target = record.Target;
      else if (record.Target != target)
        return llvm::createStringError("%s: module %s is for target %s, others for %s: machine IR entity ids are "
                                       "per target, so a corpus must hold one",
                                       options.CorpusDir.c_str(), record.Module.c_str(), record.Target.c_str(),
                                       target.c_str());
    }
    machineEntities = layout->forTarget(target);
    if (!machineEntities)
      return llvm::createStringError("%s: no module compiled, so there is no target to number entities for",
                                     options.CorpusDir.c_str());
  }

  // train2id.txt: the count first, so the triplets go to a temporary file
  // and the count is prepended when it is known.
  std::string body = joinPath(spillDir, "train.body");
  {
    AtomicFileWriter out;
    if (llvm::Error e = out.open(body))
      return std::move(e);
    std::string chunk;
    summary.SpilledRuns = set.spilledRuns();
    if (llvm::Error e = set.drain([&](const Triplet &t) -> llvm::Error {
          ++summary.Distinct;
          chunk += std::to_string(t.Head) + ' ' + std::to_string(t.Tail) + ' ' + std::to_string(t.Relation) + '\n';
          if (chunk.size() < (1 << 20))
            return llvm::Error::success();
          llvm::Error e = out.write(chunk);
          chunk.clear();
          return e;
        }))
      return std::move(e);
    if (llvm::Error e = out.write(chunk))
      return std::move(e);
    if (llvm::Error e = out.commit())
      return std::move(e);
  }
  {
    AtomicFileWriter train;
    if (llvm::Error e = train.open(joinPath(options.OutputDir, "train2id.txt")))
      return std::move(e);
    if (llvm::Error e = train.write(std::to_string(summary.Distinct) + "\n"))
      return std::move(e);
    auto buffer = llvm::MemoryBuffer::getFile(body, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buffer)
      return llvm::createStringError(buffer.getError(), "%s: %s", body.c_str(), buffer.getError().message().c_str());
    if (llvm::Error e = train.write((*buffer)->getBuffer()))
      return std::move(e);
    if (llvm::Error e = train.commit())
      return std::move(e);
  }
  llvm::sys::fs::remove(body);
  llvm::sys::fs::remove(spillDir);

  std::vector<std::string> entities = machine ? machineEntities->names() : ir2vecEntities();
  std::string entityText = std::to_string(entities.size()) + "\n";
  for (size_t id = 0; id < entities.size(); ++id)
    entityText += entities[id] + "\t" + std::to_string(id) + "\n";
  if (llvm::Error e = writeFileAtomically(joinPath(options.OutputDir, "entity2id.txt"), entityText))
    return std::move(e);
  uint32_t firstArg = machine ? MachineArgRelation : ArgRelation;
  std::string relationText =
      std::to_string(summary.MaxRelation + 1) + (machine ? "\nNext\t0\n" : "\nType\t0\nNext\t1\n");
  for (uint32_t r = firstArg; r <= summary.MaxRelation; ++r)
    relationText += "Arg" + std::to_string(r - firstArg) + "\t" + std::to_string(r) + "\n";
  if (llvm::Error e = writeFileAtomically(joinPath(options.OutputDir, "relation2id.txt"), relationText))
    return std::move(e);
  return summary;
}

} // namespace mlgo

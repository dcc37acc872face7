// IR2Vec vocabulary training data (`mlgo-ir2vec triplets`): the
// (head, tail, relation) triplets llvm-ir2vec-22 triplets prints for a
// module, gathered over a corpus with a seeded opt level per module,
// deduplicated within a memory budget (sorted runs spilled to disk and
// merged), and written as OpenKE's train2id.txt, entity2id.txt and
// relation2id.txt.
#pragma once

#include "mlgo/embed/VocabularyMode.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace mlgo {

struct Triplet {
  uint32_t Head = 0, Tail = 0, Relation = 0;
  auto operator<=>(const Triplet &) const = default;
};

/// Relation ids as llvm-ir2vec numbers them: Type 0, Next 1, Arg<i> 2 + i.
inline constexpr uint32_t TypeRelation = 0, NextRelation = 1, ArgRelation = 2;
/// And with --mode=mir (machine instructions have no Type): Next 0, Arg<i> 1 + i.
inline constexpr uint32_t MachineNextRelation = 0, MachineArgRelation = 1;

struct ModuleTriplets {
  std::vector<Triplet> Triplets; // in llvm-ir2vec's order, duplicates kept
  uint32_t MaxRelation = NextRelation;
  std::string Target; // machine IR: the target whose entity ids these are
};

/// The triplets of every function with a body: per instruction (debug
/// intrinsics skipped) its Type triplet, one Arg<i> triplet per operand, and
/// a Next triplet from the previous instruction of the function.
llvm::Expected<ModuleTriplets> moduleTriplets(llvm::StringRef bitcodePath, llvm::StringRef passes);

/// The entities, by id, as llvm-ir2vec-22 entities lists them.
std::vector<std::string> ir2vecEntities();

class MachineVocabularies;

/// The machine IR triplets of every machine function at the input of greedy
/// register allocation (after `passes`, if any): per instruction (debug
/// instructions skipped) a Next triplet from the previous one of the
/// function and one Arg<i> triplet per operand, entities numbered as
/// `layout` numbers them for the module's target (llvm-ir2vec-22 triplets
/// --mode=mir, but with each function's own register classes).
llvm::Expected<ModuleTriplets> machineModuleTriplets(llvm::StringRef bitcodePath, llvm::StringRef passes,
                                                     MachineVocabularies &layout);

/// A set of triplets that keeps at most `memoryBudget` in memory: past that,
/// the set is written to `spillDir` as a sorted run and emptied.
class TripletSet {
public:
  TripletSet(std::string spillDir, size_t memoryBudget);
  ~TripletSet();
  TripletSet(const TripletSet &) = delete;
  TripletSet &operator=(const TripletSet &) = delete;

  llvm::Error add(const std::vector<Triplet> &triplets);
  /// Every distinct triplet once, in ascending order, to `sink`; then the
  /// runs are removed.
  llvm::Error drain(const std::function<llvm::Error(const Triplet &)> &sink);
  size_t spilledRuns() const { return Runs.size(); }

private:
  llvm::Error spill();
  std::string SpillDir;
  size_t Budget;
  std::vector<Triplet> Pending; // sorted and deduplicated when spilled
  std::vector<std::string> Runs;
};

struct TripletCorpusOptions {
  std::string CorpusDir, OutputDir;
  EmbeddingMode Mode = EmbeddingMode::LLVM; // mir: machine IR at -stop-before=greedy
  std::vector<std::string> OptLevels = {"O0", "O1", "O2", "O3"};
  uint64_t Seed = 0;
  unsigned Workers = 0;
  size_t MemoryBudget = size_t(1) << 22; // triplets held before a spill
};

struct TripletModuleRecord {
  std::string Module, OptLevel, Error;
  std::string Target; // machine IR only
  size_t Triplets = 0;
};

struct TripletCorpusSummary {
  std::vector<TripletModuleRecord> Modules;
  size_t Distinct = 0, SpilledRuns = 0;
  uint32_t MaxRelation = NextRelation;
};

/// The opt level `levels` draws for `module` under `seed`: a function of the
/// three alone, so any split of the corpus, any thread count and any later
/// run agree.
std::string chooseOptLevel(const std::vector<std::string> &levels, uint64_t seed, llvm::StringRef module);

/// Gathers the corpus' triplets and writes the three OpenKE files into
/// OutputDir (atomically). A module that cannot be read is recorded with its
/// error and left out.
llvm::Expected<TripletCorpusSummary> writeCorpusTriplets(const TripletCorpusOptions &options);

} // namespace mlgo

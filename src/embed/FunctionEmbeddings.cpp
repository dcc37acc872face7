#include "mlgo/embed/FunctionEmbeddings.h"
#include "mlgo/embed/ModulePipeline.h"

#include "llvm/Analysis/IR2Vec.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"

#include <optional>

namespace mlgo {
namespace {

// Diagnostics become an error message instead of LLVM's default of
// printing and exiting the process.
struct CollectedDiagnostics {
  std::string Errors;
  static void handle(const llvm::DiagnosticInfo *info, void *context) {
    if (info->getSeverity() != llvm::DS_Error)
      return;
    llvm::raw_string_ostream os(static_cast<CollectedDiagnostics *>(context)->Errors);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info->print(printer);
    os << "; ";
  }
};

} // namespace

struct EmbeddingVocabulary::State {
  llvm::LLVMContext Context;
  CollectedDiagnostics Diagnostics;
  std::optional<llvm::ir2vec::Vocabulary> Vocabulary; // move-constructible only
};

EmbeddingVocabulary::EmbeddingVocabulary(std::unique_ptr<State> impl) : Impl(std::move(impl)) {}
EmbeddingVocabulary::~EmbeddingVocabulary() = default;
unsigned EmbeddingVocabulary::dimension() const { return Impl->Vocabulary->getDimension(); }

llvm::Expected<std::unique_ptr<EmbeddingVocabulary>> EmbeddingVocabulary::load(llvm::StringRef path) {
  // IR2Vec reads the file named by its own option, as opt would be told.
  auto &options = llvm::cl::getRegisteredOptions();
  auto *vocabPath = static_cast<llvm::cl::opt<std::string> *>(options.lookup("ir2vec-vocab-path"));
  if (!vocabPath)
    return llvm::createStringError("this libLLVM has no IR2Vec (-ir2vec-vocab-path is not registered)");
  vocabPath->setValue(path.str());
  auto state = std::make_unique<State>();
  state->Context.setDiagnosticHandlerCallBack(CollectedDiagnostics::handle, &state->Diagnostics);
  llvm::Module anchor("ir2vec-vocabulary", state->Context);
  llvm::ModuleAnalysisManager analyses;
  llvm::IR2VecVocabAnalysis analysis;
  state->Vocabulary.emplace(analysis.run(anchor, analyses));
  if (!state->Vocabulary->isValid())
    return llvm::createStringError("%s: IR2Vec cannot use this vocabulary: %s", path.str().c_str(),
                                   state->Diagnostics.Errors.empty() ? "invalid" : state->Diagnostics.Errors.c_str());
  return std::unique_ptr<EmbeddingVocabulary>(new EmbeddingVocabulary(std::move(state)));
}

llvm::Expected<ModuleEmbeddings> embedModule(llvm::StringRef path, const EmbeddingVocabulary &vocabulary,
                                             EmbeddingKind kind, llvm::StringRef passes) {
  auto loaded = LoadedModule::loadAfter(path, passes);
  if (!loaded)
    return loaded.takeError();
  llvm::Module *module = &(*loaded)->module();
  const llvm::ir2vec::Vocabulary &vocab = *vocabulary.state().Vocabulary;
  ModuleEmbeddings out;
  out.Module.assign(vocab.getDimension(), 0.0);
  for (const llvm::Function &function : *module) {
    if (function.isDeclaration())
      continue;
    auto embedder = llvm::ir2vec::Embedder::create(
        kind == EmbeddingKind::Symbolic ? llvm::IR2VecKind::Symbolic : llvm::IR2VecKind::FlowAware, function, vocab);
    if (!embedder)
      return llvm::createStringError("%s: IR2Vec cannot embed function %s", path.str().c_str(),
                                     function.getName().str().c_str());
    FunctionEmbedding embedding{function.getName().str(), embedder->getFunctionVector().getData()};
    for (size_t i = 0; i < embedding.Values.size() && i < out.Module.size(); ++i)
      out.Module[i] += embedding.Values[i];
    out.Functions.push_back(std::move(embedding));
  }
  return out;
}

} // namespace mlgo

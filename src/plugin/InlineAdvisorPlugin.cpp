// libMLGOInlineAdvisor.so: an LLVM pass plugin that replaces the inline
// advisor with LLVM's own MLInlineAdvisor, whose model runner is ours: each
// decision's features are computed by the same LLVM code as in interactive
// mode, decided by an in-process policy (InProcessPolicy.h) and logged here,
// in the development-mode format harvest-logs writes, with no pipes and no
// second process.
//
//   opt-22 -load-pass-plugin=libMLGOInlineAdvisor.so -passes='default<Oz>'
//     -mlgo-inliner-log=m.log [-mlgo-inliner-policy=random:0.5:7] m.bc -o out.bc
//   clang-22 -fpass-plugin=libMLGOInlineAdvisor.so -mllvm -mlgo-inliner-log=m.log ...
#include "ExplorationChain.h"
#include "mlgo/log/TrainingLog.h"
#include "mlgo/policy/InProcessPolicy.h"
#include "mlgo/support/FileDescriptorIo.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/BlockFrequencyInfo.h"
#include "llvm/Analysis/EphemeralValuesCache.h"
#include "llvm/Analysis/IR2Vec.h"
#include "llvm/Analysis/InlineAdvisor.h"
#include "llvm/Analysis/InlineCost.h"
#include "llvm/Analysis/MLInlineAdvisor.h"
#include "llvm/Analysis/MLModelRunner.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/ProfileSummaryInfo.h"
#include "llvm/Analysis/ReplayInlineAdvisor.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using namespace llvm;

namespace {

cl::OptionCategory Category("MLGO inliner plugin (libMLGOInlineAdvisor.so)");

cl::opt<std::string> PolicyOption("mlgo-inliner-policy", cl::init("default"), cl::cat(Category),
                                  cl::desc("Who decides: default, random:P[:SEED], or another registered in-process "
                                           "policy (NAME[:ARGUMENT]). Environment: MLGO_INLINER_POLICY."));
cl::opt<std::string> LogOption("mlgo-inliner-log", cl::cat(Category),
                               cl::desc("Write the training log (development-mode format: features, "
                                        "inlining_default, inlining_decision) to this file; created at the first "
                                        "decision. Environment: MLGO_INLINER_LOG."));
cl::opt<std::string> ModuleOption("mlgo-inliner-module", cl::cat(Category),
                                  cl::desc("The module's name for per-module policy state such as the random "
                                           "policy's seed (default: the LLVM module identifier). Environment: "
                                           "MLGO_INLINER_MODULE."));
cl::opt<std::string> SitesOption("mlgo-inliner-sites", cl::cat(Category),
                                 cl::desc("Also write which call site each logged decision was about to this file "
                                          "(JSON Lines, one record per observation, in log order: caller, callee, "
                                          "site, loc, default, decision). Environment: MLGO_INLINER_SITES."));
cl::opt<std::string> ExploreOption("mlgo-inliner-explore", cl::cat(Category),
                                   cl::desc("K:ORDER:TIMEOUT_SECONDS:DIR: also explore K trajectories by forking at "
                                            "the decision to flip (ORDER: margin, logits or first); run by "
                                            "harvest-logs --explore through its compile server (ExplorationChain.h)."));
cl::opt<bool> InertOption("mlgo-inliner-off", cl::init(false), cl::cat(Category),
                          cl::desc("Load without replacing the inline advisor (the ordinary inliner runs)."));

// A policy made by a host that forks its compiles (mlgo-compile-server)
// before the first fork, through mlgoInlinerPreparePolicy: every child takes
// its own copy instead of loading it again (a TFLite model, once).
std::string PreparedSpec;
std::unique_ptr<mlgo::InProcessPolicy> Prepared;

// An option, else its environment variable, else `fallback`.
std::string setting(const cl::opt<std::string> &option, const char *variable, const std::string &fallback) {
  if (option.getNumOccurrences())
    return option;
  if (const char *value = std::getenv(variable))
    return value;
  return fallback;
}

[[noreturn]] void fatal(const Twine &message) {
  report_fatal_error("libMLGOInlineAdvisor: " + message, /*gen_crash_diag=*/false);
}

mlgo::TensorSpec ourSpec(const llvm::TensorSpec &spec) {
  std::string text;
  raw_string_ostream os(text);
  json::OStream json(os);
  spec.toJSON(json);
  os.flush();
  auto parsed = mlgo::TensorSpec::fromJson(nlohmann::json::parse(text));
  if (!parsed)
    fatal("unsupported feature " + spec.name() + ": " + toString(parsed.takeError()));
  return *parsed;
}

// Everything one compiler process decides and logs. Every inliner pass
// instance builds a new advisor; they share one policy and one log (one
// header, one context "", numbering continued), as harvest-logs' interactive
// host joins its streams.
class Session {
public:
  static Session &get() {
    static Session S;
    return S;
  }

  // A new advisor's features. The first fixes the log's header; later ones
  // must agree.
  void beginAdvisor(const Module &M, ArrayRef<llvm::TensorSpec> compilerFeatures) {
    std::vector<mlgo::TensorSpec> features;
    for (const llvm::TensorSpec &spec : compilerFeatures)
      features.push_back(ourSpec(spec));
    if (Policy) {
      if (features != Features)
        fatal("an inliner pass instance computes different features than the first one");
      return;
    }
    Features = std::move(features);
    std::string spec = setting(PolicyOption, "MLGO_INLINER_POLICY", "default");
    if (Prepared && spec == PreparedSpec) {
      Policy = std::move(Prepared); // made once, before this process was forked
    } else {
      auto policy = mlgo::makeInProcessPolicy(spec);
      if (!policy)
        fatal("-mlgo-inliner-policy=" + spec + ": " + toString(policy.takeError()));
      Policy = std::move(*policy);
    }
    std::string module = setting(ModuleOption, "MLGO_INLINER_MODULE", M.getModuleIdentifier());
    if (Error e = Policy->beginModule(module, Features))
      fatal("policy " + spec + ": " + toString(std::move(e)));
    Extras = Policy->extraOutputs();
    ExtraBytes.resize(Extras.size());
    LogPath = setting(LogOption, "MLGO_INLINER_LOG", "");
    SitesPath = setting(SitesOption, "MLGO_INLINER_SITES", "");
    NeedsDefault = Policy->usesDefaultDecision() || !LogPath.empty() || !SitesPath.empty();
    NeedsSites = Policy->usesCallSites() || !SitesPath.empty();
    for (const mlgo::TensorSpec &spec : Features)
      FeatureBytes.push_back(spec.byteSize());
    if (ExploreOption.getNumOccurrences())
      beginChain(spec);
  }

  // Whether anyone reads the default heuristic's decision (the policy, the
  // log's inlining_default, the sites file); known once an advisor began.
  bool needsDefault() const { return NeedsDefault; }

  // The default heuristic's margin at the site it was just asked about.
  void noteCostMargin(std::optional<int> margin) { PendingMargin = margin; }

  // The call site the next decision is about (provenance, -mlgo-inliner-sites,
  // and a policy that decides by call site).
  void aboutToDecide(const CallBase &CB) {
    if (!NeedsSites)
      return;
    // Names are bytes; JSON wants UTF-8.
    auto text = [](StringRef s) { return json::isUTF8(s) ? s.str() : json::fixUTF8(s); };
    Pending.Caller = text(CB.getCaller()->getName());
    const Function *callee = CB.getCalledFunction();
    Pending.Callee = callee ? text(callee->getName()) : "";
    // The k-th decision about a call from this caller to this callee (as
    // written: two names that differ only in bytes UTF-8 cannot hold are
    // one): it does not move when another call in the caller is inlined or
    // not, so two policies' harvests, and the user's own build, name the
    // same site alike.
    Pending.Ordinal = SiteCounts[{Pending.Caller, Pending.Callee}]++;
    Pending.Location.clear();
    Pending.ReplayLocation.clear();
    if (const DebugLoc &loc = CB.getDebugLoc(); loc && !SitesPath.empty()) {
      Pending.Location = text((loc->getFilename() + ":" + Twine(loc.getLine()) + ":" + Twine(loc.getCol())).str());
      // How -cgscc-inline-replay names this site (its default format).
      Pending.ReplayLocation =
          text(formatCallSiteLocation(loc, CallSiteFormat{CallSiteFormat::Format::LineColumnDiscriminator}));
    }
    Pending.Set = true;
  }

  // One decision: the features are in `data` (consecutive, in order).
  bool decide(const char *data, bool defaultDecision) {
    std::vector<StringRef> &features = FeatureViews;
    features.clear();
    size_t offset = 0;
    for (size_t bytes : FeatureBytes) {
      features.emplace_back(data + offset, bytes);
      offset += bytes;
    }
    for (size_t i = 0; i < Extras.size(); ++i)
      ExtraBytes[i].assign(Extras[i].byteSize(), '\0');
    mlgo::InProcessQuery query{Features, features, defaultDecision};
    if (NeedsDefault)
      query.CostMargin = PendingMargin;
    mlgo::InProcessCallSite site;
    if (NeedsSites) {
      if (!Pending.Set)
        fatal("a decision without its call site");
      site = {Pending.Caller, Pending.Callee, Pending.Ordinal};
      query.Site = &site;
    }
    auto decision = Policy->decide(query, ExtraBytes);
    if (!decision)
      fatal("the inlining policy failed: " + toString(decision.takeError()));
    for (size_t i = 0; i < Extras.size(); ++i)
      if (ExtraBytes[i].size() != Extras[i].byteSize())
        fatal("the policy's extra output " + Extras[i].Name + " has " + Twine(ExtraBytes[i].size()) + " bytes, not " +
              Twine(Extras[i].byteSize()));
    if (Chain)
      *decision = Chain->atDecision(Step, certainty(), *decision);
    ++Step;
    if (!LogPath.empty()) {
      log(StringRef(data, offset), defaultDecision, *decision);
      if (!SitesPath.empty())
        logSite(defaultDecision, *decision);
    }
    Pending.Set = false;
    return *decision;
  }

  // harvest-logs --explore's fork chains: this trajectory's compile ended
  // with `status` (the compile server calls mlgoInlinerTrajectoryEnd).
  void endTrajectory(int status) {
    if (!Chain)
      return;
    // Its log and sites are whole now: written before its parent learns it ended.
    for (auto [buffer, path] : {std::pair{&LogBuffer, &LogPath}, std::pair{&SitesBuffer, &SitesPath}}) {
      if (path->empty() || (buffer == &LogBuffer ? !Writer : !Sites))
        continue;
      if (buffer == &LogBuffer)
        Stream->flush();
      else
        Sites->flush();
      int fd = ::open(path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
      bool written = fd >= 0 && mlgo::writeAll(fd, buffer->data(), buffer->size());
      if (fd >= 0 && ::close(fd) != 0)
        written = false;
      if (!written) {
        errs() << "libMLGOInlineAdvisor: cannot write " << *path << ": " << std::strerror(errno) << "\n";
        errs().flush();
        ::_exit(1);
      }
    }
    Chain->plantLinkIfAsked();
    Chain->finish(status);
  }

  // An inliner pass ended: the policy may say what it missed.
  void endAdvisor() {
    if (Policy)
      Policy->endModule();
    flush();
  }

  void flush() {
    for (auto [stream, path] : {std::pair{Stream.get(), &LogPath}, std::pair{Sites.get(), &SitesPath}})
      if (stream) {
        stream->flush();
        // Files unless exploring by forking (openStream).
        if (auto *file = Chain ? nullptr : static_cast<raw_fd_ostream *>(stream); file && file->has_error())
          fatal("cannot write " + *path + ": " + file->error().message());
      }
  }

private:
  struct Site {
    std::string Caller, Callee, Location, ReplayLocation;
    uint64_t Ordinal = 0;
    bool Set = false;
  };

  // -mlgo-inliner-explore: the log and sites stay in memory (a checkpoint
  // forked from this process writes its own), and each decision's
  // certainty is computed as harvest-logs reads it back (StepCertainty.cpp).
  void beginChain(const std::string &spec) {
    auto chain = mlgo::plugin::parseChainSpec(ExploreOption);
    if (!chain)
      fatal(toString(chain.takeError()));
    if (chain->How == mlgo::plugin::ChainSpec::Order::Logits) {
      for (size_t i = 0; i < Extras.size(); ++i)
        if (Extras[i].Name == "inlining_logits" && Extras[i].elementCount() == 2)
          LogitsExtra = i;
      if (!LogitsExtra)
        fatal("-mlgo-inliner-explore orders by logits, and policy " + spec + " gives no inlining_logits");
    }
    ChainOrder = chain->How;
    Chain.emplace(std::move(*chain), spec, [this](const std::string &dir) {
      LogPath = dir + "/training.log";
      if (!SitesPath.empty())
        SitesPath = dir + "/sites.jsonl";
    });
  }

  double certainty() const {
    using Order = mlgo::plugin::ChainSpec::Order;
    if (ChainOrder == Order::Margin)
      return PendingMargin ? std::fabs(static_cast<double>(*PendingMargin)) : std::numeric_limits<double>::infinity();
    if (ChainOrder == Order::Logits) {
      const mlgo::TensorSpec &spec = Extras[*LogitsExtra];
      StringRef bytes = ExtraBytes[*LogitsExtra];
      double c = std::fabs(spec.elementAsDouble(bytes, 1) - spec.elementAsDouble(bytes, 0));
      return std::isnan(c) ? 0 : c;
    }
    return 0;
  }

  // A file's stream: in memory while exploring by forking.
  std::unique_ptr<raw_ostream> openStream(const std::string &path, std::string &buffer) {
    if (Chain)
      return std::make_unique<raw_string_ostream>(buffer);
    std::error_code ec;
    auto stream = std::make_unique<raw_fd_ostream>(path, ec);
    if (ec)
      fatal("cannot create " + path + ": " + ec.message());
    // An observation is a few hundred bytes: a large buffer keeps the
    // write() calls out of the compile (the log is flushed at exit).
    stream->SetBufferSize(1 << 20);
    return stream;
  }

  // One record per observation, so that line N describes observation N.
  void logSite(bool defaultDecision, bool decision) {
    if (!Pending.Set)
      fatal("a decision without its call site (the sites file would no longer align with the log)");
    Pending.Set = false;
    if (!Sites)
      Sites = openStream(SitesPath, SitesBuffer);
    json::OStream out(*Sites);
    out.object([&] {
      out.attribute("caller", Pending.Caller);
      out.attribute("callee", Pending.Callee);
      out.attribute("site", static_cast<int64_t>(Pending.Ordinal));
      out.attribute("loc", Pending.Location.empty() ? json::Value(nullptr) : json::Value(Pending.Location));
      out.attribute("default", defaultDecision);
      out.attribute("decision", decision);
      out.attribute("cost_margin",
                    PendingMargin ? json::Value(static_cast<int64_t>(*PendingMargin)) : json::Value(nullptr));
      out.attribute("replay_loc",
                    Pending.ReplayLocation.empty() ? json::Value(nullptr) : json::Value(Pending.ReplayLocation));
    });
    *Sites << '\n';
  }

  void log(StringRef features, bool defaultDecision, bool decision) {
    if (!Writer) {
      Stream = openStream(LogPath, LogBuffer);
      mlgo::LogHeader header;
      header.Features = Features;
      header.Features.insert(header.Features.end(), Extras.begin(), Extras.end());
      for (const char *name : {"inlining_default", "inlining_decision"}) {
        mlgo::TensorSpec spec;
        spec.Name = name;
        header.Features.push_back(spec); // int64_t [1]
      }
      Writer = std::make_unique<mlgo::TrainingLogWriter>(*Stream, std::move(header));
      Writer->switchContext(""); // the inliner's one context, written before its first observation
    }
    int64_t values[2] = {defaultDecision, decision};
    std::vector<StringRef> &pieces = Pieces;
    pieces.assign(1, features);
    for (const std::string &extra : ExtraBytes)
      pieces.push_back(extra);
    pieces.push_back(StringRef(reinterpret_cast<const char *>(values), sizeof(values)));
    if (Error e = Writer->observationRaw(pieces))
      fatal(toString(std::move(e)));
  }

  Session() = default;
  ~Session() { flush(); }

  std::vector<mlgo::TensorSpec> Features, Extras;
  std::vector<size_t> FeatureBytes;
  std::vector<StringRef> FeatureViews, Pieces; // reused by every decision
  std::vector<std::string> ExtraBytes;
  std::unique_ptr<mlgo::InProcessPolicy> Policy;
  std::string LogPath, SitesPath;
  std::unique_ptr<raw_ostream> Stream, Sites;
  std::string LogBuffer, SitesBuffer; // -mlgo-inliner-explore
  std::optional<mlgo::plugin::ExplorationChain> Chain;
  mlgo::plugin::ChainSpec::Order ChainOrder = mlgo::plugin::ChainSpec::Order::Margin;
  std::optional<size_t> LogitsExtra;
  size_t Step = 0; // decisions so far
  Site Pending;
  std::optional<int> PendingMargin;
  bool NeedsDefault = true;
  bool NeedsSites = false; // the sites file or the policy names each decision's call site
  std::map<std::pair<std::string, std::string>, uint64_t> SiteCounts;
  std::unique_ptr<mlgo::TrainingLogWriter> Writer;
};

// MLInlineAdvisor fills the features into our buffers and calls evaluate();
// the decision comes from the session's policy.
class InProcessModelRunner : public MLModelRunner {
public:
  InProcessModelRunner(LLVMContext &context, const std::vector<llvm::TensorSpec> &features)
      : MLModelRunner(context, Kind::Release, features.size()) {
    size_t total = 0;
    for (const llvm::TensorSpec &spec : features)
      total += spec.getTotalTensorBufferSize();
    Data.assign(total, 0);
    size_t offset = 0;
    for (size_t i = 0; i < features.size(); ++i) {
      setUpBufferForTensor(i, features[i], Data.data() + offset);
      offset += features[i].getTotalTensorBufferSize();
    }
  }
  bool DefaultDecision = false;

private:
  void *evaluateUntyped() override {
    Result = Session::get().decide(Data.data(), DefaultDecision);
    return &Result;
  }
  std::vector<char> Data;
  int64_t Result = 0;
};

// The ModuleAnalysisManager MLInlineAdvisor needs: the advisor factory does
// not receive it, so it is kept from the registration callback.
ModuleAnalysisManager *TheMAM = nullptr;

// LLVM's default decision for a call site, computed as InlineAdvisor.cpp's
// getDefaultInlineAdvice does (that function is static there); this is
// what -inliner-interactive-include-default sends as inlining_default.
// `margin` gets the heuristic's threshold minus its cost at CB (positive:
// inline, before deferral), or nullopt when the cost is not variable
// (always or never inline): how sure the heuristic was, which
// harvest-logs --explore_order=uncertain flips first where it is smallest.
bool defaultAdvice(CallBase &CB, FunctionAnalysisManager &FAM, const InlineParams &Params, std::optional<int> &margin) {
  Function &Caller = *CB.getCaller();
  ProfileSummaryInfo *PSI =
      FAM.getResult<ModuleAnalysisManagerFunctionProxy>(Caller).getCachedResult<ProfileSummaryAnalysis>(
          *Caller.getParent());
  auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(Caller);
  auto GetAssumptionCache = [&](Function &F) -> AssumptionCache & { return FAM.getResult<AssumptionAnalysis>(F); };
  auto GetBFI = [&](Function &F) -> BlockFrequencyInfo & { return FAM.getResult<BlockFrequencyAnalysis>(F); };
  auto GetTLI = [&](Function &F) -> const TargetLibraryInfo & { return FAM.getResult<TargetLibraryAnalysis>(F); };
  auto GetEphValuesCache = [&](Function &F) -> EphemeralValuesAnalysis::Result & {
    return FAM.getResult<EphemeralValuesAnalysis>(F);
  };
  Function &Callee = *CB.getCalledFunction();
  auto &CalleeTTI = FAM.getResult<TargetIRAnalysis>(Callee);
  margin.reset();
  bool measured = false;
  auto GetInlineCost = [&](CallBase &Call) {
    bool RemarksEnabled = Callee.getContext().getDiagHandlerPtr()->isMissedOptRemarkEnabled("inline");
    InlineCost cost = getInlineCost(Call, Params, CalleeTTI, GetAssumptionCache, GetTLI, GetBFI, PSI,
                                    RemarksEnabled ? &ORE : nullptr, GetEphValuesCache);
    // shouldInline asks for CB's cost first (deferral then asks about the
    // caller's callers): the margin costs no second analysis.
    if (&Call == &CB && !measured) {
      measured = true;
      if (cost.isVariable())
        margin = cost.getThreshold() - cost.getCost();
    }
    return cost;
  };
  static cl::opt<bool> *Deferral = static_cast<cl::opt<bool> *>(cl::getRegisteredOptions().lookup("inline-deferral"));
  bool deferral = Params.EnableDeferral.value_or(Deferral && *Deferral);
  return shouldInline(CB, CalleeTTI, GetInlineCost, ORE, deferral).has_value();
}

class InProcessInlineAdvisor : public MLInlineAdvisor {
public:
  InProcessInlineAdvisor(Module &M, ModuleAnalysisManager &MAM, FunctionAnalysisManager &FAM, InlineParams Params)
      : MLInlineAdvisor(
            M, MAM,
            [&M](const std::vector<llvm::TensorSpec> &features) -> std::unique_ptr<MLModelRunner> {
              Session::get().beginAdvisor(M, features);
              return std::make_unique<InProcessModelRunner>(M.getContext(), features);
            },
            [&FAM, Params](CallBase &CB) {
              std::optional<int> margin;
              bool advice = defaultAdvice(CB, FAM, Params, margin);
              Session::get().noteCostMargin(margin);
              return advice;
            }) {}
  ~InProcessInlineAdvisor() override { Session::get().endAdvisor(); }

protected:
  std::unique_ptr<MLInlineAdvice> getAdviceFromModel(CallBase &CB, OptimizationRemarkEmitter &ORE) override {
    // Its cost analysis is the plugin's largest cost when a model decides.
    static_cast<InProcessModelRunner &>(*ModelRunner).DefaultDecision =
        Session::get().needsDefault() ? GetDefaultAdvice(CB) : false;
    Session::get().aboutToDecide(CB);
    return MLInlineAdvisor::getAdviceFromModel(CB, ORE);
  }
};

// -ml-inliner-ir2vec-vocab-file: LLVM's own ML advisors load the IR2Vec
// vocabulary before they are made (InlineAdvisorAnalysis), and an advisor
// made with the vocabulary's result cached asks for callee_embedding and
// caller_embedding too. A plugin advisor skips that step, so we take it here,
// with the same error when the vocabulary cannot be loaded.
bool loadIR2VecVocabularyIfRequested(Module &M, ModuleAnalysisManager &MAM) {
  static auto *VocabFile =
      static_cast<cl::opt<std::string> *>(cl::getRegisteredOptions().lookup("ml-inliner-ir2vec-vocab-file"));
  if (!VocabFile || VocabFile->empty())
    return true;
  if (!MAM.getResult<IR2VecVocabAnalysis>(M).isValid()) {
    M.getContext().emitError("Failed to load IR2Vec vocabulary");
    return false;
  }
  return true;
}

InlineAdvisor *makeAdvisor(Module &M, FunctionAnalysisManager &FAM, InlineParams Params, InlineContext) {
  if (!TheMAM)
    fatal("the inline advisor was requested before the analyses were registered");
  if (!loadIR2VecVocabularyIfRequested(M, *TheMAM))
    return nullptr;
  return new InProcessInlineAdvisor(M, *TheMAM, FAM, Params);
}

void registerCallbacks(PassBuilder &PB) {
  PB.registerAnalysisRegistrationCallback([](ModuleAnalysisManager &MAM) {
    if (InertOption)
      return;
    TheMAM = &MAM;
    MAM.registerPass([] { return PluginInlineAdvisorAnalysis(makeAdvisor); });
  });
}

} // namespace

// Makes the policy for SPEC now (see Prepared). Returns "" or why not; the
// compile then makes it itself and fails as it would have.
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT const char *mlgoInlinerPreparePolicy(const char *spec) {
  static std::string error;
  auto policy = mlgo::makeInProcessPolicy(spec);
  if (!policy) {
    error = toString(policy.takeError());
    return error.c_str();
  }
  Prepared = std::move(*policy);
  PreparedSpec = spec;
  return "";
}

// The compile server's opt-then-llc child calls this when its compile
// ended (OptLlcEntries.cpp): with -mlgo-inliner-explore, the fork chain goes on.
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT void mlgoInlinerTrajectoryEnd(int status) {
  Session::get().endTrajectory(status);
}

extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "MLGOInlineAdvisor", LLVM_VERSION_STRING, registerCallbacks};
}

// llc in the compile server's child. opt's driver (linked into the server)
// already registers the options llc shares with it (-o, -mtriple, -O0..-O3,
// -pass-remarks-*, -disable-verify, the codegen flags of CommandFlags.h), so
// this entry reads those registered options rather than defining its own
// (a second "-o" would abort at start-up). It compiles as llc-22 does on the
// legacy pass manager: the same target options, function attributes,
// library info and verification, so the objects are byte for byte llc's
// (tests/e2e/CompileServerTest.cpp checks that).
#include "mlgo/server/CompileServer.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/CodeGen/MachineModuleInfo.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LLVMRemarkStreamer.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Remarks/HotnessThresholdParser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetLoweringObjectFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <optional>

using namespace llvm;

namespace mlgo::server {
namespace {

using HotnessOption = cl::opt<std::optional<uint64_t>, false, remarks::HotnessThresholdParser>;

template <typename OptionT> OptionT &registered(const char *name) {
  cl::Option *option = cl::getRegisteredOptions().lookup(name);
  if (!option) {
    WithColor::error(errs(), "llc") << "the compile server has no option -" << name << "\n";
    std::exit(1);
  }
  return *static_cast<OptionT *>(option);
}

// Counts errors instead of exiting at the first, as llc's handler does.
struct ErrorCountingHandler : DiagnosticHandler {
  bool handleDiagnostics(const DiagnosticInfo &info) override {
    if (info.getSeverity() == DS_Error)
      HasErrors = true;
    if (auto *remark = dyn_cast<DiagnosticInfoOptimizationBase>(&info))
      if (!remark->isEnabled())
        return true;
    DiagnosticPrinterRawOStream printer(errs());
    errs() << LLVMContext::getDiagnosticMessagePrefix(info.getSeverity()) << ": ";
    info.print(printer);
    errs() << "\n";
    return true;
  }
};

[[noreturn]] void fail(const Twine &message) {
  WithColor::error(errs(), "llc") << message << "\n";
  std::exit(1);
}

// The positional input: the one argument that is neither an option nor the
// value of an option that takes the next argument.
std::string inputFile(int argc, char **argv) {
  std::string input = "-";
  auto &options = cl::getRegisteredOptions();
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--") {
      if (i + 1 < argc)
        input = argv[i + 1];
      break;
    }
    if (!arg.starts_with("-") || arg == "-") {
      input = arg.str();
      continue;
    }
    if (arg.contains('='))
      continue;
    StringRef name = arg.ltrim('-');
    cl::Option *option = options.lookup(name);
    if (option && option->getValueExpectedFlag() == cl::ValueRequired)
      ++i;
  }
  return input;
}

// Code generation as llc-22 does it (its options already parsed), on the
// module it reads from `input`; or on `inMemory`, the module opt has just
// written to `input` in this same child, as llc would read it back.
int compileToObject(const char *argv0, const std::string &input, Module *inMemory) {
  std::string output = registered<cl::opt<std::string>>("o");
  std::string tripleOverride = registered<cl::opt<std::string>>("mtriple");
  bool noVerify = registered<cl::opt<bool>>("disable-verify");
  char level = '2';
  for (char l : {'0', '1', '2', '3'})
    if (registered<cl::opt<bool>>((std::string("O") + l).c_str()))
      level = l;
  auto optLevel = CodeGenOpt::parseLevel(level);
  if (!optLevel)
    fail("invalid optimization level");

  std::optional<LLVMContext> ownContext;
  LLVMContext &context = inMemory ? inMemory->getContext() : ownContext.emplace();
  if (!inMemory)
    context.setDiscardValueNames(registered<cl::opt<bool>>("discard-value-names"));
  context.setDiagnosticHandler(std::make_unique<ErrorCountingHandler>());
  auto remarksFile = setupLLVMOptimizationRemarks(
      context, registered<cl::opt<std::string>>("pass-remarks-output").getValue(),
      registered<cl::opt<std::string>>("pass-remarks-filter").getValue(),
      registered<cl::opt<std::string>>("pass-remarks-format").getValue(),
      registered<cl::opt<bool>>("pass-remarks-with-hotness"),
      registered<HotnessOption>("pass-remarks-hotness-threshold").getValue());
  if (!remarksFile)
    fail(toString(remarksFile.takeError()));

  std::string cpu = codegen::getCPUStr(), features = codegen::getFeaturesStr();
  std::optional<Reloc::Model> relocModel = codegen::getExplicitRelocModel();
  std::optional<CodeModel::Model> codeModel = codegen::getExplicitCodeModel();
  Triple triple;
  const Target *target = nullptr;
  std::unique_ptr<TargetMachine> machine;
  auto setDataLayout = [&](StringRef irTriple, StringRef) -> std::optional<std::string> {
    triple = Triple(tripleOverride.empty() ? irTriple.str() : Triple::normalize(tripleOverride));
    if (triple.getTriple().empty())
      triple.setTriple(sys::getDefaultTargetTriple());
    std::string error;
    target = TargetRegistry::lookupTarget(codegen::getMArch(), triple, error);
    if (!target)
      fail(error);
    TargetOptions options = codegen::InitTargetOptionsFromCodeGenFlags(triple);
    options.BinutilsVersion = TargetMachine::parseBinutilsVersion("");
    options.MCOptions.AsmVerbose = true;
    options.MCOptions.PreserveAsmComments = true;
    options.MCOptions.MCUseDwarfDirectory = MCTargetOptions::DefaultDwarfDirectory;
    machine.reset(target->createTargetMachine(triple, cpu, features, options, relocModel, codeModel, *optLevel));
    if (!machine)
      fail("cannot create the target machine for " + triple.str());
    return machine->createDataLayout().getStringRepresentation();
  };
  std::unique_ptr<Module> parsed;
  Module *module = inMemory;
  if (inMemory) {
    // What reading it back would change: its name, and the target's data layout.
    module->setModuleIdentifier(input);
    if (std::optional<std::string> layout = setDataLayout(module->getTargetTriple().str(), module->getDataLayoutStr()))
      module->setDataLayout(*layout);
  } else {
    SMDiagnostic parseError;
    parsed = parseIRFile(input, parseError, context, ParserCallbacks(setDataLayout));
    if (!parsed) {
      parseError.print(argv0, WithColor::error(errs(), argv0));
      return 1;
    }
    module = parsed.get();
  }
  if (!tripleOverride.empty())
    module->setTargetTriple(Triple(Triple::normalize(tripleOverride)));
  if (!codeModel)
    if (std::optional<CodeModel::Model> irModel = module->getCodeModel())
      machine->setCodeModel(*irModel);
  if (std::optional<uint64_t> threshold = codegen::getExplicitLargeDataThreshold())
    machine->setLargeDataThreshold(*threshold);
  if (codegen::getFloatABIForCalls() != FloatABI::Default)
    machine->Options.FloatABIType = codegen::getFloatABIForCalls();

  if (output.empty())
    fail("the compile server's llc needs -o");
  std::error_code ec;
  bool binary = codegen::getFileType() != CodeGenFileType::AssemblyFile;
  ToolOutputFile out(output, ec, binary ? sys::fs::OF_None : sys::fs::OF_TextWithCRLF);
  if (ec)
    fail("'" + output + "': " + ec.message());
  machine->Options.ObjectFilenameForDebug = out.outputFilename();
  machine->Options.VerifyArgABICompliance = 0;

  TargetLibraryInfoImpl libraryInfo(module->getTargetTriple());
  if (registered<cl::opt<bool>>("disable-simplify-libcalls"))
    libraryInfo.disableAllFunctions();
  // opt's verifier has just checked a module in memory (its pipeline ends
  // with it, before the bitcode writer).
  if (!noVerify && !inMemory && verifyModule(*module, &errs()))
    fail("'" + input + "': input module cannot be verified");
  codegen::setFunctionAttributes(cpu, features, *module);

  legacy::PassManager passes;
  passes.add(new TargetLibraryInfoWrapperPass(libraryInfo));
  SmallVector<char, 0> buffer;
  std::unique_ptr<raw_svector_ostream> buffered;
  raw_pwrite_stream *os = &out.os();
  if (binary && !out.os().supportsSeeking()) {
    buffered = std::make_unique<raw_svector_ostream>(buffer);
    os = buffered.get();
  }
  auto *moduleInfo = new MachineModuleInfoWrapperPass(machine.get());
  bool mcErrors = false;
  moduleInfo->getMMI().getContext().setDiagnosticHandler(
      [&](const SMDiagnostic &diagnostic, bool, const SourceMgr &, std::vector<const MDNode *> &) {
        WithColor::error(errs(), argv0) << diagnostic.getMessage() << '\n';
        mcErrors = true;
      });
  if (machine->addPassesToEmitFile(passes, *os, nullptr, codegen::getFileType(), noVerify, moduleInfo))
    if (!mcErrors)
      fail("target does not support generation of this file type");
  const_cast<TargetLoweringObjectFile *>(machine->getObjFileLowering())
      ->Initialize(moduleInfo->getMMI().getContext(), *machine);
  passes.run(*module);
  if (context.getDiagHandlerPtr()->HasErrors || mcErrors)
    return 1;
  if (buffered)
    out.os() << buffer;
  out.keep();
  if (*remarksFile)
    (*remarksFile)->keep();
  return 0;
}

int llcMain(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "llc (mlgo-compile-server)\n");
  return compileToObject(argv[0], inputFile(argc, argv), nullptr);
}

} // namespace

ToolEntry llcEntry() { return llcMain; }

int llcOnModule(Module &module, int argc, char **argv) {
  // opt's command line was parsed in this process: llc's is parsed over it,
  // as a second one (the options the two share take llc's values).
  cl::ResetAllOptionOccurrences();
  if (!cl::ParseCommandLineOptions(argc, argv, "llc (mlgo-compile-server)\n", &errs()))
    return 1;
  return compileToObject(argv[0], inputFile(argc, argv), &module);
}

} // namespace mlgo::server

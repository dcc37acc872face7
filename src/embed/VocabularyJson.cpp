#include "mlgo/embed/VocabularyJson.h"

#include "mlgo/support/PathUtil.h"

#include "llvm/Support/JSON.h"

#include <nlohmann/json.hpp>

#include <set>

namespace mlgo {
namespace {

// MachineOperand kinds other than registers, as MIR2Vec names its
// CommonOperands keys (LLVM 22: MO_Immediate first).
const std::set<std::string> &commonOperandNames() {
  static const std::set<std::string> names = {"Immediate",       "CImmediate",        "FPImmediate",  "MBB",
                                              "FrameIndex",      "ConstantPoolIndex", "TargetIndex",  "JumpTableIndex",
                                              "ExternalSymbol",  "GlobalAddress",     "BlockAddress", "RegisterMask",
                                              "RegisterLiveOut", "Metadata",          "MCSymbol",     "CFIIndex",
                                              "IntrinsicID",     "Predicate",         "ShuffleMask",  "LaneMask"};
  return names;
}

llvm::Expected<VocabularyLayout> irLayout(const TripletData &data, const std::string &entityFile) {
  static const std::set<std::string> operands = {"Function", "Pointer", "Constant", "Variable"};
  VocabularyLayout layout;
  layout.Mode = EmbeddingMode::LLVM;
  layout.Sections = {"Opcodes", "Types", "Arguments", "Predicates"};
  size_t perSection[4] = {};
  for (llvm::StringRef name : data.Entities) {
    unsigned section = name.starts_with("FCMP_") || name.starts_with("ICMP_") ? 3
                       : operands.count(name.str())                           ? 2
                       : name.ends_with("Ty")                                 ? 1
                                                                              : 0;
    layout.Entries.push_back({section, name.str()});
    ++perSection[section];
  }
  // IR2Vec rejects an empty Opcodes, Types or Arguments section ("dimension
  // ... is zero") and takes a vocabulary without Predicates.
  static const char *const Members[] = {"an opcode", "a type (<name>Ty)",
                                        "an argument kind (Function, Pointer, "
                                        "Constant, Variable)"};
  for (unsigned section = 0; section < 3; ++section)
    if (!perSection[section])
      return llvm::createStringError("%s: no entity is %s: IR2Vec rejects a vocabulary without %s", entityFile.c_str(),
                                     Members[section], layout.Sections[section].c_str());
  if (!perSection[3])
    layout.Sections.pop_back();
  return layout;
}

llvm::Expected<VocabularyLayout> machineLayout(const TripletData &data, const std::string &entityFile) {
  VocabularyLayout layout;
  layout.Mode = EmbeddingMode::MIR;
  layout.Sections = {"Opcodes", "CommonOperands", "PhysicalRegisters", "VirtualRegisters"};
  const std::vector<std::string> &names = data.Entities;
  size_t firstClass = 0;
  while (firstClass < names.size() && !llvm::StringRef(names[firstClass]).starts_with("PhyReg_"))
    ++firstClass;
  // The common operands start at the last Immediate before the classes, so
  // that an opcode of that name (sorted among the opcodes) stays one.
  size_t firstOperand = firstClass;
  while (firstOperand > 0 && names[firstOperand - 1] != "Immediate")
    --firstOperand;
  auto fail = [&](size_t entity, const std::string &why) {
    return llvm::createStringError("%s: line %zu: '%s': %s; not the MIR2Vec entities llvm-ir2vec-22 entities "
                                   "--mode=mir lists (opcodes, common operands, PhyReg_<class>, VirtReg_<class>)",
                                   entityFile.c_str(), entity + 2, names[entity].c_str(), why.c_str());
  };
  if (firstClass == names.size())
    return llvm::createStringError("%s: VirtReg_ entities without PhyReg_ ones: not MIR2Vec's entities",
                                   entityFile.c_str());
  if (firstOperand == 0)
    return fail(firstClass, "no common operand (Immediate, ...) before the register classes");
  --firstOperand;
  if (firstOperand == 0)
    return fail(0, "no opcode before the common operands");
  for (size_t e = 0; e < names.size(); ++e) {
    llvm::StringRef name = names[e];
    if (e < firstOperand) {
      layout.Entries.push_back({0, name.str()});
    } else if (e < firstClass) {
      if (!commonOperandNames().count(name.str()))
        return fail(e, "not an operand kind MIR2Vec knows, among the common operands");
      layout.Entries.push_back({1, name.str()});
    } else if (name.consume_front("PhyReg_")) {
      if (layout.Entries.back().Section == 3)
        return fail(e, "a physical register class after the virtual ones");
      layout.Entries.push_back({2, name.str()});
    } else if (name.consume_front("VirtReg_")) {
      layout.Entries.push_back({3, name.str()});
    } else {
      return fail(e, "neither PhyReg_<class> nor VirtReg_<class> among the register classes");
    }
  }
  if (layout.Entries.back().Section != 3)
    return llvm::createStringError("%s: no VirtReg_ entity: MIR2Vec rejects a vocabulary without "
                                   "VirtualRegisters",
                                   entityFile.c_str());
  return layout;
}

} // namespace

llvm::Expected<VocabularyLayout> vocabularyLayout(const TripletData &data, llvm::StringRef dir) {
  std::string entityFile = joinPath(dir, "entity2id.txt"), relationFile = joinPath(dir, "relation2id.txt");
  // Each name becomes a JSON key, and JSON text is UTF-8: refused here,
  // before training, rather than when the trained vectors are written.
  for (size_t e = 0; e < data.Entities.size(); ++e)
    if (!llvm::json::isUTF8(data.Entities[e]))
      return llvm::createStringError("%s: line %zu: the entity name is not UTF-8, so it cannot be a vocabulary key",
                                     entityFile.c_str(), e + 2);
  bool machine = false;
  for (llvm::StringRef name : data.Entities)
    machine |= name.starts_with("PhyReg_") || name.starts_with("VirtReg_");
  // Relation 0 is Type for LLVM IR and Next for machine IR (which has no
  // Type): triplets of one mode and entities of the other are a mix-up.
  llvm::StringRef expected = machine ? "Next" : "Type";
  if (!data.Relations.empty() && data.Relations[0] != expected)
    return llvm::createStringError("%s: relation 0 is '%s', but %s holds %s entities, whose relation 0 is '%s'",
                                   relationFile.c_str(), data.Relations[0].c_str(), entityFile.c_str(),
                                   machine ? "MIR2Vec (machine IR)" : "IR2Vec (LLVM IR)", expected.str().c_str());
  if (!machine)
    return irLayout(data, entityFile);
  return machineLayout(data, entityFile);
}

std::string vocabularyJson(const VocabularyLayout &layout, const TransEModel &model) {
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (const std::string &section : layout.Sections)
    vocab[section] = nlohmann::ordered_json::object();
  for (size_t e = 0; e < layout.Entries.size(); ++e) {
    std::vector<double> values(model.Entities.begin() + e * model.Dimension,
                               model.Entities.begin() + (e + 1) * model.Dimension);
    vocab[layout.Sections[layout.Entries[e].Section]][layout.Entries[e].Key] = values;
  }
  return vocab.dump(1) + "\n";
}

} // namespace mlgo

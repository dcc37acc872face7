#include "MachineIr.h"

#include "TestSupport.h"

#include <sstream>

namespace mlgo::test {

std::vector<MachineFunctionFile> machineFunctionFiles(const std::string &bitcode, const std::string &dir) {
  std::string whole = dir + "/module.mir";
  mustRun("llc-22 -stop-before=greedy " + quote(bitcode) + " -o " + quote(whole));
  // The YAML stream: "--- |", the IR, "..."; then per function "---", its
  // body, "...".
  std::istringstream in(readFile(whole));
  std::string line, header;
  std::vector<std::string> bodies;
  bool inHeader = true;
  while (std::getline(in, line)) {
    if (inHeader) {
      header += line + "\n";
      inHeader = line != "...";
      continue;
    }
    if (line == "---")
      bodies.emplace_back();
    if (!bodies.empty())
      bodies.back() += line + "\n";
  }
  std::vector<MachineFunctionFile> out;
  for (const std::string &body : bodies) {
    std::string name;
    std::istringstream fields(body);
    while (std::getline(fields, line))
      if (line.rfind("name:", 0) == 0) {
        name = line.substr(line.find_first_not_of(' ', 5));
        if (name.size() > 1 && name.front() == '\'')
          name = name.substr(1, name.size() - 2);
        break;
      }
    std::string path = dir + "/f" + std::to_string(out.size()) + ".mir";
    writeFile(path, header + body);
    out.push_back({name, path});
  }
  return out;
}

bool hasClasslessRegister(const std::string &mir) {
  for (const char *reg : {"$mxcsr", "$fpcw", "$ssp"})
    if (mir.find(reg) != std::string::npos)
      return true;
  return false;
}

} // namespace mlgo::test

#include "TestSupport.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo::test {

std::string quote(const std::string &text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string tool(const std::string &name) { return std::string(MLGO_BIN_DIR) + "/" + name; }

CommandResult run(const std::string &command, const std::string &cwd, std::chrono::seconds deadline) {
  TempDir capture;
  // timeout(1) runs the command in a process group of its own and kills the
  // whole group at the deadline (SIGTERM, then SIGKILL 10 s later). A
  // command killed by a signal is reported as before (128 + the signal).
  std::string full = (cwd.empty() ? "" : "cd " + quote(cwd) + " && ") + "timeout -k 10 " +
                     std::to_string(deadline.count()) + " /bin/sh -c " + quote(command) + " >" +
                     quote(capture / "out") + " 2>" + quote(capture / "err") + " </dev/null";
  auto start = std::chrono::steady_clock::now();
  int status = std::system(full.c_str());
  bool late = std::chrono::steady_clock::now() - start >= deadline;
  CommandResult result;
  result.ExitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.Out = readFile(capture / "out");
  result.Err = readFile(capture / "err");
  if (late)
    result.Err += "\n[test] killed: still running after " + std::to_string(deadline.count()) + " s: " + command + "\n";
  return result;
}

void mustRun(const std::string &command, const std::string &cwd) {
  CommandResult r = run(command, cwd);
  ASSERT_EQ(r.ExitCode, 0) << "command failed: " << command << "\nstderr:\n" << r.Err << "\nstdout:\n" << r.Out;
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "mlgo-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("mkdtemp failed");
  Path = pattern;
}

TempDir::~TempDir() {
  if (!std::getenv("MLGO_KEEP_TEST_DIRS")) {
    std::error_code ec;
    fs::remove_all(Path, ec);
  }
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void writeFile(const std::string &path, const std::string &data) {
  fs::path p(path);
  if (p.has_parent_path())
    fs::create_directories(p.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

bool exists(const std::string &path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

std::set<std::string> listTree(const std::string &dir, bool includeHidden) {
  std::set<std::string> out;
  if (!fs::exists(dir))
    return out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = fs::relative(it->path(), dir).string();
    if (!includeHidden && it->path().filename().string().rfind(".mlgo-corpus", 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    out.insert(rel + (it->is_directory() ? "/" : ""));
  }
  return out;
}

std::string writeScript(const std::string &path, const std::string &body) {
  writeFile(path, body);
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

size_t processesMentioning(const std::string &needle) {
  size_t count = 0;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == ::getpid())
      continue;
    if (readFile(entry.path().string() + "/cmdline").find(needle) != std::string::npos)
      ++count;
  }
  return count;
}

std::vector<std::string> childCommandLines(int parent) {
  std::vector<std::string> lines;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::string stat = readFile(entry.path().string() + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 4 > stat.size() || stat[close + 2] == 'Z')
      continue;
    if (std::atoi(stat.c_str() + close + 4) != parent)
      continue;
    std::string line = readFile(entry.path().string() + "/cmdline");
    for (char &c : line)
      if (c == '\0')
        c = ' ';
    lines.push_back(line);
  }
  return lines;
}

void compileC(const std::string &source, const std::string &object, const std::string &flags) {
  std::string src = object + ".src.c";
  writeFile(src, source);
  fs::create_directories(fs::path(object).parent_path());
  mustRun(std::string(MLGO_CLANG) + " " + flags + " -Xclang -fembed-bitcode=all -c " + quote(src) + " -o " +
          quote(object));
  fs::remove(src);
}

std::string twoDecimals(const std::vector<double> &values) {
  std::string out;
  char buf[64];
  for (double v : values) {
    std::snprintf(buf, sizeof(buf), "%.2f", v);
    out += std::string(out.empty() ? "" : " ") + buf;
  }
  return out;
}

} // namespace mlgo::test

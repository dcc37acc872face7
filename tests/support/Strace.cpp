#include "Strace.h"

#include <cctype>
#include <map>

namespace mlgo::test {
namespace {

// The text between the quotes of the string literal starting at `at` (a
// '"'); `at` ends after the closing quote (and a "..." truncation mark).
std::string takeString(const std::string &text, size_t &at) {
  size_t begin = ++at;
  while (at < text.size() && text[at] != '"')
    at += text[at] == '\\' ? 2 : 1;
  std::string body = text.substr(begin, at - begin);
  ++at;
  if (text.compare(at, 3, "...") == 0)
    at += 3;
  return body;
}

// Splits strace's argument list at top-level commas: commas inside strings,
// brackets, braces and <path> decorations do not count.
std::vector<std::string> splitArguments(const std::string &args) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (size_t i = 0; i < args.size();) {
    char c = args[i];
    if (c == '"') {
      size_t start = i;
      takeString(args, i);
      current += args.substr(start, i - start);
      continue;
    }
    if (c == '<') { // a -y decoration: '>' inside a path is escaped (\76)
      size_t close = args.find('>', i);
      close = close == std::string::npos ? args.size() : close + 1;
      current += args.substr(i, close - i);
      i = close;
      continue;
    }
    if (c == '[' || c == '{' || c == '(')
      ++depth;
    else if (c == ']' || c == '}' || c == ')')
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
      i += args.compare(i, 2, ", ") == 0 ? 2 : 1;
      continue;
    }
    current += c;
    ++i;
  }
  if (!current.empty() || !out.empty())
    out.push_back(current);
  return out;
}

// "3</a/b>" -> "/a/b"; "AT_FDCWD</cwd>" -> "/cwd"; no decoration -> "".
std::string decoration(const std::string &arg) {
  size_t open = arg.find('<');
  if (open == std::string::npos || arg.back() != '>')
    return "";
  return decodeStraceString(arg.substr(open + 1, arg.size() - open - 2));
}

// A path argument ("...") made absolute against the directory argument's decoration.
std::string pathArgument(const std::string &arg, const std::string &directory) {
  if (arg.size() < 2 || arg.front() != '"')
    return "";
  size_t at = 0;
  std::string path = decodeStraceString(takeString(arg, at));
  if (!path.empty() && path.front() != '/' && !directory.empty())
    path = directory + "/" + path;
  return path;
}

void fillDerived(TracedCall &call) {
  const std::vector<std::string> &a = call.Args;
  if (!a.empty())
    call.FdPath = decoration(a[0]);
  if (call.Name == "write" && a.size() >= 2 && a[1].size() >= 2 && a[1].front() == '"') {
    size_t at = 0;
    call.Data = decodeStraceString(takeString(a[1], at));
  }
  if ((call.Name == "rename" || call.Name == "link") && a.size() >= 2) {
    call.From = pathArgument(a[0], "");
    call.To = pathArgument(a[1], "");
  }
  if ((call.Name == "renameat" || call.Name == "renameat2" || call.Name == "linkat") && a.size() >= 4) {
    // linkat(fd, "", ..., AT_EMPTY_PATH) names the descriptor's file.
    call.From = a[1] == "\"\"" ? decoration(a[0]) : pathArgument(a[1], decoration(a[0]));
    call.To = pathArgument(a[3], decoration(a[2]));
  }
}

// "= 0", "= -1 EIO (Input/output error)", "= ?" -> the number (or -1).
long long parseResult(const std::string &text) {
  size_t eq = text.rfind(" = ");
  if (eq == std::string::npos)
    return -1;
  try {
    return std::stoll(text.substr(eq + 3), nullptr, 0);
  } catch (const std::exception &) {
    return -1;
  }
}

// The ") = RESULT" that closes a call's arguments: the last ')' before the last " = ".
size_t argumentsEnd(const std::string &text) {
  size_t eq = text.rfind(" = ");
  if (eq == std::string::npos)
    return std::string::npos;
  return text.rfind(')', eq);
}

} // namespace

std::string decodeStraceString(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    switch (c) {
    case 'n':
      out += '\n';
      break;
    case 't':
      out += '\t';
      break;
    case 'r':
      out += '\r';
      break;
    case 'v':
      out += '\v';
      break;
    case 'f':
      out += '\f';
      break;
    case 'x': {
      int value = 0, digits = 0;
      while (digits < 2 && i + 1 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1]))) {
        value = value * 16 + std::stoi(std::string(1, text[++i]), nullptr, 16);
        ++digits;
      }
      out += static_cast<char>(value);
      break;
    }
    default:
      if (c >= '0' && c <= '7') {
        int value = c - '0', digits = 1;
        while (digits < 3 && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '7') {
          value = value * 8 + (text[++i] - '0');
          ++digits;
        }
        out += static_cast<char>(value);
      } else {
        out += c; // \" \\ and anything else quoted as itself
      }
    }
  }
  return out;
}

std::vector<TracedCall> parseStrace(const std::string &trace) {
  std::vector<TracedCall> calls;
  std::map<pid_t, size_t> unfinished; // pid -> index in calls
  std::map<pid_t, std::string> unfinishedText;
  size_t position = 0;
  size_t begin = 0;
  while (begin < trace.size()) {
    size_t end = trace.find('\n', begin);
    if (end == std::string::npos)
      end = trace.size();
    std::string line = trace.substr(begin, end - begin);
    begin = end + 1;
    ++position;
    if (line.empty())
      continue;
    size_t space = line.find(' ');
    if (space == std::string::npos || line.find_first_not_of("0123456789") != space) {
      ADD_FAILURE() << "strace line without a pid: " << line;
      continue;
    }
    pid_t pid = std::stoi(line.substr(0, space));
    std::string rest = line.substr(space + 1);
    while (!rest.empty() && rest.front() == ' ')
      rest.erase(0, 1);
    if (rest.rfind("---", 0) == 0 || rest.rfind("+++", 0) == 0)
      continue; // a signal or an exit
    // strace let go of the thread inside this call (it was exiting, or
    // strace could not tell the call: "???"): the call never returned.
    const std::string detached = " <detached ...>";
    bool wasDetached =
        rest.size() >= detached.size() && rest.compare(rest.size() - detached.size(), detached.size(), detached) == 0;
    if (wasDetached) {
      rest.erase(rest.size() - detached.size());
      if (rest.rfind("\?\?\?(", 0) == 0)
        continue;
    }
    std::string text;
    TracedCall *call = nullptr;
    if (rest.rfind("<... ", 0) == 0) { // "<... write resumed>rest) = 3"
      size_t resumed = rest.find(" resumed>");
      auto it = unfinished.find(pid);
      if (resumed == std::string::npos || it == unfinished.end()) {
        ADD_FAILURE() << "strace: a resumed call that never started: " << line;
        continue;
      }
      call = &calls[it->second];
      text = unfinishedText[pid] + rest.substr(resumed + 9);
      unfinished.erase(it);
      unfinishedText.erase(pid);
    } else {
      size_t paren = rest.find('(');
      if (paren == std::string::npos) {
        ADD_FAILURE() << "strace line without a call: " << line;
        continue;
      }
      calls.emplace_back();
      call = &calls.back();
      call->Pid = pid;
      call->Name = rest.substr(0, paren);
      call->Start = position;
      const std::string marker = " <unfinished ...>";
      if (rest.size() >= marker.size() && rest.compare(rest.size() - marker.size(), marker.size(), marker) == 0) {
        unfinished[pid] = calls.size() - 1;
        unfinishedText[pid] = rest.substr(0, rest.size() - marker.size());
        call->End = position; // until it resumes
        continue;
      }
      text = rest;
    }
    call->End = position;
    size_t open = text.find('(');
    size_t close = argumentsEnd(text);
    if (close == std::string::npos || close < open) {
      if (!wasDetached && text.find(") = ?") == std::string::npos && text.rfind(" = ?") == std::string::npos)
        ADD_FAILURE() << "strace: cannot parse: " << line;
      close = text.rfind(')');
    }
    call->Args = splitArguments(text.substr(open + 1, (close == std::string::npos ? text.size() : close) - open - 1));
    call->Result = parseResult(text);
    call->Finished = !wasDetached && text.rfind(" = ?") == std::string::npos;
    fillDerived(*call);
  }
  // Calls a process was inside when it was killed or exited.
  for (auto &[pid, index] : unfinished) {
    TracedCall &call = calls[index];
    std::string text = unfinishedText[pid];
    call.Args = splitArguments(text.substr(text.find('(') + 1));
    call.Finished = false;
    call.End = position + 1;
    fillDerived(call);
  }
  return calls;
}

bool straceWorks(std::string &why) {
  CommandResult r = run("strace -f -qq -e trace=getpid -o /dev/null /bin/true");
  if (r.ExitCode == 0)
    return true;
  why = "strace cannot trace here (install it with scripts/setup.sh; ptrace must be allowed): exit " +
        std::to_string(r.ExitCode) + ": " + r.Err;
  return false;
}

TraceResult runTraced(const std::string &command, const std::vector<std::string> &syscalls, const std::string &cwd,
                      const std::string &straceOptions) {
  TempDir scratch;
  std::string list;
  for (const std::string &s : syscalls)
    list += (list.empty() ? "" : ",") + s;
  std::string traceFile = scratch / "trace";
  // --seccomp-bpf: only the traced calls stop the processes, so a traced
  // compiler runs at nearly full speed. -s: whole write buffers, never "...".
  std::string traced = "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -y --seccomp-bpf "
                       "-s 16777216 -e signal=none " +
                       straceOptions + " -e trace=" + list + " -o " + quote(traceFile) + " /bin/sh -c " +
                       quote(command);
  TraceResult result;
  result.Run = run(traced, cwd);
  result.Raw = readFile(traceFile);
  result.Calls = parseStrace(result.Raw);
  return result;
}

std::vector<TracedCall> callsNamed(const std::vector<TracedCall> &calls, const std::vector<std::string> &names) {
  std::vector<TracedCall> out;
  for (const TracedCall &c : calls)
    for (const std::string &n : names)
      if (c.Name == n)
        out.push_back(c);
  return out;
}

bool isSync(const TracedCall &call) {
  return call.Name == "fsync" || call.Name == "fdatasync" || call.Name == "syncfs" || call.Name == "sync";
}

} // namespace mlgo::test

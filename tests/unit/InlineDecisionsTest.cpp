// The inline decisions file (export-decisions writes it, the inliner plugin's
// decisions:FILE reads it inside the user's compiler): lines round-trip, and
// every hostile line is an error naming the file and the line, never an
// exception; the reader refuses what is not a regular file without waiting
// on it; and a compile finds its module by source_filename, module name or
// an unambiguous path suffix.
#include "mlgo/policy/InlineDecisions.h"

#include "support/TestSupport.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

using namespace mlgo;
using namespace mlgo::test;

namespace {

using Json = nlohmann::ordered_json;

const std::string Path = "dir/inline_decisions.jsonl";

Json decision(const std::string &caller, const std::string &callee, Json site, Json inl) {
  return Json{{"caller", caller}, {"callee", callee}, {"site", std::move(site)}, {"inline", std::move(inl)}};
}

Json moduleLine(const std::string &module, const std::string &source, Json decisions = Json::array()) {
  return Json{{"module", module}, {"source_filename", source}, {"decisions", std::move(decisions)}};
}

std::string lines(const std::vector<Json> &values) {
  std::string text;
  for (const Json &v : values)
    text += v.dump() + "\n";
  return text;
}

// The error parseInlineDecisions gives for `text`; it must name the file.
std::string parseError(const std::string &text, const InlineDecisionsLimits &limits = {}) {
  auto parsed = parseInlineDecisions(text, Path, limits);
  if (parsed) {
    ADD_FAILURE() << "accepted: " << text.substr(0, 200);
    return "";
  }
  std::string message = llvm::toString(parsed.takeError());
  EXPECT_NE(message.find(Path), std::string::npos) << message;
  return message;
}

// `text` is refused with an error naming the file, "line N" and `phrase`.
void expectLineError(const std::string &text, size_t line, const std::string &phrase,
                     const InlineDecisionsLimits &limits = {}) {
  std::string message = parseError(text, limits);
  EXPECT_NE(message.find(Path + " line " + std::to_string(line) + ":"), std::string::npos)
      << message << "\ninput: " << text.substr(0, 200);
  EXPECT_NE(message.find(phrase), std::string::npos) << message << "\ninput: " << text.substr(0, 200);
}

ModuleDecisions sampleModule() {
  ModuleDecisions m;
  m.Module = "lib/lapi.o";
  m.SourceFileName = "../src/lapi.c";
  m.Decisions = {{"lua_call", "luaD_call", 0, true},
                 {"lua_call", "luaD_call", 3, false},
                 {"_ZN1A1fEv", "_ZN1B1gEi", 18446744073709551615ull, true},
                 {"main", "", 0, false}};
  return m;
}

void expectSameModules(const std::vector<ModuleDecisions> &a, const std::vector<ModuleDecisions> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].Module, b[i].Module);
    EXPECT_EQ(a[i].SourceFileName, b[i].SourceFileName);
    ASSERT_EQ(a[i].Decisions.size(), b[i].Decisions.size()) << a[i].Module;
    for (size_t j = 0; j < a[i].Decisions.size(); ++j) {
      EXPECT_EQ(a[i].Decisions[j].key(), b[i].Decisions[j].key()) << a[i].Module << " decision " << j;
      EXPECT_EQ(a[i].Decisions[j].Inline, b[i].Decisions[j].Inline) << a[i].Module << " decision " << j;
    }
  }
}

TEST(InlineDecisions, AWellFormedFileRoundTripsThroughItsLines) {
  ModuleDecisions empty;
  empty.Module = "b.o";
  std::vector<ModuleDecisions> modules{sampleModule(), empty};
  std::string text;
  for (const ModuleDecisions &m : modules)
    text += inlineDecisionsLine(m);
  auto parsed = parseInlineDecisions(text, Path);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  expectSameModules(*parsed, modules);
  // Written back, the same bytes.
  std::string again;
  for (const ModuleDecisions &m : *parsed)
    again += inlineDecisionsLine(m);
  EXPECT_EQ(again, text);
}

TEST(InlineDecisions, ALineIsOneCompactObjectInSchemaOrder) {
  ModuleDecisions m;
  m.Module = "lapi.o";
  m.SourceFileName = "src/lapi.c";
  m.Decisions = {{"f", "g", 0, false}};
  EXPECT_EQ(inlineDecisionsLine(m), "{\"module\":\"lapi.o\",\"source_filename\":\"src/lapi.c\",\"decisions\":"
                                    "[{\"caller\":\"f\",\"callee\":\"g\",\"site\":0,\"inline\":false}]}\n");
  ModuleDecisions none;
  none.Module = "x.o";
  EXPECT_EQ(inlineDecisionsLine(none), "{\"module\":\"x.o\",\"source_filename\":\"\",\"decisions\":[]}\n");
}

TEST(InlineDecisions, ANameThatIsNotUtf8IsWrittenAsValidJson) {
  ModuleDecisions m;
  m.Module = "m.o";
  m.Decisions = {{"f\xff\xfe", "g", 0, true}};
  std::string line = inlineDecisionsLine(m);
  EXPECT_NE(line.find("\xEF\xBF\xBD"), std::string::npos) << line; // U+FFFD
  auto parsed = parseInlineDecisions(line, Path);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  ASSERT_EQ(parsed->size(), 1u);
  ASSERT_EQ((*parsed)[0].Decisions.size(), 1u);
  EXPECT_EQ((*parsed)[0].Decisions[0].Caller.substr(0, 1), "f");
  EXPECT_NE((*parsed)[0].Decisions[0].Caller, "f\xff\xfe");
}

TEST(InlineDecisions, BlankLinesAreSkippedAndStillCounted) {
  std::string a = moduleLine("a.o", "a.c", Json::array({decision("f", "g", 0, true)})).dump();
  std::string b = moduleLine("b.o", "b.c").dump();
  // Blank and whitespace-only lines anywhere; the last line without '\n'.
  auto parsed = parseInlineDecisions("\n" + a + "\n\n   \t\n" + b, Path);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].Module, "a.o");
  ASSERT_EQ((*parsed)[0].Decisions.size(), 1u);
  EXPECT_TRUE((*parsed)[0].Decisions[0].Inline);
  EXPECT_EQ((*parsed)[1].Module, "b.o");
  EXPECT_EQ((*parsed)[1].SourceFileName, "b.c");
  // A blank line still counts: the bad line after them is line 6.
  expectLineError("\n" + a + "\n\n   \t\n" + b + "\n[]\n", 6, "not a JSON object");
  // An empty file, or only blank lines: no modules.
  auto blank = parseInlineDecisions("\n \n\n", Path);
  ASSERT_TRUE(static_cast<bool>(blank)) << llvm::toString(blank.takeError());
  EXPECT_TRUE(blank->empty());
  auto empty = parseInlineDecisions("", Path);
  ASSERT_TRUE(static_cast<bool>(empty)) << llvm::toString(empty.takeError());
  EXPECT_TRUE(empty->empty());
}

TEST(InlineDecisions, ModulesWithoutASourceFileNameMayBeMany) {
  auto parsed = parseInlineDecisions(lines({moduleLine("a.o", ""), moduleLine("b.o", "")}), Path);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->size(), 2u);
}

TEST(InlineDecisions, HostileLinesAreErrorsNamingFileAndLine) {
  std::string good = moduleLine("good.o", "good.c", Json::array({decision("f", "g", 0, true)})).dump() + "\n";
  // Line 2 is `bad`.
  auto after = [&](const std::string &bad) { return good + bad + "\n"; };
  auto withModuleKey = [&](const char *key, Json value) {
    Json m = moduleLine("m.o", "m.c", Json::array({decision("f", "g", 0, true)}));
    m[key] = std::move(value);
    return after(m.dump());
  };
  auto withDecisionKey = [&](const char *key, Json value) {
    Json d = decision("f", "g", 0, true);
    d[key] = std::move(value);
    return after(moduleLine("m.o", "m.c", Json::array({decision("h", "i", 0, false), d})).dump());
  };

  // Not JSON, or not one JSON value.
  expectLineError(after("{\"module\": "), 2, "not JSON");
  expectLineError(after("not json"), 2, "not JSON");
  expectLineError(after(moduleLine("m.o", "m.c").dump() + " " + moduleLine("n.o", "n.c").dump()), 2, "not JSON");
  // Not an object.
  expectLineError(after("[1, 2]"), 2, "not a JSON object");
  expectLineError(after("null"), 2, "not a JSON object");
  expectLineError(after("\"a.o\""), 2, "not a JSON object");
  expectLineError(after(moduleLine("m.o", "m.c", Json::array({7})).dump()), 2, "decision 0: not a JSON object");

  // Missing keys.
  for (const char *key : {"module", "source_filename", "decisions"}) {
    Json m = moduleLine("m.o", "m.c");
    m.erase(key);
    expectLineError(after(m.dump()), 2, std::string("key '") + key + "' is missing");
  }
  for (const char *key : {"caller", "callee", "site", "inline"}) {
    Json d = decision("f", "g", 0, true);
    d.erase(key);
    expectLineError(after(moduleLine("m.o", "m.c", Json::array({d})).dump()), 2,
                    std::string("decision 0: key '") + key + "' is missing");
  }
  // Extra keys, at module level and in a decision.
  expectLineError(withModuleKey("extra", 1), 2, "key 'extra' is not a key of a module's decisions");
  expectLineError(withDecisionKey("loc", "m.c:1:2"), 2, "decision 1: key 'loc' is not a key of a decision");

  // Wrong types.
  expectLineError(withDecisionKey("site", -1), 2, "'site' must be a non-negative integer");
  expectLineError(withDecisionKey("site", 1.5), 2, "'site' must be a non-negative integer");
  expectLineError(withDecisionKey("site", 1.0), 2, "'site' must be a non-negative integer");
  expectLineError(withDecisionKey("site", "1"), 2, "'site' must be a non-negative integer");
  expectLineError(withDecisionKey("site", nullptr), 2, "'site' must be a non-negative integer");
  // Past uint64_t: JSON reads it as a float.
  expectLineError(after("{\"module\":\"m.o\",\"source_filename\":\"m.c\",\"decisions\":[{\"caller\":\"f\","
                        "\"callee\":\"g\",\"site\":18446744073709551616,\"inline\":true}]}"),
                  2, "'site' must be a non-negative integer");
  expectLineError(withDecisionKey("inline", 1), 2, "'inline' must be true or false");
  expectLineError(withDecisionKey("inline", "true"), 2, "'inline' must be true or false");
  expectLineError(withDecisionKey("inline", nullptr), 2, "'inline' must be true or false");
  expectLineError(withDecisionKey("caller", 7), 2, "'caller' and 'callee' must be strings");
  expectLineError(withDecisionKey("caller", nullptr), 2, "'caller' and 'callee' must be strings");
  expectLineError(withDecisionKey("callee", Json::array()), 2, "'caller' and 'callee' must be strings");
  expectLineError(withModuleKey("module", ""), 2, "'module' must be a non-empty string");
  expectLineError(withModuleKey("module", 3), 2, "'module' must be a non-empty string");
  expectLineError(withModuleKey("source_filename", nullptr), 2, "'source_filename' must be a string");
  expectLineError(withModuleKey("decisions", Json::object()), 2, "'decisions' must be an array");
  expectLineError(withModuleKey("decisions", nullptr), 2, "'decisions' must be an array");

  // Listed twice.
  expectLineError(good + good, 2, "module good.o is already on line 1");
  expectLineError(after(moduleLine("other.o", "good.c").dump()), 2, "source file good.c is already on line 1");
  expectLineError(after(moduleLine("m.o", "m.c",
                                   Json::array({decision("f", "g", 0, true), decision("f", "g", 1, true),
                                                decision("f", "g", 0, false)}))
                            .dump()),
                  2, "decision 2: the site (caller 'f', callee 'g', site 0) is listed twice");
  // The same (caller, callee, site) in two modules is two sites.
  auto twoModules = parseInlineDecisions(lines({moduleLine("a.o", "a.c", Json::array({decision("f", "g", 0, true)})),
                                                moduleLine("b.o", "b.c", Json::array({decision("f", "g", 0, false)}))}),
                                         Path);
  ASSERT_TRUE(static_cast<bool>(twoModules)) << llvm::toString(twoModules.takeError());
  EXPECT_EQ(twoModules->size(), 2u);

  // Bytes that are not UTF-8 in a string.
  expectLineError(after("{\"module\": \"m\xff\xfe.o\", \"source_filename\": \"m.c\", \"decisions\": []}"), 2,
                  "not JSON");
  expectLineError(after("{\"module\": \"m.o\", \"source_filename\": \"m.c\", \"decisions\": [{\"caller\": "
                        "\"f\xc3\", \"callee\": \"g\", \"site\": 0, \"inline\": true}]}"),
                  2, "not JSON");
}

TEST(InlineDecisions, LinesAndFilesAreBounded) {
  std::string good = moduleLine("good.o", "good.c").dump() + "\n";
  InlineDecisionsLimits limits;
  limits.MaxLineBytes = good.size() - 1; // the line without its '\n' just fits
  auto fits = parseInlineDecisions(good, Path, limits);
  ASSERT_TRUE(static_cast<bool>(fits)) << llvm::toString(fits.takeError());
  EXPECT_EQ(fits->size(), 1u);
  std::string longer = moduleLine("longer.o", "good.c").dump() + "\n";
  expectLineError(good + longer, 2, "longer than " + std::to_string(limits.MaxLineBytes) + " bytes", limits);
  // A long line is refused before it is parsed (even when it is not JSON).
  expectLineError(good + std::string(limits.MaxLineBytes + 1, 'x') + "\n", 2, "longer than", limits);

  limits = {};
  limits.MaxFileBytes = good.size() * 2;
  auto twoFit = parseInlineDecisions(good + moduleLine("b.o", "b.c").dump() + "\n", Path, limits);
  EXPECT_TRUE(static_cast<bool>(twoFit)) << llvm::toString(twoFit.takeError());
  std::string message = parseError(good + good + good, limits);
  EXPECT_NE(message.find("more than the " + std::to_string(limits.MaxFileBytes)), std::string::npos) << message;
}

TEST(InlineDecisions, ReadsAFileAndBoundsItBeforeReading) {
  TempDir tmp;
  std::string text = inlineDecisionsLine(sampleModule());
  writeFile(tmp / "d.jsonl", text);
  auto read = readInlineDecisions(tmp / "d.jsonl");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  expectSameModules(*read, {sampleModule()});

  InlineDecisionsLimits small;
  small.MaxFileBytes = text.size() - 1;
  auto tooBig = readInlineDecisions(tmp / "d.jsonl", small);
  ASSERT_FALSE(static_cast<bool>(tooBig));
  std::string message = llvm::toString(tooBig.takeError());
  EXPECT_NE(message.find(tmp / "d.jsonl"), std::string::npos) << message;
  EXPECT_NE(message.find("more than the " + std::to_string(small.MaxFileBytes)), std::string::npos) << message;

  // A bad line read from a file names the file and the line.
  writeFile(tmp / "bad.jsonl", text + "{\"module\": 1}\n");
  auto bad = readInlineDecisions(tmp / "bad.jsonl");
  ASSERT_FALSE(static_cast<bool>(bad));
  message = llvm::toString(bad.takeError());
  EXPECT_NE(message.find(tmp / "bad.jsonl" + " line 2:"), std::string::npos) << message;
}

TEST(InlineDecisions, AMissingFileIsAnErrorNamingIt) {
  TempDir tmp;
  auto read = readInlineDecisions(tmp / "none.jsonl");
  ASSERT_FALSE(static_cast<bool>(read));
  std::string message = llvm::toString(read.takeError());
  EXPECT_NE(message.find(tmp / "none.jsonl"), std::string::npos) << message;
}

TEST(InlineDecisions, ADirectoryIsNotAFile) {
  TempDir tmp;
  ASSERT_EQ(::mkdir((tmp / "dir").c_str(), 0700), 0);
  auto read = readInlineDecisions(tmp / "dir");
  ASSERT_FALSE(static_cast<bool>(read));
  std::string message = llvm::toString(read.takeError());
  EXPECT_NE(message.find(tmp / "dir"), std::string::npos) << message;
  EXPECT_NE(message.find("not a regular file"), std::string::npos) << message;
}

TEST(InlineDecisions, AFifoIsRefusedNotWaitedOn) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo.jsonl").c_str(), 0600), 0);
  auto read = readInlineDecisions(tmp / "fifo.jsonl"); // would block in open() without O_NONBLOCK
  ASSERT_FALSE(static_cast<bool>(read));
  std::string message = llvm::toString(read.takeError());
  EXPECT_NE(message.find(tmp / "fifo.jsonl"), std::string::npos) << message;
  EXPECT_NE(message.find("not a regular file"), std::string::npos) << message;
}

ModuleDecisions named(const std::string &module, const std::string &source) {
  ModuleDecisions m;
  m.Module = module;
  m.SourceFileName = source;
  return m;
}

TEST(FindModuleDecisions, TheExactSourceFileNameWinsOverAModuleName) {
  // The first module's name is the second's source_filename.
  std::vector<ModuleDecisions> modules{named("src/a.c", "gen/other.c"), named("lib/a.o", "src/a.c")};
  std::string why;
  const ModuleDecisions *found = findModuleDecisions(modules, "src/a.c", why);
  ASSERT_NE(found, nullptr) << why;
  EXPECT_EQ(found, &modules[1]);
}

TEST(FindModuleDecisions, AModuleNameMatches) {
  std::vector<ModuleDecisions> modules{named("lib/a.o", "../src/a.c"), named("lib/b.o", "../src/b.c")};
  std::string why;
  const ModuleDecisions *found = findModuleDecisions(modules, "lib/b.o", why);
  ASSERT_NE(found, nullptr) << why;
  EXPECT_EQ(found, &modules[1]);
  // A module name wins over a path suffix of another module's source file.
  std::vector<ModuleDecisions> suffixToo{named("x.o", "../src/a.c"), named("a.c", "")};
  found = findModuleDecisions(suffixToo, "a.c", why);
  ASSERT_NE(found, nullptr) << why;
  EXPECT_EQ(found, &suffixToo[1]);
}

TEST(FindModuleDecisions, APathSuffixMatchesAcrossBuildDirectories) {
  std::vector<ModuleDecisions> modules{named("lib/a.o", "../src/a.c"), named("lib/b.o", "../src/b.c")};
  for (const char *name : {"/home/u/proj/src/a.c", "src/a.c", "./src/a.c", "../../src/a.c", "a.c"}) {
    std::string why;
    const ModuleDecisions *found = findModuleDecisions(modules, name, why);
    ASSERT_NE(found, nullptr) << name << ": " << why;
    EXPECT_EQ(found, &modules[0]) << name;
  }
  // The reverse: the entry's source file is the longer path.
  std::vector<ModuleDecisions> absolute{named("lib/a.o", "/home/u/proj/src/a.c")};
  std::string why;
  EXPECT_EQ(findModuleDecisions(absolute, "../src/a.c", why), &absolute[0]) << why;
}

TEST(FindModuleDecisions, ASuffixMatchesWholeComponentsOnly) {
  std::vector<ModuleDecisions> modules{named("m.o", "b/a.c")};
  std::string why;
  EXPECT_EQ(findModuleDecisions(modules, "ba.c", why), nullptr);
  EXPECT_NE(why.find("no module"), std::string::npos) << why;
  std::vector<ModuleDecisions> longer{named("m.o", "src/ba.c")};
  why.clear();
  EXPECT_EQ(findModuleDecisions(longer, "a.c", why), nullptr);
  EXPECT_NE(why.find("no module"), std::string::npos) << why;
  why.clear();
  EXPECT_EQ(findModuleDecisions(longer, "/x/src/ba.cc", why), nullptr);
  EXPECT_NE(why.find("no module"), std::string::npos) << why;
}

TEST(FindModuleDecisions, SeveralSuffixMatchesAreAmbiguous) {
  std::vector<ModuleDecisions> modules{named("x.o", "x/a.c"), named("y.o", "y/a.c")};
  std::string why;
  EXPECT_EQ(findModuleDecisions(modules, "a.c", why), nullptr);
  EXPECT_NE(why.find("ambiguous"), std::string::npos) << why;
  // A longer name tells them apart.
  why.clear();
  const ModuleDecisions *found = findModuleDecisions(modules, "/p/y/a.c", why);
  ASSERT_NE(found, nullptr) << why;
  EXPECT_EQ(found, &modules[1]);
}

TEST(FindModuleDecisions, NoMatchSaysSo) {
  std::vector<ModuleDecisions> modules{named("lib/a.o", "../src/a.c"), named("n.o", "")};
  std::string why;
  EXPECT_EQ(findModuleDecisions(modules, "src/c.c", why), nullptr);
  EXPECT_NE(why.find("no module"), std::string::npos) << why;
  why.clear();
  EXPECT_EQ(findModuleDecisions({}, "a.c", why), nullptr);
  EXPECT_NE(why.find("no module"), std::string::npos) << why;
  // An empty name matches no empty source_filename.
  why.clear();
  EXPECT_EQ(findModuleDecisions(modules, "", why), nullptr);
  EXPECT_NE(why.find("no module"), std::string::npos) << why;
}

} // namespace

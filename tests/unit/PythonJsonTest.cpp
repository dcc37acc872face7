#include "mlgo/support/PythonJson.h"
#include "mlgo/corpus/CorpusDescription.h"

#include <gtest/gtest.h>

using namespace mlgo;

namespace {

std::string describe(bool thinlto, std::vector<std::string> modules) {
  CorpusDescription d;
  d.Fields["has_thinlto"] = thinlto;
  d.Modules = std::move(modules);
  return d.serialize();
}

TEST(PythonJson, SpecExampleBytes) {
  // corpus-format.md 2.3: the 56-byte manifest.
  const unsigned char expected[] = {0x7b, 0x0a, 0x20, 0x20, 0x22, 0x68, 0x61, 0x73, 0x5f, 0x74, 0x68, 0x69, 0x6e, 0x6c,
                                    0x74, 0x6f, 0x22, 0x3a, 0x20, 0x66, 0x61, 0x6c, 0x73, 0x65, 0x2c, 0x0a, 0x20, 0x20,
                                    0x22, 0x6d, 0x6f, 0x64, 0x75, 0x6c, 0x65, 0x73, 0x22, 0x3a, 0x20, 0x5b, 0x0a, 0x20,
                                    0x20, 0x20, 0x20, 0x22, 0x61, 0x2e, 0x6f, 0x22, 0x0a, 0x20, 0x20, 0x5d, 0x0a, 0x7d};
  EXPECT_EQ(describe(false, {"a.o"}), std::string(reinterpret_cast<const char *>(expected), sizeof(expected)));
}

TEST(PythonJson, SpecTableCases) {
  std::string two = describe(false, {"a.o", "sub/b.o"});
  EXPECT_EQ(two.size(), 71u);
  EXPECT_EQ(two, "{\n  \"has_thinlto\": false,\n  \"modules\": [\n    \"a.o\",\n    \"sub/b.o\"\n  ]\n}");
  EXPECT_EQ(describe(false, {}).size(), 43u);
  EXPECT_EQ(describe(false, {}), "{\n  \"has_thinlto\": false,\n  \"modules\": []\n}");

  CorpusDescription make;
  make.Fields["global_command_override"] = nlohmann::ordered_json::array();
  make.Fields["has_thinlto"] = false;
  EXPECT_EQ(make.serialize().size(), 76u);

  CorpusDescription local;
  local.Fields["global_command_override"] = {"<UNSPECIFIED>"};
  local.Fields["has_thinlto"] = true;
  local.Modules = {"objs/m.o", "objs/b.o"};
  EXPECT_EQ(local.serialize(), "{\n  \"global_command_override\": [\n    \"<UNSPECIFIED>\"\n  ],\n  \"has_thinlto\": "
                               "true,\n  \"modules\": [\n    \"objs/m.o\",\n    \"objs/b.o\"\n  ]\n}");
  EXPECT_EQ(local.serialize().size(), 132u);

  CorpusDescription combined;
  EXPECT_EQ(combined.serialize(), "{\n  \"modules\": []\n}");
}

TEST(PythonJson, StringEscapes) {
  auto str = [](const std::string &s) {
    std::string out;
    appendPythonJsonString(out, s);
    return out;
  };
  EXPECT_EQ(str("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(str("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(str(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(str("\xc3\xa9"), "\"\\u00e9\"");                // é
  EXPECT_EQ(str("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\""); // U+1F600, lowercase hex
  EXPECT_EQ(str("a\xff"
                "b"),
            "\"a\\udcffb\"");                                  // surrogateescape
  EXPECT_EQ(str("\xed\xa0\x80"), "\"\\udced\\udca0\\udc80\""); // an encoded surrogate is invalid UTF-8
  EXPECT_EQ(str("\xc0\xaf"), "\"\\udcc0\\udcaf\"");            // overlong
}

TEST(PythonJson, ParseRestoresSurrogateEscapedBytes) {
  auto json = parsePythonJson("{\"modules\": [\"a\\udcffb\", \"\\ud83d\\ude00\", \"\\u00e9\"]}");
  EXPECT_EQ(json["modules"][0].get<std::string>(), "a\xff"
                                                   "b");
  EXPECT_EQ(json["modules"][1].get<std::string>(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(json["modules"][2].get<std::string>(), "\xc3\xa9");
  // Round trip: what we write we read back byte for byte.
  std::string name = "dir/\xfe\xff.o";
  std::string text;
  appendPythonJsonString(text, name);
  EXPECT_EQ(parsePythonJson(text).get<std::string>(), name);
}

// Seen while writing fuzz/corpus_description.cpp (reproducer in
// fuzz/regressions/corpus_description/): a U+FFFF in the text (the marker
// the parser used internally) next to a surrogate escape was misread:
// "\uffffzz" threw std::invalid_argument out of the parser (validate-corpus
// terminated) and "\uffff41" came back as "A".
TEST(PythonJson, ParseKeepsUFFFFBesideSurrogateEscapes) {
  const std::string fffF = "\xef\xbf\xbf";
  auto json = parsePythonJson("{\"modules\": [\"\\udc80\", \"\\uffffzz\", \"\\uFFFF41\", \"" + fffF +
                              "\", \"\\\\uffff\"],"
                              " \"\\uffff\\udcfe\": 1}");
  ASSERT_EQ(json["modules"].size(), 5u);
  EXPECT_EQ(json["modules"][0].get<std::string>(), "\x80");
  EXPECT_EQ(json["modules"][1].get<std::string>(), fffF + "zz");
  EXPECT_EQ(json["modules"][2].get<std::string>(), fffF + "41");
  EXPECT_EQ(json["modules"][3].get<std::string>(), fffF);
  EXPECT_EQ(json["modules"][4].get<std::string>(), "\\uffff");
  EXPECT_EQ(json[fffF + "\xfe"].get<int>(), 1);
  // What we write from those reads back equal.
  EXPECT_EQ(parsePythonJson(dumpPythonJson(json)), json);
}

TEST(PythonJson, ParseErrorsCarryLineAndColumn) {
  try {
    parsePythonJson("{\n  \"a\": [1,\n}");
    FAIL() << "expected a parse error";
  } catch (const nlohmann::json::parse_error &e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
}

} // namespace

#include "mlgo/extract/Journal.h"
#include "mlgo/support/AtomicFile.h"
#include "mlgo/support/CommandLine.h"
#include "mlgo/support/JsonLinesJournal.h"

#include "support/TestSupport.h"

using namespace mlgo;
using namespace mlgo::test;

namespace {

TEST(AtomicFile, WritesAndReplaces) {
  TempDir dir;
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(dir / "f", "one")));
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(dir / "f", "two")));
  EXPECT_EQ(readFile(dir / "f"), "two");
  EXPECT_EQ(listTree(dir.path()), (std::set<std::string>{"f"})); // no temp left
  llvm::Error e = writeFileAtomically(dir / "no/such/dir/f", "x");
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("no/such/dir"), std::string::npos);
}

TEST(AtomicFile, StagedFilesAppearTogetherOrNotAtAll) {
  TempDir dir;
  writeFile(dir / "stage/.keep", "");
  {
    StagedFiles files(dir / "stage");
    ASSERT_FALSE(static_cast<bool>(files.add(dir / "out/m.bc", "bc")));
    ASSERT_FALSE(static_cast<bool>(files.add(dir / "out/m.cmd", "cmd")));
    EXPECT_FALSE(exists(dir / "out/m.bc")); // nothing visible before commit
    EXPECT_EQ(listTree(dir / "out"), std::set<std::string>{});
    ASSERT_FALSE(static_cast<bool>(files.commit()));
  }
  EXPECT_EQ(readFile(dir / "out/m.bc"), "bc");
  {
    StagedFiles abandoned(dir / "stage");
    ASSERT_FALSE(static_cast<bool>(abandoned.add(dir / "out/n.bc", "bc")));
  }
  EXPECT_FALSE(exists(dir / "out/n.bc"));
  EXPECT_EQ(listTree(dir / "stage"), (std::set<std::string>{".keep"}));
}

// Found by fuzz/journal.cpp (reproducer in fuzz/regressions/journal/): a size or mtime that is not an integer in range
// was converted anyway (a float beyond int64 is undefined behaviour; -1 and
// 1.5 became other numbers), so resume compared against garbage. Such a line
// is not one we wrote: it is skipped like a torn one.
TEST(Journal, SkipsLinesWithOutOfRangeNumbers) {
  TempDir dir;
  const std::string head = R"({"input":"/x/a.o","name":"a","status":"ok","reason":"",)";
  writeFile(dir / "j", head + R"("size":1,"mtime_ns":1.7e21})" + "\n" + head + R"("size":-1,"mtime_ns":5})" + "\n" +
                           head + R"("size":1.5,"mtime_ns":5})" + "\n" + head + R"("size":2,"mtime_ns":-3})" + "\n");
  auto contents = readJournalFile(dir / "j");
  ASSERT_TRUE(static_cast<bool>(contents)) << llvm::toString(contents.takeError());
  auto records = outcomesFromJournal(contents->Records);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].InputSize, 2u);
  EXPECT_EQ(records[0].InputMtimeNs, -3);
}

int parse(CLI::App &app, std::vector<std::string> args) {
  std::vector<char *> argv{const_cast<char *>("tool")};
  for (auto &a : args)
    argv.push_back(a.data());
  auto exit = parseCommandLine(app, static_cast<int>(argv.size()), argv.data());
  return exit ? *exit : -1;
}

TEST(CommandLine, UniquePrefixesAndBothValueForms) {
  CLI::App app{"t", "tool"};
  std::string out, input;
  app.add_option("--output_dir,--output-dir", out);
  app.add_option("--input", input);
  app.add_option("--input_type", input);
  EXPECT_EQ(parse(app, {"--out=x", "--input", "y"}), -1);
  EXPECT_EQ(out, "x");
  EXPECT_EQ(input, "y");
  CLI::App app2{"t", "tool"};
  app2.add_option("--output_dir,--output-dir", out);
  app2.add_option("--input", input);
  app2.add_option("--input_type", input);
  EXPECT_EQ(parse(app2, {"--output-dir", "z"}), -1);
  EXPECT_EQ(out, "z");
  CLI::App app3{"t", "tool"};
  app3.add_option("--input", input);
  app3.add_option("--input_type", input);
  EXPECT_EQ(parse(app3, {"--input=q"}), -1); // an exact name is never ambiguous
  CLI::App app3b{"t", "tool"};
  app3b.add_option("--input", input);
  app3b.add_option("--input_type", input);
  EXPECT_EQ(parse(app3b, {"--inp=q"}), 2); // argparse: could match --input, --input_type
  CLI::App app4{"t", "tool"};
  app4.add_option("--input_a", input);
  app4.add_option("--input_b", input);
  EXPECT_EQ(parse(app4, {"--input_=q"}), 2); // ambiguous
  CLI::App app5{"t", "tool"};
  EXPECT_EQ(parse(app5, {"--unknown"}), 2);
}

TEST(CommandLine, BareOptionalValueMeansNone) {
  CLI::App app{"t", "tool"};
  CLI::Option *filter = app.add_option("--cmd_filter")->expected(0, 1);
  std::string out;
  app.add_option("--output_dir", out);
  EXPECT_EQ(parse(app, {"--cmd_filter", "--output_dir=o"}), -1);
  EXPECT_FALSE(optionalValue(filter).has_value());
  CLI::App app2{"t", "tool"};
  CLI::Option *filter2 = app2.add_option("--cmd_filter")->expected(0, 1);
  EXPECT_EQ(parse(app2, {"--cmd_filter=^-O2$"}), -1);
  EXPECT_EQ(optionalValue(filter2).value_or(""), "^-O2$");
}

} // namespace

#include "mlgo/support/Progress.h"

namespace {

TEST(Progress, LineShowsDoneFailedRateAndCounts) {
  mlgo::Progress progress("modules", 4, /*intervalSeconds=*/0);
  progress.advance(true);
  progress.advance(false);
  EXPECT_NE(progress.line().find("2/4 (50%), 1 failed"), std::string::npos) << progress.line();
  EXPECT_EQ(progress.line().find("decisions"), std::string::npos);
  progress.count(120, "decisions");
  EXPECT_NE(progress.line().find(", 120 decisions ("), std::string::npos) << progress.line();
  EXPECT_NE(progress.line().find("ETA "), std::string::npos);
}

} // namespace

#include "mlgo/support/FileDescriptorIo.h"

#include <fcntl.h>
#include <unistd.h>

// readUpTo stops short only at the end of the file, and says -1 on an error.
TEST(FileDescriptorIo, ReadUpTo) {
  mlgo::test::TempDir dir;
  std::string from = dir / "from";
  mlgo::test::writeFile(from, "0123456789abc");
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(in, 0);
  char buffer[10];
  ASSERT_EQ(mlgo::readUpTo(in, buffer, sizeof buffer), 10);
  EXPECT_EQ(std::string(buffer, 10), "0123456789");
  ASSERT_EQ(mlgo::readUpTo(in, buffer, sizeof buffer), 3);
  EXPECT_EQ(std::string(buffer, 3), "abc");
  EXPECT_EQ(mlgo::readUpTo(in, buffer, sizeof buffer), 0) << "at the end";
  ::close(in);
  EXPECT_EQ(mlgo::readUpTo(in, buffer, sizeof buffer), -1) << "closed";
}

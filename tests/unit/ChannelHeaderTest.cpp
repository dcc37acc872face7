#include "mlgo/compile/InteractiveSession.h"

#include <gtest/gtest.h>

using namespace mlgo;

namespace {

LogHeader header(const std::string &line) {
  auto parsed = LogHeader::fromLine(line);
  if (!parsed) {
    ADD_FAILURE() << llvm::toString(parsed.takeError());
    return LogHeader{};
  }
  return std::move(*parsed);
}

std::string spec(const std::string &name, const std::string &shape, const std::string &type = "int64_t") {
  return "{\"name\":\"" + name + "\",\"type\":\"" + type + "\",\"port\":0,\"shape\":" + shape + "}";
}

// An inliner stream's header with these features, checked.
ChannelHeaderCheck inlinerHeader(const std::string &features) {
  return checkChannelHeader(
      header("{\"features\":[" + features + "],\"advice\":" + spec("inlining_decision", "[1]") + "}"),
      Problem::Inliner);
}

TEST(InteractiveSession, ChannelHeadersAsTheCompilerSendsThemAreAccepted) {
  ChannelHeaderCheck inliner = inlinerHeader(spec("sz", "[1]") + "," + spec("inlining_default", "[1]"));
  ASSERT_EQ(inliner.Reason, nullptr) << inliner.Detail;
  EXPECT_EQ(inliner.DefaultIndex, std::optional<size_t>(1));
  EXPECT_FALSE(inliner.MaskIndex);

  ChannelHeaderCheck evict = checkChannelHeader(
      header("{\"features\":[" + spec("mask", "[33]") + "],\"advice\":" + spec("index_to_evict", "[1]") + "}"),
      Problem::RegallocEvict);
  ASSERT_EQ(evict.Reason, nullptr) << evict.Detail;
  EXPECT_EQ(evict.MaskIndex, std::optional<size_t>(0));

  ChannelHeaderCheck priority = checkChannelHeader(
      header("{\"features\":[" + spec("li_size", "[1]") + "],\"advice\":" + spec("priority", "[1]", "float") + "}"),
      Problem::RegallocPriority);
  EXPECT_EQ(priority.Reason, nullptr) << priority.Detail;
}

// The host reads the first element of inlining_default from every
// observation and of an eviction reply: a header that declares either with
// no element made it read past the feature or the reply
// (fuzz/regressions/channel_header).
TEST(InteractiveSession, ChannelHeadersWithoutOneElementDecisionsAreRefused) {
  ChannelHeaderCheck noDefault = inlinerHeader(spec("sz", "[1]") + "," + spec("inlining_default", "[0]"));
  ASSERT_NE(noDefault.Reason, nullptr);
  EXPECT_STREQ(noDefault.Reason, "protocol_error");
  EXPECT_NE(noDefault.Detail.find("inlining_default"), std::string::npos) << noDefault.Detail;

  for (const char *shape : {"[0]", "[2]"}) {
    ChannelHeaderCheck evict = checkChannelHeader(
        header("{\"features\":[" + spec("mask", "[33]") + "],\"advice\":" + spec("index_to_evict", shape) + "}"),
        Problem::RegallocEvict);
    ASSERT_NE(evict.Reason, nullptr) << shape;
    EXPECT_STREQ(evict.Reason, "protocol_error");
    EXPECT_NE(evict.Detail.find("index_to_evict"), std::string::npos) << evict.Detail;
  }

  ChannelHeaderCheck notTrailing = inlinerHeader(spec("inlining_default", "[1]") + "," + spec("sz", "[1]"));
  ASSERT_NE(notTrailing.Reason, nullptr);
  EXPECT_STREQ(notTrailing.Reason, "no_default_decision");
}

} // namespace

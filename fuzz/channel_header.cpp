// The interactive channel's stream from the compiler (`.out`: a header,
// context lines and observations, a header again for every stream) as
// harvest-logs hosts it: TrainingLogReader reads the records (fuzzed on its
// own by training_log), then checkChannelHeader decides, for each problem,
// whether the host can answer the stream, and the host reads each
// observation's inlining_default and eviction mask and the first element of
// a reply (runInteractive needs the compiler process; this drives the same
// checks and reads without one).
// Contract: any bytes give an answer, never a crash or an exception; a
// refusal has a known reason and a detail; an accepted header asks for the
// problem's decision as one element, the inliner's ends with a one-element
// inlining_default, an eviction one has a 33-column mask; every element the
// host reads from an observation or a reply lies inside its feature or the
// reply.
#include "FuzzSupport.h"

#include "mlgo/compile/InteractiveSession.h"

#include <cstring>

namespace {

constexpr mlgo::Problem Problems[] = {mlgo::Problem::Inliner, mlgo::Problem::RegallocEvict,
                                      mlgo::Problem::RegallocPriority};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("channel.out", data, size);
  auto opened = mlgo::TrainingLogReader::open(path);
  if (!opened) {
    FUZZ_ERROR_MESSAGE(opened.takeError(), "");
    return 0;
  }
  mlgo::TrainingLogReader &reader = **opened;
  std::optional<mlgo::ChannelHeaderCheck> checks[3];
  while (true) {
    auto event = reader.next();
    if (!event) {
      FUZZ_ERROR_MESSAGE(event.takeError(), "");
      return 0;
    }
    if (*event == mlgo::TrainingLogReader::Event::End)
      return 0;
    const mlgo::LogHeader &header = reader.header();
    if (*event == mlgo::TrainingLogReader::Event::Header) {
      for (size_t p = 0; p < 3; ++p) {
        mlgo::ChannelHeaderCheck check = mlgo::checkChannelHeader(header, Problems[p]);
        checks[p].reset();
        if (check.Reason) {
          FUZZ_CHECK(!std::strcmp(check.Reason, "protocol_error") || !std::strcmp(check.Reason, "no_default_decision"),
                     std::string("an unknown reason ") + check.Reason);
          FUZZ_CHECK(!check.Detail.empty(), "a refusal without a detail");
          continue;
        }
        FUZZ_CHECK(header.Advice && header.Advice->Name == mlgo::decisionName(Problems[p]),
                   "a header accepted that asks for another decision");
        FUZZ_CHECK(header.Advice->elementCount() == 1, "an advice of other than one element accepted");
        FUZZ_CHECK(check.DefaultIndex.has_value() == (Problems[p] == mlgo::Problem::Inliner), "inlining_default");
        FUZZ_CHECK(check.MaskIndex.has_value() == (Problems[p] == mlgo::Problem::RegallocEvict), "mask");
        if (check.DefaultIndex) {
          FUZZ_CHECK(*check.DefaultIndex + 1 == header.Features.size(), "inlining_default is not the last feature");
          FUZZ_CHECK(header.Features[*check.DefaultIndex].elementCount() == 1, "inlining_default of other than one");
        }
        if (check.MaskIndex)
          FUZZ_CHECK(header.Features[*check.MaskIndex].elementCount() == mlgo::EvictionColumns, "a mask not of 33");
        checks[p] = std::move(check);
      }
    } else if (*event == mlgo::TrainingLogReader::Event::Observation) {
      for (size_t p = 0; p < 3; ++p) {
        if (!checks[p])
          continue;
        // What runInteractive reads of the observation and of the reply.
        std::optional<int64_t> defaultDecision;
        if (size_t i = checks[p]->DefaultIndex.value_or(SIZE_MAX); i != SIZE_MAX) {
          llvm::StringRef bytes = reader.feature(i);
          FUZZ_CHECK(bytes.size() >= mlgo::elementSize(header.Features[i].Type),
                     "inlining_default read past its feature");
          defaultDecision = header.Features[i].elementAsInt(bytes, 0);
        }
        if (size_t i = checks[p]->MaskIndex.value_or(SIZE_MAX); i != SIZE_MAX)
          FUZZ_CHECK(reader.feature(i).size() >= mlgo::EvictionColumns * mlgo::elementSize(header.Features[i].Type),
                     "the mask read past its feature");
        mlgo::Query query{reader, *header.Advice, defaultDecision, checks[p]->MaskIndex};
        std::vector<int64_t> valid = mlgo::validEvictionColumns(query);
        FUZZ_CHECK(valid.size() <= mlgo::EvictionColumns, "more valid columns than the mask has");
        std::string reply(header.Advice->byteSize(), '\0');
        FUZZ_CHECK(reply.size() >= mlgo::elementSize(header.Advice->Type), "a reply's first element past its end");
        (void)header.Advice->elementAsInt(reply, 0);
      }
    }
  }
}

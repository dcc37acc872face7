// A corpus' link_order.json (written by extract-ir, read by
// harvest-logs --link with the corpus), readLinkOrder, then the order of a
// harvest's planned modules from it, linkOrder. The corpus has the modules
// a, dir/b, lib/x.a/m.o and c; the harvest plans a, dir/b and c.
// Contract: any bytes give an order or a clear error naming the file, never
// a crash or an exception; a recorded order read back after writeLinkOrder
// is the same; an order holds every planned module once, and nothing else.
#include "FuzzSupport.h"

#include "mlgo/corpus/LinkOrder.h"
#include "mlgo/evaluate/LinkStep.h"

#include <algorithm>
#include <set>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = mlgo::fuzz::writeScratch("corpus/link_order.json", data, size);
  std::string corpus = mlgo::fuzz::scratchDir() + "/corpus";
  auto recorded = mlgo::readLinkOrder(corpus);
  if (!recorded) {
    FUZZ_ERROR_MESSAGE(recorded.takeError(), path);
    return 0;
  }
  FUZZ_CHECK(recorded->has_value(), "a link_order.json that exists read as none");
  const mlgo::RecordedLinkOrder &order = **recorded;

  std::string again = mlgo::fuzz::scratchDir() + "/again";
  std::filesystem::create_directories(again);
  if (llvm::Error e = mlgo::writeLinkOrder(again, order))
    FUZZ_CHECK(false, "cannot write the order back: " + llvm::toString(std::move(e)));
  auto reread = mlgo::readLinkOrder(again);
  if (!reread)
    FUZZ_CHECK(false, "our own link_order.json does not read back: " + llvm::toString(reread.takeError()));
  FUZZ_CHECK(reread->has_value() && (*reread)->InputType == order.InputType && (*reread)->Input == order.Input &&
                 (*reread)->Modules == order.Modules,
             "a link order differs after a round trip");

  static const std::vector<std::string> corpusModules = {"a", "dir/b", "lib/x.a/m.o", "c"};
  static const std::vector<std::string> planned = {"a", "dir/b", "c"};
  auto linked = mlgo::linkOrder(corpusModules, planned, &order.Modules, path);
  if (!linked) {
    FUZZ_ERROR_MESSAGE(linked.takeError(), path);
    return 0;
  }
  std::set<std::string> seen(linked->begin(), linked->end());
  FUZZ_CHECK(seen.size() == linked->size(), "a module linked twice");
  FUZZ_CHECK(seen == std::set<std::string>(planned.begin(), planned.end()), "an order that is not the planned modules");
  // In the recorded order.
  FUZZ_CHECK(std::is_sorted(linked->begin(), linked->end(),
                            [&](const std::string &x, const std::string &y) {
                              return std::find(order.Modules.begin(), order.Modules.end(), x) <
                                     std::find(order.Modules.begin(), order.Modules.end(), y);
                            }),
             "an order other than the recorded one");
  return 0;
}

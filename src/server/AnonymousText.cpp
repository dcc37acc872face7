// Moves the machine code of the server's big shared libraries (libLLVM,
// libclang-cpp, the inliner plugin) into anonymous memory before the first
// fork. Why: fork() copies the page tables of anonymous mappings but not of
// file-backed ones, so every compile child took a page fault for each page
// of libLLVM's code it ran (about 420 per empty-module opt, two thirds of
// its faults, measured with perf -e page-faults), although the server had
// mapped them all. Anonymous code is mapped in the child from the start.
// Where transparent huge pages are allowed (madvise), the copy asks for
// them, so that the children's page tables for code are a few dozen entries.
#include "mlgo/server/CompileServer.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <vector>

namespace mlgo::server {
namespace {

struct CodeMapping {
  uintptr_t Begin, End;
  std::string Path;
};

std::vector<CodeMapping> codeMappingsOf(const std::vector<std::string> &libraryNames) {
  std::vector<CodeMapping> found;
  FILE *maps = std::fopen("/proc/self/maps", "r");
  if (!maps)
    return found;
  char line[4096];
  while (std::fgets(line, sizeof(line), maps)) {
    unsigned long begin, end;
    char perms[5];
    int pathAt = 0;
    if (std::sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &begin, &end, perms, &pathAt) < 3 || !pathAt)
      continue;
    std::string path = line + pathAt;
    while (!path.empty() && (path.back() == '\n' || path.back() == ' '))
      path.pop_back();
    if (std::strcmp(perms, "r-xp") != 0)
      continue;
    std::string file = path.substr(path.rfind('/') + 1);
    for (const std::string &name : libraryNames)
      if (file.rfind(name, 0) == 0)
        found.push_back({begin, end, path});
  }
  std::fclose(maps);
  return found;
}

// Builds an anonymous copy of [begin, end) elsewhere, at the same offset
// within a 2 MiB page (so that huge pages can back it and survive the
// move), and moves it over the original with mremap, which replaces the
// file mapping in one step and carries the copy's page tables along. On
// failure the library is left as it was.
bool moveToAnonymousMemory(const CodeMapping &m) {
  constexpr uintptr_t Huge = 2 << 20;
  size_t size = m.End - m.Begin;
  size_t reserved = size + Huge;
  void *area = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED)
    return false;
  uintptr_t base = reinterpret_cast<uintptr_t>(area);
  uintptr_t copy = (base & ~(Huge - 1)) + (m.Begin & (Huge - 1));
  if (copy < base)
    copy += Huge;
  // Trim the reservation to the copy.
  if (copy > base)
    ::munmap(area, copy - base);
  if (base + reserved > copy + size)
    ::munmap(reinterpret_cast<void *>(copy + size), base + reserved - (copy + size));
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void *>(copy), size, MADV_HUGEPAGE); // advice: 4 KiB pages serve as well
#endif
  std::memcpy(reinterpret_cast<void *>(copy), reinterpret_cast<void *>(m.Begin), size);
  void *moved = MAP_FAILED;
  if (::mprotect(reinterpret_cast<void *>(copy), size, PROT_READ | PROT_EXEC) == 0)
    moved = ::mremap(reinterpret_cast<void *>(copy), size, size, MREMAP_MAYMOVE | MREMAP_FIXED,
                     reinterpret_cast<void *>(m.Begin));
  if (moved == MAP_FAILED) {
    ::munmap(reinterpret_cast<void *>(copy), size);
    return false;
  }
  return true;
}

} // namespace

size_t moveLibraryCodeToAnonymousMemory(const std::vector<std::string> &libraryNames) {
  size_t moved = 0;
  for (const CodeMapping &m : codeMappingsOf(libraryNames))
    if (moveToAnonymousMemory(m))
      moved += m.End - m.Begin;
  return moved;
}

} // namespace mlgo::server

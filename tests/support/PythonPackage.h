// Where the end-to-end tests find the built Python package (mlgo_corpus) and
// the python3 it was built for, when the build has one (tests/CMakeLists.txt).
#pragma once

#include <string>

namespace mlgo::test {

#ifdef MLGO_PYTHON_PACKAGE_DIR
inline constexpr bool HavePythonPackage = true;
inline const std::string PythonPackageDir = MLGO_PYTHON_PACKAGE_DIR, PackagePython3 = MLGO_PYTHON3;
#else
inline constexpr bool HavePythonPackage = false;
inline const std::string PythonPackageDir, PackagePython3;
#endif

} // namespace mlgo::test

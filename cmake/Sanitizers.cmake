# The sanitizer build (scripts/test.sh --sanitize) and the libFuzzer targets
# (scripts/fuzz.sh). Both live in their own build directory.
option(MLGO_SANITIZE "Build everything with -fsanitize=address,undefined" OFF)
option(MLGO_FUZZ "Also build the libFuzzer targets in fuzz/ (clang only; implies MLGO_SANITIZE)" OFF)

# Build type for sanitizer builds: enough optimization that the e2e tests run
# at a useful speed, line tables for the reports, and a quicker compile than
# RelWithDebInfo's full debug info.
set(CMAKE_CXX_FLAGS_SANITIZE "-O1 -gline-tables-only" CACHE STRING "Flags of the Sanitize build type")

if(MLGO_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MLGO_FUZZ needs clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++-22")
  endif()
  set(MLGO_SANITIZE ON)
endif()

if(MLGO_SANITIZE)
  # vptr is off: libLLVM is built without RTTI, so its classes have no
  # typeinfo for the check to consult. Every other UBSan check is on and
  # fatal, so a finding fails the test that hit it.
  set(MLGO_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all
                           -fno-omit-frame-pointer)
  add_compile_options(${MLGO_SANITIZER_FLAGS})
  add_link_options(${MLGO_SANITIZER_FLAGS})
  message(STATUS "Sanitizers: ${MLGO_SANITIZER_FLAGS}")
endif()

# Run at build time (cmake -P): writes the git revision the tree was built
# from into VERSION_FILE, touching it only when it changes so that a commit
# rebuilds one file, not the project.
# Inputs: SOURCE_DIR, VERSION_FILE.
set(revision "")
find_program(GIT git)
if(GIT AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(failed)
    set(revision "")
  else()
    execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(dirty)
      string(APPEND revision "-dirty")
    endif()
  endif()
endif()
set(content "#define MLGO_GIT_REVISION \"${revision}\"\n")
if(EXISTS "${VERSION_FILE}")
  file(READ "${VERSION_FILE}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL content)
  file(WRITE "${VERSION_FILE}" "${content}")
endif()

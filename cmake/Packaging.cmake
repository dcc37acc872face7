# Installing the library for other projects, and the Debian package.
include(CMakePackageConfigHelpers)

install(TARGETS mlgo EXPORT mlgoTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mlgo DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
set(mlgo_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mlgo)
install(EXPORT mlgoTargets NAMESPACE mlgo:: DESTINATION ${mlgo_cmake_dir} COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mlgoConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/mlgoConfig.cmake INSTALL_DESTINATION ${mlgo_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mlgoConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mlgoConfig.cmake ${PROJECT_BINARY_DIR}/mlgoConfigVersion.cmake
        DESTINATION ${mlgo_cmake_dir} COMPONENT development)

# Docs beside the tools (the man pages are installed by man/).
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT tools)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT tools)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/corpus_formats/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/corpus_formats
        COMPONENT tools)
# The policies we ship (models/<name>/: model.tflite, output_spec.json, its
# model card), for the plugin's -mlgo-inliner-policy=tflite:DIR.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mlgo-corpus/models COMPONENT tools)

# cpack -G DEB: mlgo-corpus_<version>_<arch>.deb (tools, plugin, docs, man
# pages), mlgo-corpus-dev_<version>_<arch>.deb (headers, library, CMake
# package) and, where the Python package is built,
# python3-mlgo-corpus_<version>_<arch>.deb (the mlgo_corpus package in
# Debian's python path). dpkg-shlibdeps computes what the binaries really link.
set(CPACK_PACKAGE_NAME mlgo-corpus)
set(CPACK_PACKAGE_VENDOR "mlgo-corpus developers")
set(CPACK_PACKAGE_CONTACT "mlgo-corpus developers <maintainers@users.noreply.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Tools that turn real builds into MLGO training corpora and training logs")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tools development)
if(MLGO_PYTHON)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME mlgo-corpus)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
# harvest-logs drives these compilers by default; extract-ir reads what clang wrote.
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "llvm-${LLVM_VERSION_MAJOR}, clang-${LLVM_VERSION_MAJOR}")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "extract-ir, make-corpus, combine-training-corpus, validate-corpus, harvest-logs and training-log:\n"
    "fast, drop-in replacements for LLVM's mlgo-utils and ml-compiler-opt's trace generation.")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME mlgo-corpus-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
    "mlgo-corpus (= ${PROJECT_VERSION}), llvm-${LLVM_VERSION_MAJOR}-dev, libclang-cpp${LLVM_VERSION_MAJOR}-dev, libtbb-dev, nlohmann-json3-dev")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "Headers, static library and CMake package (find_package(mlgo)) of mlgo-corpus:\n"
    "corpus descriptions, training-log reading and writing, TFRecord output.")
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-mlgo-corpus)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
# The extension module is built for Debian 12's python3 (3.11).
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.11~), python3 (<< 3.12), python3-numpy, python3-flatbuffers")
set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "mlgo-corpus (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-torch")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION
    "mlgo_corpus, the Python package of mlgo-corpus:\n"
    "training logs, TFRecord datasets, harvests and corpora as numpy arrays, without TensorFlow.")
include(CPack)

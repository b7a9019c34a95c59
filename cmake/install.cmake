# `cmake --install` and CPack: the layout a user of the .deb gets.
#   bin/rdmapct, bin/rdmapct-agent (where built)
#   share/rdmapct/      the data the binary reads, laid out like the repository
#                       (conformance/cases, requirements.tsv, reasons/) so that
#                       DataDir() (conformance/catalog.h) is the same rule in the
#                       build tree (build/share/rdmapct -> source) and installed
#   include/rdmapct/    the plugin C ABI header
#   lib/cmake/rdmapct/  find_package(rdmapct): rdmapct::plugin_abi, rdmapct_EXECUTABLE
#   share/pkgconfig/    rdmapct.pc (the plugin ABI is header-only)
#   share/man/man1, share/bash-completion/completions (cli/CMakeLists.txt)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS rdmapct RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET rdmapct-agent)
  install(TARGETS rdmapct-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(RDMAPCT_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/rdmapct)
install(DIRECTORY conformance/cases conformance/reasons
        DESTINATION ${RDMAPCT_INSTALL_DATADIR}/conformance)
install(FILES conformance/requirements.tsv conformance/uncovered_reasons.tsv
        DESTINATION ${RDMAPCT_INSTALL_DATADIR}/conformance)
# The decisions the cases cite (docs/decisions.md#d-...).
install(FILES docs/decisions.md docs/target-convention.md docs/reports.md
        DESTINATION ${RDMAPCT_INSTALL_DATADIR}/docs)

# The plugin ABI: a header-only interface target for plugin authors.
add_library(rdmapct_plugin_abi INTERFACE)
target_include_directories(rdmapct_plugin_abi INTERFACE
                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(rdmapct_plugin_abi PROPERTIES EXPORT_NAME plugin_abi)
install(FILES targets/plugin/rdmapct_target_plugin.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rdmapct)
install(TARGETS rdmapct_plugin_abi EXPORT rdmapctTargets)
set(RDMAPCT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rdmapct)
install(EXPORT rdmapctTargets NAMESPACE rdmapct:: DESTINATION ${RDMAPCT_CMAKE_DIR})
configure_package_config_file(cmake/rdmapctConfig.cmake.in ${PROJECT_BINARY_DIR}/rdmapctConfig.cmake
                              INSTALL_DESTINATION ${RDMAPCT_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR RDMAPCT_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rdmapctConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/rdmapctConfig.cmake ${PROJECT_BINARY_DIR}/rdmapctConfigVersion.cmake
        DESTINATION ${RDMAPCT_CMAKE_DIR})
configure_file(cmake/rdmapct.pc.in ${PROJECT_BINARY_DIR}/rdmapct.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rdmapct.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)

# Generated from the CLI definitions (cli/CMakeLists.txt).
install(FILES ${PROJECT_BINARY_DIR}/rdmapct.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_BINARY_DIR}/rdmapct.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME rdmapct)

# cpack -G DEB (in build/): rdmapct_<version>_<arch>.deb, installing under /usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rdmapct)
set(CPACK_PACKAGE_VENDOR "rdmapct")
set(CPACK_PACKAGE_CONTACT "rdmapct maintainers <rdmapct@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "iWARP RDMAP conformance test suite and protocol fuzzer")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the linked Debian libraries
set(CPACK_STRIP_FILES ON)
include(CPack)

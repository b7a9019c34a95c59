# Small helpers so that adding a source or test file never needs a CMakeLists edit.

# rdmapct_library(NAME DIR DEPS...): a static library of every *.cc in DIR.
function(rdmapct_library name dir)
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  list(FILTER srcs EXCLUDE REGEX "_test\\.cc$")
  add_library(${name} STATIC ${srcs})
  target_link_libraries(${name} PUBLIC ${ARGN})
endfunction()

# rdmapct_test_dir(NAME DIR DEPS...): one GoogleTest binary of every *_test.cc in DIR.
function(rdmapct_test_dir name dir)
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*_test.cc)
  if(NOT srcs)
    return()
  endif()
  add_executable(${name} ${srcs})
  target_link_libraries(${name} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main GTest::gmock)
  # Build time, not behaviour (CI builds everything twice on 2 cores): the
  # headers every test includes are parsed once per test binary, and test
  # bodies are compiled at -O1 in Release (the code under test keeps -O3;
  # GoogleTest's macro expansions gain nothing from -O3 but compile time).
  target_precompile_headers(${name} PRIVATE <gmock/gmock.h> <gtest/gtest.h> <nlohmann/json.hpp> <filesystem> <map>
                            <memory> <string> <vector>)
  target_compile_options(${name} PRIVATE $<$<CONFIG:Release>:-O1>)
  gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       PROPERTIES ENVIRONMENT "RDMAPCT_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                       DISCOVERY_TIMEOUT 60)
endfunction()

// The GoogleTest parameter name of a fault switch ("skip-bounds-check" ->
// "skip_bounds_check"), for the suites parameterized by fault name.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace rdmapct::fuzz::testing {

inline std::string FaultTestName(const ::testing::TestParamInfo<const char*>& info) {
  std::string s = info.param;
  for (char& c : s) c = c == '-' ? '_' : c;
  return s;
}

}  // namespace rdmapct::fuzz::testing

// Shared by the agent's convention and commands tests: the Advertisement the
// agent builds for a layout and its (fake) registrations, decoded the way
// the suite decodes it.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "reference/wire/ulp_convention.h"
#include "targets/agent/convention.h"

namespace rdmapct::agent {

// Fails the test when the agent cannot build the Advertisement, when it is
// longer than MPA Private Data allows, or when the suite cannot decode it.
inline wire::Advertisement DecodedAdvertisement(const AgentOptions& o, const std::vector<RegionSpec>& layout,
                                                const std::vector<Registered>& registered, const ConnectionParams& p) {
  auto bytes = BuildAdvertisement(o, layout, registered, p);
  EXPECT_TRUE(bytes.ok());
  EXPECT_LE(bytes->size(), wire::kAdvertisementMaxLength);
  auto adv = wire::DecodeAdvertisement(*bytes);
  EXPECT_TRUE(adv.ok()) << (adv.ok() ? "" : adv.error().field);
  return *adv;
}

}  // namespace rdmapct::agent

// The options of the `reference?QUERY` target URI (targets/target_uri.h),
// applied to a ReferenceTargetConfig. A header of its own, not part of
// target_uri.h, because the example plugin (targets/plugin/reference_plugin.cc)
// takes the same options as its config string and must not include the
// connector factory that loads plugins (docs/architecture.md, "Inside
// targets/"; tests/meta/layering_test.cc).
#pragma once

#include <string>
#include <string_view>

#include "targets/reference_target.h"

namespace rdmapct::targets {

// Applies a reference query ("k=v&k=v") to `config`. Keys:
//   profile=rfc5040|rfc7306|commit   fault=NAME[,NAME...] (repeatable)
//   crc=0|1 (the Reply's C bit)      markers=0|1 (Markers wanted from the suite)
//   rfc6581=0|1   revs=1,2   ird=N   ord=N   buffers=N   buffer_size=N
//   keep_memory=0|1   commands=0|1   concurrent=0|1   shared=0|1   mulpdu=N
// false with a reason naming the key on an unknown key or a bad value.
bool ApplyReferenceQuery(std::string_view query, ReferenceTargetConfig& config, std::string& error);

}  // namespace rdmapct::targets

#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build step: the infrastructure has set CC, CXX,
# CFLAGS, CXXFLAGS (sanitizer, coverage), LIB_FUZZING_ENGINE, SRC, WORK and
# OUT; fuzz/build.sh builds every fuzz/fuzz_*.cc harness with them and
# stages each with its seed corpus zip, .dict and .options (and the shared
# libraries it needs, in $OUT/lib).
#
# The distribution's libprotobuf and libpcap are built against libstdc++:
# the harnesses use it too, not the infrastructure's default libc++ (so no
# MemorySanitizer builds: project.yaml lists address and undefined).
export CXXFLAGS="${CXXFLAGS//-stdlib=libc++/}"
export RDMAPCT_FUZZ_JOBS="$(nproc)"
"$SRC/rdmapct/fuzz/build.sh"

#!/bin/sh
# Applies .clang-format to every tracked C++ file (.h, .cc), in place.
#   tools/format.sh           format the tree
#   tools/format.sh --check   list the files that are not formatted; exit 1 if any
# Needs clang-format (Debian: clang-format; the style was written with 14).
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (apt-get install clang-format)" >&2; exit 2; }
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in $(git ls-files '*.h' '*.cc'); do
    clang-format --style=file "$f" | cmp -s - "$f" || { echo "$f"; bad=1; }
  done
  exit $bad
fi
git ls-files -z '*.h' '*.cc' | xargs -0 clang-format --style=file -i

#include "targets/transport.h"

namespace rdmapct::targets {

const char* IoStatusName(IoStatus s) {
  switch (s) {
    case IoStatus::kOk:
      return "ok";
    case IoStatus::kTimeout:
      return "timeout";
    case IoStatus::kClosed:
      return "closed";
    case IoStatus::kReset:
      return "reset";
    case IoStatus::kError:
      return "error";
  }
  return "?";
}

}  // namespace rdmapct::targets

// A plugin that claims another ABI version, so the loader's refusal can be
// tested. Only the version function does anything.
#include "targets/plugin/rdmapct_target_plugin.h"

extern "C" {
RDMAPCT_PLUGIN_EXPORT uint32_t rdmapct_plugin_abi_version(void) { return RDMAPCT_PLUGIN_ABI_VERSION + 1; }
RDMAPCT_PLUGIN_EXPORT rdmapct_plugin_target* rdmapct_plugin_open(const char*) { return nullptr; }
RDMAPCT_PLUGIN_EXPORT void rdmapct_plugin_close_target(rdmapct_plugin_target*) {}
RDMAPCT_PLUGIN_EXPORT rdmapct_plugin_conn* rdmapct_plugin_connect(rdmapct_plugin_target*) { return nullptr; }
RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_write(rdmapct_plugin_conn*, const uint8_t*, size_t) {
  return RDMAPCT_IO_ERROR;
}
RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_read(rdmapct_plugin_conn*, uint8_t*, size_t, size_t*) {
  return RDMAPCT_IO_ERROR;
}
RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_shutdown_write(rdmapct_plugin_conn*) { return RDMAPCT_IO_ERROR; }
RDMAPCT_PLUGIN_EXPORT void rdmapct_plugin_close(rdmapct_plugin_conn*) {}
RDMAPCT_PLUGIN_EXPORT const char* rdmapct_plugin_last_error(void) { return ""; }
}

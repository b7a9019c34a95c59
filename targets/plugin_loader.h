// Loads a target plugin (targets/plugin/rdmapct_target_plugin.h) and
// presents it as a TargetConnector, so a plugin target runs every case the
// in-process and TCP targets run.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "targets/plugin/rdmapct_target_plugin.h"
#include "targets/transport.h"

namespace rdmapct::targets {

// A dlopen()ed plugin and its target handle. Shared by the connector and
// every transport it made, so the library stays loaded while any is alive.
class PluginLibrary;

class PluginTransport : public Transport {
 public:
  PluginTransport(std::shared_ptr<PluginLibrary> library, rdmapct_plugin_conn* conn, std::string peer);
  ~PluginTransport() override;

  IoStatus Write(wire::ByteSpan bytes) override;
  // Polls the plugin's non-blocking read with short sleeps until `timeout`,
  // so an asynchronous plugin gets the whole deadline and a synchronous one
  // costs no wait when it has data.
  IoStatus Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) override;
  void ShutdownWrite() override;
  void Abort() override;
  std::string last_error() const override { return last_error_; }
  std::string peer() const override { return peer_; }

  // The optional white-box memory view; false if the plugin lacks it or
  // refuses (reason in last_error()).
  bool PeekMemory(uint32_t stag, uint64_t tagged_offset, std::size_t length, wire::Bytes& out);

 private:
  IoStatus Status(int plugin_status, const char* call);

  std::shared_ptr<PluginLibrary> library_;
  rdmapct_plugin_conn* conn_;
  std::string peer_;
  std::string last_error_;
  bool closed_ = false;  // Abort(): the handle is gone
};

class PluginConnector : public TargetConnector {
 public:
  // Loads `path` and opens its target with `config`; nullptr with a
  // one-line reason (missing file, missing symbol, ABI version mismatch,
  // the plugin's own open error) in `error`.
  static std::unique_ptr<PluginConnector> Load(const std::string& path, const std::string& config, std::string& error);

  std::unique_ptr<Transport> Connect(std::chrono::milliseconds timeout, std::string& error) override;
  // "plugin /path/lib.so (config: profile=rfc7306)"
  std::string Describe() const override;

 private:
  explicit PluginConnector(std::shared_ptr<PluginLibrary> library);
  std::shared_ptr<PluginLibrary> library_;
};

}  // namespace rdmapct::targets

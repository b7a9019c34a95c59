#include "targets/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <thread>

namespace rdmapct::targets {

namespace {

// At most this much is copied per plugin read call.
constexpr std::size_t kReadChunk = 1u << 20;

std::string DlError() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

}  // namespace

class PluginLibrary {
 public:
  struct Api {
    rdmapct_plugin_abi_version_fn abi_version = nullptr;
    rdmapct_plugin_open_fn open = nullptr;
    rdmapct_plugin_close_target_fn close_target = nullptr;
    rdmapct_plugin_connect_fn connect = nullptr;
    rdmapct_plugin_write_fn write = nullptr;
    rdmapct_plugin_read_fn read = nullptr;
    rdmapct_plugin_shutdown_write_fn shutdown_write = nullptr;
    rdmapct_plugin_close_fn close = nullptr;
    rdmapct_plugin_last_error_fn last_error = nullptr;
    rdmapct_plugin_peek_memory_fn peek_memory = nullptr;  // optional
  };

  PluginLibrary(void* handle, std::string path, std::string config)
      : handle_(handle), path_(std::move(path)), config_(std::move(config)) {}
  ~PluginLibrary() {
    if (target_ != nullptr) api_.close_target(target_);
    if (handle_ != nullptr) dlclose(handle_);
  }
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  // Resolves every required symbol and checks the ABI version.
  bool Bind(std::string& error) {
    bool ok =
        Sym("rdmapct_plugin_abi_version", api_.abi_version, error) && Sym("rdmapct_plugin_open", api_.open, error) &&
        Sym("rdmapct_plugin_close_target", api_.close_target, error) &&
        Sym("rdmapct_plugin_connect", api_.connect, error) && Sym("rdmapct_plugin_write", api_.write, error) &&
        Sym("rdmapct_plugin_read", api_.read, error) &&
        Sym("rdmapct_plugin_shutdown_write", api_.shutdown_write, error) &&
        Sym("rdmapct_plugin_close", api_.close, error) && Sym("rdmapct_plugin_last_error", api_.last_error, error);
    if (!ok) return false;
    api_.peek_memory = reinterpret_cast<rdmapct_plugin_peek_memory_fn>(dlsym(handle_, "rdmapct_plugin_peek_memory"));
    const uint32_t version = api_.abi_version();
    if (version != RDMAPCT_PLUGIN_ABI_VERSION) {
      error = "plugin " + path_ + " implements target plugin ABI " + std::to_string(version) +
              "; this rdmapct implements ABI " + std::to_string(RDMAPCT_PLUGIN_ABI_VERSION);
      return false;
    }
    return true;
  }

  bool Open(std::string& error) {
    target_ = api_.open(config_.c_str());
    if (target_ == nullptr) {
      error = "plugin " + path_ + " refused to open (config \"" + config_ + "\"): " + LastError();
      return false;
    }
    return true;
  }

  std::string LastError() const {
    const char* e = api_.last_error();
    return e && *e ? e : "no reason given";
  }

  const Api& api() const { return api_; }
  rdmapct_plugin_target* target() const { return target_; }
  const std::string& path() const { return path_; }
  const std::string& config() const { return config_; }

 private:
  template <class Fn>
  bool Sym(const char* name, Fn& fn, std::string& error) {
    fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    if (fn != nullptr) return true;
    error = "plugin " + path_ + " lacks the symbol " + name +
            " (not an rdmapct target plugin? see targets/plugin/rdmapct_target_plugin.h)";
    return false;
  }

  void* handle_;
  std::string path_;
  std::string config_;
  Api api_;
  rdmapct_plugin_target* target_ = nullptr;
};

// ---------------------------------------------------------------------------

PluginTransport::PluginTransport(std::shared_ptr<PluginLibrary> library, rdmapct_plugin_conn* conn, std::string peer)
    : library_(std::move(library)), conn_(conn), peer_(std::move(peer)) {}

PluginTransport::~PluginTransport() {
  if (conn_ != nullptr) library_->api().close(conn_);
}

IoStatus PluginTransport::Status(int s, const char* call) {
  switch (s) {
    case RDMAPCT_IO_OK:
      return IoStatus::kOk;
    case RDMAPCT_IO_WOULD_BLOCK:
      return IoStatus::kTimeout;
    case RDMAPCT_IO_CLOSED:
      return IoStatus::kClosed;
    case RDMAPCT_IO_RESET:
      return IoStatus::kReset;
    case RDMAPCT_IO_ERROR:
      last_error_ = std::string(call) + ": " + library_->LastError();
      return IoStatus::kError;
    default:
      last_error_ = std::string(call) + " returned the unknown status " + std::to_string(s);
      return IoStatus::kError;
  }
}

IoStatus PluginTransport::Write(wire::ByteSpan bytes) {
  if (conn_ == nullptr) {
    last_error_ = "write after Abort()";
    return IoStatus::kError;
  }
  const int s = library_->api().write(conn_, bytes.data(), bytes.size());
  if (s == RDMAPCT_IO_WOULD_BLOCK) {
    last_error_ = "rdmapct_plugin_write returned would-block; the ABI says it takes every octet";
    return IoStatus::kError;
  }
  return Status(s, "rdmapct_plugin_write");
}

IoStatus PluginTransport::Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) {
  if (conn_ == nullptr) {
    last_error_ = "read after Abort()";
    return IoStatus::kError;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::size_t cap = std::min(max_bytes, kReadChunk);
  auto pause = std::chrono::microseconds(100);
  while (true) {
    const std::size_t at = out.size();
    out.resize(at + cap);
    std::size_t len = 0;
    const int s = library_->api().read(conn_, out.data() + at, cap, &len);
    out.resize(at + (s == RDMAPCT_IO_OK ? std::min(len, cap) : 0));
    if (s == RDMAPCT_IO_OK && len == 0) {
      last_error_ = "rdmapct_plugin_read returned ok with no octets";
      return IoStatus::kError;
    }
    if (s != RDMAPCT_IO_WOULD_BLOCK || cap == 0) return Status(s, "rdmapct_plugin_read");
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return IoStatus::kTimeout;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

void PluginTransport::ShutdownWrite() {
  if (conn_ == nullptr) return;
  const int s = library_->api().shutdown_write(conn_);
  if (s != RDMAPCT_IO_OK) Status(s, "rdmapct_plugin_shutdown_write");
}

void PluginTransport::Abort() {
  if (conn_ == nullptr) return;
  library_->api().close(conn_);
  conn_ = nullptr;
}

bool PluginTransport::PeekMemory(uint32_t stag, uint64_t tagged_offset, std::size_t length, wire::Bytes& out) {
  if (library_->api().peek_memory == nullptr) {
    last_error_ = "the plugin has no rdmapct_plugin_peek_memory";
    return false;
  }
  if (conn_ == nullptr) {
    last_error_ = "peek after Abort()";
    return false;
  }
  out.assign(length, 0);
  const int s = library_->api().peek_memory(conn_, stag, tagged_offset, length, out.data());
  if (s == RDMAPCT_IO_OK) return true;
  out.clear();
  Status(s, "rdmapct_plugin_peek_memory");
  return false;
}

// ---------------------------------------------------------------------------

std::unique_ptr<PluginConnector> PluginConnector::Load(const std::string& path, const std::string& config,
                                                       std::string& error) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    error = "cannot load plugin " + path + ": " + DlError();
    return nullptr;
  }
  auto library = std::make_shared<PluginLibrary>(handle, path, config);
  if (!library->Bind(error) || !library->Open(error)) return nullptr;
  return std::unique_ptr<PluginConnector>(new PluginConnector(std::move(library)));
}

PluginConnector::PluginConnector(std::shared_ptr<PluginLibrary> library) : library_(std::move(library)) {}

std::unique_ptr<Transport> PluginConnector::Connect(std::chrono::milliseconds /*timeout*/, std::string& error) {
  rdmapct_plugin_conn* conn = library_->api().connect(library_->target());
  if (conn == nullptr) {
    error = "plugin " + library_->path() + " refused a connection: " + library_->LastError();
    return nullptr;
  }
  return std::make_unique<PluginTransport>(library_, conn, Describe());
}

std::string PluginConnector::Describe() const {
  std::string s = "plugin " + library_->path();
  if (!library_->config().empty()) s += " (config: " + library_->config() + ")";
  return s;
}

}  // namespace rdmapct::targets

// The reference target as a target plugin: a complete, working example of
// targets/plugin/rdmapct_target_plugin.h for implementers.
//
//   rdmapct --target plugin:/path/librdmapct_reference_plugin.so?profile=rfc7306
//
// The config string takes the options of the `reference?...` target URI
// (targets/reference_query.h). The target is synchronous: write() runs it on
// the octets at once and queues its answer, read() hands the queue out. A plugin
// for a real stack would do the same with its own connection instead of a
// ReferenceTargetConnection (e.g. a socketpair or a verbs QP behind it).
//
// Every entry point catches exceptions: none may cross the C ABI.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "targets/plugin/rdmapct_target_plugin.h"
#include "targets/reference_query.h"
#include "targets/reference_target.h"

using rdmapct::targets::ReferenceTarget;
using rdmapct::targets::ReferenceTargetConfig;
using rdmapct::targets::ReferenceTargetConnection;

struct rdmapct_plugin_target {
  std::unique_ptr<ReferenceTarget> target;
};

struct rdmapct_plugin_conn {
  std::unique_ptr<ReferenceTargetConnection> reference;
  rdmapct::wire::Bytes queue;  // octets for rdmapct; [head, end) unread
  std::size_t head = 0;
  bool write_shut = false;
};

namespace {

thread_local std::string g_last_error;

int Error(std::string message) {
  g_last_error = std::move(message);
  return RDMAPCT_IO_ERROR;
}

}  // namespace

extern "C" {

RDMAPCT_PLUGIN_EXPORT uint32_t rdmapct_plugin_abi_version(void) { return RDMAPCT_PLUGIN_ABI_VERSION; }

RDMAPCT_PLUGIN_EXPORT rdmapct_plugin_target* rdmapct_plugin_open(const char* config) try {
  ReferenceTargetConfig c;
  std::string error;
  if (!rdmapct::targets::ApplyReferenceQuery(config ? config : "", c, error)) {
    g_last_error = error;
    return nullptr;
  }
  if (std::string e = rdmapct::targets::ValidateReferenceTargetConfig(c); !e.empty()) {
    g_last_error = e;
    return nullptr;
  }
  auto* t = new rdmapct_plugin_target;
  t->target = std::make_unique<ReferenceTarget>(c);
  return t;
} catch (const std::exception& e) {
  g_last_error = e.what();
  return nullptr;
}

RDMAPCT_PLUGIN_EXPORT void rdmapct_plugin_close_target(rdmapct_plugin_target* target) { delete target; }

RDMAPCT_PLUGIN_EXPORT rdmapct_plugin_conn* rdmapct_plugin_connect(rdmapct_plugin_target* target) try {
  if (target == nullptr) {
    g_last_error = "connect: no target";
    return nullptr;
  }
  auto* c = new rdmapct_plugin_conn;
  c->reference = target->target->Accept();
  return c;
} catch (const std::exception& e) {
  g_last_error = e.what();
  return nullptr;
}

RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_write(rdmapct_plugin_conn* conn, const uint8_t* data, size_t len) try {
  if (conn == nullptr || (data == nullptr && len > 0)) return Error("write: null argument");
  if (conn->write_shut) return Error("write after shutdown_write");
  if (conn->reference->closed()) return RDMAPCT_IO_CLOSED;
  conn->reference->OnBytes(rdmapct::wire::ByteSpan(data, len), conn->queue);
  return RDMAPCT_IO_OK;
} catch (const std::exception& e) {
  return Error(e.what());
}

RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_read(rdmapct_plugin_conn* conn, uint8_t* buf, size_t cap, size_t* len) try {
  if (conn == nullptr || len == nullptr || (buf == nullptr && cap > 0)) {
    return Error("read: null argument");
  }
  *len = 0;
  const std::size_t queued = conn->queue.size() - conn->head;
  if (queued == 0) {
    return conn->reference->wants_close() ? RDMAPCT_IO_CLOSED : RDMAPCT_IO_WOULD_BLOCK;
  }
  const std::size_t n = std::min(cap, queued);
  if (n == 0) return RDMAPCT_IO_WOULD_BLOCK;
  std::memcpy(buf, conn->queue.data() + conn->head, n);
  conn->head += n;
  if (conn->head == conn->queue.size()) {
    conn->queue.clear();
    conn->head = 0;
  }
  *len = n;
  return RDMAPCT_IO_OK;
} catch (const std::exception& e) {
  return Error(e.what());
}

RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_shutdown_write(rdmapct_plugin_conn* conn) try {
  if (conn == nullptr) return Error("shutdown_write: null connection");
  if (!conn->write_shut) {
    conn->write_shut = true;
    conn->reference->OnPeerClosed(conn->queue);
  }
  return RDMAPCT_IO_OK;
} catch (const std::exception& e) {
  return Error(e.what());
}

RDMAPCT_PLUGIN_EXPORT void rdmapct_plugin_close(rdmapct_plugin_conn* conn) {
  if (conn == nullptr) return;
  if (!conn->reference->closed()) conn->reference->OnPeerReset();
  delete conn;
}

RDMAPCT_PLUGIN_EXPORT const char* rdmapct_plugin_last_error(void) { return g_last_error.c_str(); }

RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_peek_memory(rdmapct_plugin_conn* conn, uint32_t stag, uint64_t tagged_offset,
                                                     size_t len, uint8_t* buf) try {
  if (conn == nullptr || (buf == nullptr && len > 0)) return Error("peek_memory: null argument");
  auto bytes = conn->reference->PeekMemory(stag, tagged_offset, len);
  if (bytes.size() != len || (len == 0 && conn->reference->endpoint() == nullptr)) {
    return Error("peek_memory: STag " + std::to_string(stag) + " has no such range");
  }
  std::copy(bytes.begin(), bytes.end(), buf);
  return RDMAPCT_IO_OK;
} catch (const std::exception& e) {
  return Error(e.what());
}

}  // extern "C"

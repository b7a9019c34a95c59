/*
 * rdmapct target plugin C ABI, version 1.
 *
 * A plugin lets rdmapct test an iWARP implementation in the same process,
 * without a TCP listener: `rdmapct --target plugin:/path/libmytarget.so`.
 * The plugin is a shared object that exports the functions below with C
 * linkage. rdmapct loads it with dlopen() and looks every function up by
 * name with dlsym().
 *
 * The plugin plays the target (the MPA Responder, running the test ULP of
 * docs/target-convention.md). A connection is a byte stream, exactly the TCP
 * payload the target would see:
 *   - rdmapct writes the octets of the MPA Request and of its FPDUs;
 *   - rdmapct reads the octets of the MPA Reply and of the target's FPDUs.
 * Framing, CRCs and Markers are the plugin's business, as on the wire.
 *
 * Threading: rdmapct calls a connection from one thread at a time. Calls on
 * different connections, and rdmapct_plugin_connect(), may come from
 * different threads; a plugin that cannot cope serialises internally.
 *
 * Blocking: no call may block for long. rdmapct_plugin_read() returns
 * RDMAPCT_IO_WOULD_BLOCK at once when nothing is ready; rdmapct polls it
 * (with short sleeps) until its own deadline. An asynchronous plugin (one
 * with worker threads, or a real NIC behind it) just keeps its output queued
 * until read.
 *
 * Strings: config and last_error are NUL-terminated UTF-8.
 *
 * Versioning: RDMAPCT_PLUGIN_ABI_VERSION changes whenever a signature or a
 * meaning below changes. rdmapct refuses a plugin whose
 * rdmapct_plugin_abi_version() differs from the version it was built with.
 * New optional functions may be added without a version change; rdmapct
 * treats a missing optional function as "not supported".
 *
 * Example: targets/plugin/reference_plugin.cc wraps the reference target.
 */
#ifndef RDMAPCT_TARGET_PLUGIN_H_
#define RDMAPCT_TARGET_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RDMAPCT_PLUGIN_ABI_VERSION 1u

/* Exported with default visibility (the plugin may hide everything else). */
#if defined(__GNUC__)
#define RDMAPCT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define RDMAPCT_PLUGIN_EXPORT
#endif

/* Opaque handles, defined by the plugin. */
typedef struct rdmapct_plugin_target rdmapct_plugin_target;
typedef struct rdmapct_plugin_conn rdmapct_plugin_conn;

/* Status of write / read / shutdown_write / peek_memory. */
typedef enum rdmapct_io_status {
  RDMAPCT_IO_OK = 0,          /* done (read: *len > 0 octets were copied) */
  RDMAPCT_IO_WOULD_BLOCK = 1, /* read: nothing to read yet; try again later */
  RDMAPCT_IO_CLOSED = 2,      /* the target closed its sending side (FIN) and
                                 everything it sent has been read; or, for
                                 write, the connection is gone */
  RDMAPCT_IO_ERROR = 3,       /* failure; see rdmapct_plugin_last_error() */
  RDMAPCT_IO_RESET = 4        /* the target aborted the connection (RST);
                                 plugins without such a notion never return it */
} rdmapct_io_status;

/* ---- required functions ------------------------------------------------ */

/* Returns RDMAPCT_PLUGIN_ABI_VERSION as the plugin was built with it. */
RDMAPCT_PLUGIN_EXPORT uint32_t rdmapct_plugin_abi_version(void);

/* Creates a target. `config` is the text after '?' in the target URI
 * ("plugin:/path/lib.so?profile=rfc7306"), "" when there is none; its
 * syntax is the plugin's. The target lives until rdmapct_plugin_close_target()
 * and keeps what the convention carries across connections (memory for
 * Keep Memory, the connection serial, the previous-connection outcome).
 * Returns NULL on failure (see rdmapct_plugin_last_error()). */
RDMAPCT_PLUGIN_EXPORT rdmapct_plugin_target* rdmapct_plugin_open(const char* config);

/* Destroys a target. Every connection of it has been closed before. */
RDMAPCT_PLUGIN_EXPORT void rdmapct_plugin_close_target(rdmapct_plugin_target* target);

/* Opens a new connection, like a TCP accept(): the target waits for the
 * MPA Request. Returns NULL on failure. */
RDMAPCT_PLUGIN_EXPORT rdmapct_plugin_conn* rdmapct_plugin_connect(rdmapct_plugin_target* target);

/* Delivers `len` octets from rdmapct to the target, in stream order. The
 * plugin takes all of them (copying what it needs) or fails: RDMAPCT_IO_OK,
 * RDMAPCT_IO_CLOSED / RDMAPCT_IO_RESET when the connection is gone,
 * RDMAPCT_IO_ERROR. Octets after the target's own FIN are still accepted
 * (TCP half-close). */
RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_write(rdmapct_plugin_conn* conn, const uint8_t* data, size_t len);

/* Copies at most `cap` octets the target has sent into `buf` and sets *len.
 * Never blocks: RDMAPCT_IO_OK (*len >= 1), RDMAPCT_IO_WOULD_BLOCK (*len = 0),
 * RDMAPCT_IO_CLOSED once the target closed its side and all its octets were
 * read, RDMAPCT_IO_RESET, RDMAPCT_IO_ERROR. */
RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_read(rdmapct_plugin_conn* conn, uint8_t* buf, size_t cap, size_t* len);

/* rdmapct closes its sending side (TCP FIN). Reads still work. */
RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_shutdown_write(rdmapct_plugin_conn* conn);

/* Releases a connection. If it is still open both ways, this is an abortive
 * close (TCP RST): the target discards it. */
RDMAPCT_PLUGIN_EXPORT void rdmapct_plugin_close(rdmapct_plugin_conn* conn);

/* The last failure of the calling thread, one line; never NULL ("" if
 * none). Valid until the next plugin call on that thread. */
RDMAPCT_PLUGIN_EXPORT const char* rdmapct_plugin_last_error(void);

/* ---- optional functions ------------------------------------------------ */

/* Copies `len` octets of the region named `stag`, from Tagged Offset
 * `tagged_offset`, into `buf`, as the target's memory holds them now (a
 * white-box view for diagnostics; the suite itself reads memory with RDMA
 * Read). RDMAPCT_IO_OK, or RDMAPCT_IO_ERROR for an unknown STag or a range
 * outside the region. */
RDMAPCT_PLUGIN_EXPORT int rdmapct_plugin_peek_memory(rdmapct_plugin_conn* conn, uint32_t stag, uint64_t tagged_offset,
                                                     size_t len, uint8_t* buf);

/* Function pointer types, for loaders. */
typedef uint32_t (*rdmapct_plugin_abi_version_fn)(void);
typedef rdmapct_plugin_target* (*rdmapct_plugin_open_fn)(const char*);
typedef void (*rdmapct_plugin_close_target_fn)(rdmapct_plugin_target*);
typedef rdmapct_plugin_conn* (*rdmapct_plugin_connect_fn)(rdmapct_plugin_target*);
typedef int (*rdmapct_plugin_write_fn)(rdmapct_plugin_conn*, const uint8_t*, size_t);
typedef int (*rdmapct_plugin_read_fn)(rdmapct_plugin_conn*, uint8_t*, size_t, size_t*);
typedef int (*rdmapct_plugin_shutdown_write_fn)(rdmapct_plugin_conn*);
typedef void (*rdmapct_plugin_close_fn)(rdmapct_plugin_conn*);
typedef const char* (*rdmapct_plugin_last_error_fn)(void);
typedef int (*rdmapct_plugin_peek_memory_fn)(rdmapct_plugin_conn*, uint32_t, uint64_t, size_t, uint8_t*);

#ifdef __cplusplus
}
#endif

#endif /* RDMAPCT_TARGET_PLUGIN_H_ */

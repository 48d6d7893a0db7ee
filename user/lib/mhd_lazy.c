// SPDX-License-Identifier: GPL-2.0
/*
 * libmicrohttpd, loaded by the first call into it (issue 24: memory on a big host).  Linked,
 * it loaded in every session with what it needs (GnuTLS, nettle, hogweed, gmp, p11-kit,
 * libtasn1, libidn2, libunistring, libffi), and its constructor initialised GnuTLS: ~2.6 MiB
 * of RSS, most of it those libraries' pages, in sessions that serve nothing.  So the
 * executable is not linked with it: these definitions of the functions user/out calls are
 * the ones its calls bind to, and each goes to libmicrohttpd's own, opened (dlopen) once
 * by whichever comes first, MHD_start_daemon() in practice.  Only `serve` and `--listen`
 * load it.  A function user/out starts to call needs a line here (the link says which).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>
#include "lib/log.h"

#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	struct MHD_Daemon *(*start_daemon_va)(unsigned int, uint16_t, MHD_AcceptPolicyCallback,
					      void *, MHD_AccessHandlerCallback, void *, va_list);
	void (*stop_daemon)(struct MHD_Daemon *);
	const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind,
					       const char *);
	enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *,
					       const char *);
	void (*resume_connection)(struct MHD_Connection *);
	void (*suspend_connection)(struct MHD_Connection *);
	enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int,
					  struct MHD_Response *);
	void (*destroy_response)(struct MHD_Response *);
	const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *,
							       enum MHD_ConnectionInfoType, ...);
	struct MHD_Response *(*create_response_from_callback)(uint64_t, size_t,
							      MHD_ContentReaderCallback, void *,
							      MHD_ContentReaderFreeCallback);
	struct MHD_Response *(*create_response_from_buffer)(size_t, void *,
							    enum MHD_ResponseMemoryMode);
} api;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;

static void load(void)
{
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	void **fn = (void **)&api;
	static const char *const names[] = {
		"MHD_start_daemon_va", "MHD_stop_daemon", "MHD_lookup_connection_value",
		"MHD_add_response_header", "MHD_resume_connection", "MHD_suspend_connection",
		"MHD_queue_response", "MHD_destroy_response", "MHD_get_connection_info",
		"MHD_create_response_from_callback", "MHD_create_response_from_buffer",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(api) / sizeof(void *),
		       "a name for every function");

	if (!h) {
		log_err("failed to load %s: %s", MHD_SONAME, dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fn[i] = dlsym(h, names[i]);
		if (!fn[i]) {
			log_err("failed to find %s in %s: %s", names[i], MHD_SONAME, dlerror());
			return;
		}
	}
	loaded = true;
}

static bool ready(void)
{
	pthread_once(&once, load);
	return loaded;
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	if (!ready())
		return NULL;
	va_start(ap, dh_cls);
	d = api.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

/* The calls below all come after a daemon started (ready() held). */
void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
	if (ready())
		api.stop_daemon(daemon);
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection,
					enum MHD_ValueKind kind, const char *key)
{
	return ready() ? api.lookup_connection_value(connection, kind, key) : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
					const char *content)
{
	return ready() ? api.add_response_header(response, header, content) : MHD_NO;
}

void MHD_resume_connection(struct MHD_Connection *connection)
{
	if (ready())
		api.resume_connection(connection);
}

void MHD_suspend_connection(struct MHD_Connection *connection)
{
	if (ready())
		api.suspend_connection(connection);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
				   struct MHD_Response *response)
{
	return ready() ? api.queue_response(connection, status_code, response) : MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *response)
{
	if (ready())
		api.destroy_response(response);
}

/* Only info types without further arguments are asked for (the fd, for now). */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
							enum MHD_ConnectionInfoType info_type,
							...)
{
	return ready() ? api.get_connection_info(connection, info_type) : NULL;
}

struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size,
						       MHD_ContentReaderCallback crc,
						       void *crc_cls,
						       MHD_ContentReaderFreeCallback crfc)
{
	return ready() ? api.create_response_from_callback(size, block_size, crc, crc_cls, crfc)
		       : NULL;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
						     enum MHD_ResponseMemoryMode mode)
{
	return ready() ? api.create_response_from_buffer(size, buffer, mode) : NULL;
}

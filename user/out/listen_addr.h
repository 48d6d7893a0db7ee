/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --listen ADDR:PORT for the metrics endpoint.  Safe by default: an address that names no
 * host binds loopback, so nothing is exposed to the network unless the user writes an
 * address that says so (0.0.0.0, [::] or a NIC's address).
 *
 *   :PORT, PORT, localhost:PORT  127.0.0.1
 *   A.B.C.D:PORT                 that IPv4 address
 *   [V6]:PORT                    that IPv6 address ([::1] loopback, [::] every interface)
 *
 * Only numeric addresses (no name lookups at start-up); PORT is 1-65535.
 */
#ifndef MEVITOP_OUT_LISTEN_ADDR_H
#define MEVITOP_OUT_LISTEN_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LISTEN_ADDR_DEFAULT "127.0.0.1:9797"

/* Plain fields rather than a sockaddr: cli.h carries one and must not pull in the socket
 * headers (their bind() and friends would clash with names elsewhere). */
struct listen_addr {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t addr[16];		/* network order: 4 bytes for IPv4 */
	uint16_t port;
	char text[64];			/* canonical "127.0.0.1:9797" / "[::1]:9797" */
};

/* 0, or -EINVAL with the reason in why. */
int listen_addr_parse(const char *s, struct listen_addr *a, char *why, size_t whylen);
/* 127.0.0.0/8 or [::1]: only this machine can connect. */
bool listen_addr_loopback(const struct listen_addr *a);

#endif

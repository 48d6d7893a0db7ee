// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "out/listen_addr.h"

/* Decimal 1-65535, digits only: strtoul would take "+80", " 80" and "0x50". */
static int parse_port(const char *s, unsigned *port)
{
	unsigned v = 0;
	size_t i;

	if (!*s)
		return -EINVAL;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 5)
			return -EINVAL;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

static int fail(char *why, size_t whylen, const char *s, const char *reason)
{
	snprintf(why, whylen, "invalid listen address '%s': %s", s, reason);
	return -EINVAL;
}

int listen_addr_parse(const char *s, struct listen_addr *a, char *why, size_t whylen)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *port_s;
	unsigned port;
	size_t hlen;

	memset(a, 0, sizeof(*a));
	if (!s || !*s)
		return fail(why, whylen, s ? s : "", "empty (expected ADDR:PORT, e.g. "
			    LISTEN_ADDR_DEFAULT ")");
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close)
			return fail(why, whylen, s, "no ']' after the IPv6 address");
		if (close[1] != ':')
			return fail(why, whylen, s, "expected ':PORT' after ']'");
		hlen = (size_t)(close - s - 1);
		if (hlen >= sizeof(host))
			return fail(why, whylen, s, "not an IPv6 address");
		memcpy(host, s + 1, hlen);
		host[hlen] = 0;
		port_s = close + 2;
		if (parse_port(port_s, &port))
			return fail(why, whylen, s, "the port must be a number from 1 to 65535");
		if (inet_pton(AF_INET6, host, a->addr) != 1)
			return fail(why, whylen, s, "not a numeric IPv6 address");
		a->family = AF_INET6;
		a->port = port;
		inet_ntop(AF_INET6, a->addr, host, sizeof(host));
		snprintf(a->text, sizeof(a->text), "[%s]:%u", host, port);
		return 0;
	}
	colon = strrchr(s, ':');
	if (colon && strchr(s, ':') != colon)
		return fail(why, whylen, s, "an IPv6 address goes in brackets: [ADDR]:PORT");
	if (colon) {
		hlen = (size_t)(colon - s);
		port_s = colon + 1;
	} else {
		hlen = 0;	/* PORT alone */
		port_s = s;
	}
	if (parse_port(port_s, &port))
		return fail(why, whylen, s, "the port must be a number from 1 to 65535");
	if (hlen >= sizeof(host))
		return fail(why, whylen, s, "not a numeric IPv4 address");
	memcpy(host, s, hlen);
	host[hlen] = 0;
	if (!hlen || !strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	/* inet_pton takes only dotted quads (inet_aton would take "1", "0x7f.1"). */
	if (inet_pton(AF_INET, host, a->addr) != 1)
		return fail(why, whylen, s, "not a numeric IPv4 address (names are not looked up)");
	a->family = AF_INET;
	a->port = port;
	snprintf(a->text, sizeof(a->text), "%s:%u", host, port);
	return 0;
}

bool listen_addr_loopback(const struct listen_addr *a)
{
	static const uint8_t v6_loop[16] = { [15] = 1 };

	if (a->family == AF_INET)
		return a->addr[0] == 127;
	return !memcmp(a->addr, v6_loop, sizeof(v6_loop));
}

/* net.c: the helpers declared in net.h. */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int net_listen_tcp(const char *host, int port, int reuseport, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	int fd, one = 1, saved;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		snprintf(err, errlen, "--host %s: not an IPv4 address", host);
		errno = EINVAL;
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)) {
		snprintf(err, errlen, "setsockopt: %s", strerror(errno));
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EADDRINUSE)
			snprintf(err, errlen, "--port %d: address %s:%d already in use", port, host, port);
		else
			snprintf(err, errlen, "--port %d: bind %s:%d: %s", port, host, port, strerror(errno));
		goto fail;
	}
	if (listen(fd, NET_BACKLOG) < 0) {
		snprintf(err, errlen, "listen: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

int net_claim_reuseport(const char *host, int port, int *bound_port, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	int probe, anchor, one = 1, saved;

	probe = net_listen_tcp(host, port, 0, err, errlen);
	if (probe < 0)
		return -1;
	*bound_port = net_local_port(probe);
	close(probe);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)*bound_port);
	inet_pton(AF_INET, host, &sa.sin_addr); /* valid: net_listen_tcp parsed it */
	anchor = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (anchor < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(anchor, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(anchor, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		saved = errno;
		snprintf(err, errlen, "--port %d: address %s:%d already in use (claiming it for SO_REUSEPORT: %s)",
			 port, host, *bound_port, strerror(saved));
		close(anchor);
		errno = saved;
		return -1;
	}
	return anchor;
}

int net_local_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return -1;
	return ntohs(sa.sin_port);
}

int net_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int net_nodelay(int fd)
{
	int one = 1;
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* scm_rights.c: the descriptor-passing helpers declared in scm_rights.h. */
#include "scm_rights.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int scm_rights_send(int chan, int fd, const void *payload, size_t len)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = (void *)payload, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	memset(&control, 0, sizeof(control));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		n = sendmsg(chan, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -1 : 0;
}

static int recv_one(int chan, void *payload, size_t cap, size_t *len, int flags)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} control;
	struct iovec iov = { .iov_base = payload, .iov_len = cap };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cm;
	int fd = -1;
	ssize_t n;

	do
		n = recvmsg(chan, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	*len = (size_t)n;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t count, i;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < count; i++) {
			int got;
			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = got;
			else
				close(got); /* one descriptor per datagram: never leak extras */
		}
	}
	if (fd < 0) {
		errno = EBADMSG;
		return -1;
	}
	return fd;
}

int scm_rights_recv(int chan, void *payload, size_t cap, size_t *len)
{
	return recv_one(chan, payload, cap, len, 0);
}

int scm_rights_peek(int chan, void *payload, size_t cap, size_t *len)
{
	return recv_one(chan, payload, cap, len, MSG_PEEK);
}

int scm_rights_drop(int chan)
{
	struct msghdr msg = { 0 }; /* no control buffer: the kernel puts the datagram's descriptor itself */
	ssize_t n;

	do
		n = recvmsg(chan, &msg, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -1 : 0;
}

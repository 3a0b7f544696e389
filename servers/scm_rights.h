/* scm_rights.h: descriptor passing, the helpers fdpass's variant
 * (variants/fdpass.c) is built on: a connected socket sent to another
 * process over an AF_UNIX datagram channel with SCM_RIGHTS, plus a small payload (the peer address,
 * so the receiver need not call getpeername). Like net.c: errors are
 * returned, never printed. */
#ifndef ACCEPTLAB_SCM_RIGHTS_H
#define ACCEPTLAB_SCM_RIGHTS_H

#include <stddef.h>

/* Sends fd with payload[0..len) as one datagram. The sender keeps its own
 * reference to fd (close it after a success). Returns 0, or -1 with errno:
 * EAGAIN when the channel is full (chan non-blocking), EPIPE/ECONNREFUSED
 * when nothing can read it. */
int scm_rights_send(int chan, int fd, const void *payload, size_t len);

/* Receives one datagram: returns the descriptor it carried (close-on-exec)
 * and copies up to cap payload bytes (*len set to the count), or -1 with
 * errno: EAGAIN when nothing is queued, EBADMSG for a datagram without a
 * descriptor (*len still set; any extra descriptors are closed, never
 * leaked; a descriptor the receiver had no room for is closed by the
 * kernel). */
int scm_rights_recv(int chan, void *payload, size_t cap, size_t *len);

/* As scm_rights_recv, but the datagram stays queued: the descriptor returned is
 * a new reference to what it carries. */
int scm_rights_peek(int chan, void *payload, size_t cap, size_t *len);

/* Dequeues the datagram at the head of chan without receiving its
 * descriptor (the kernel drops the message's reference). 0, or -1 with
 * errno (EAGAIN: nothing queued). */
int scm_rights_drop(int chan);

#endif

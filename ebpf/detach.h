/* detach.h: a tool's BPF links taken off together. Each link's release
 * waits for the kernel's grace period on its own, one after another when a
 * skeleton is destroyed; off in threads of their own, the waits overlap.
 * The tracer and the diagnosis call it before destroying their skeletons. */
#ifndef ACCEPTLAB_DETACH_H
#define ACCEPTLAB_DETACH_H

struct bpf_object_skeleton;

/* Destroys every link of the n skeletons, at once, and clears them (the
 * skeletons' own destroy then has none left to take off). */
void links_destroy_together(struct bpf_object_skeleton *const *skels, int n);

#endif

/* detach.c: links taken off together (see detach.h). */
#include <pthread.h>
#include <bpf/libbpf.h>

#include "detach.h"

#define MAX_LINKS 64

static void *destroy_one(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

void links_destroy_together(struct bpf_object_skeleton *const *skels, int n)
{
	pthread_t th[MAX_LINKS];
	int nt = 0;

	for (int k = 0; k < n; k++) {
		if (!skels[k])
			continue;
		for (int i = 0; i < skels[k]->prog_cnt; i++) {
			struct bpf_link **link = skels[k]->progs[i].link;

			if (!link || !*link)
				continue;
			if (nt == MAX_LINKS || pthread_create(&th[nt], NULL, destroy_one, *link) != 0)
				bpf_link__destroy(*link); /* no thread: here, in turn */
			else
				nt++;
			*link = NULL;
		}
	}
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
}

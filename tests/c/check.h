/* check.h: the C unit tests' shared harness: CHECK counts a pass or prints
 * a failure naming its case, and guard-page buffers place an input so that it
 * ends exactly at a PROT_NONE page (as picohttpparser's tests do), with the
 * data pages read-only, so any read past buf[len - 1] or any write crashes
 * instead of passing silently. Header-only: each test is one program. */
#ifndef ACCEPTLAB_TEST_CHECK_H
#define ACCEPTLAB_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int passed, failed, cases;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (cond) {                                                  \
			passed++;                                            \
		} else {                                                     \
			failed++;                                            \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);          \
			printf(__VA_ARGS__);                                 \
			printf("\n");                                        \
		}                                                            \
	} while (0)

/* A string literal with its exact length (embedded NULs included). */
#define L(s) (s), (sizeof(s) - 1)
/* Expects a whole literal to parse as one head of its full length. */
#define EXPECT_WHOLE(name, s) expect_status((name), L(s), (int)(sizeof(s) - 1))

/* ---- guard-page buffers ------------------------------------------------ */

struct gbuf {
	char *map;
	size_t maplen;
	const char *p; /* the copy; p[len] is the first byte of the guard page */
	size_t len;
};

/* Marked unused, as is gb_free: a test without parser inputs (test_conn_queue)
 * has no use for them, and -Werror would reject the unused statics. */
__attribute__((unused))
static struct gbuf gb_make(const void *data, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t datapages = len == 0 ? 1 : (len + pg - 1) / pg;
	struct gbuf g;
	char *dst;

	g.maplen = (datapages + 1) * pg;
	g.map = mmap(NULL, g.maplen, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.map == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	if (mprotect(g.map + datapages * pg, pg, PROT_NONE) != 0) {
		perror("mprotect guard");
		exit(2);
	}
	dst = g.map + datapages * pg - len;
	if (len)
		memcpy(dst, data, len);
	/* The parser takes const char *: a write would be a bug, make it fault. */
	if (mprotect(g.map, datapages * pg, PROT_READ) != 0) {
		perror("mprotect data");
		exit(2);
	}
	g.p = dst;
	g.len = len;
	return g;
}

__attribute__((unused))
static void gb_free(struct gbuf *g)
{
	munmap(g->map, g->maplen);
	g->map = NULL;
}

/* Runs one case (a static void test_*(void)) and counts it. A case that
 * ran no check at all (returned early, looped zero times) proved nothing:
 * that is a failure naming it. */
#define RUN(fn) run_case(#fn, fn)

__attribute__((unused))
static void run_case(const char *name, void (*fn)(void))
{
	int before = passed + failed;

	fn();
	cases++;
	if (passed + failed == before) {
		failed++;
		printf("FAIL %s: ran no check\n", name);
	}
}

/* The closing line every runner reads, "N passed, N failed in N cases"
 * (tests/test_c_units.py checks each number); returns the exit status. */
static int check_summary(void)
{
	printf("%d passed, %d failed in %d cases\n", passed, failed, cases);
	return failed ? 1 : 0;
}

#endif

/* test_advice.c: bin/acceptlab-diagnose's advice file parser (ebpf/advice.c)
 * under ASan/UBSan: the rows of a variant at the diagnosed worker count or
 * the nearest one, in the file's order; every malformed file refused whole
 * with one line naming the line at fault; and the file found where
 * advice_locate says. Each input sits against a guard page (check.h's
 * gbuf, copied into a writable buffer that ends at one: the parser writes
 * NULs into its text), so a read past its end crashes. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "advice.h"

/* A writable copy of s (and the one byte past it advice_parse may write)
 * ending exactly at a PROT_NONE page. */
struct wbuf {
	char *map;
	size_t maplen;
	char *p;
	size_t len;
};

static struct wbuf wb_make(const char *s, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), pages = (len + 1) / pg + 1;
	struct wbuf w;

	w.maplen = (pages + 1) * pg;
	w.map = mmap(NULL, w.maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w.map == MAP_FAILED || mprotect(w.map + pages * pg, pg, PROT_NONE)) {
		perror("mmap");
		exit(2);
	}
	w.p = w.map + pages * pg - len - 1;
	memcpy(w.p, s, len);
	w.p[len] = 'X'; /* not a NUL: the parser must not rely on one */
	w.len = len;
	return w;
}

static int parse(struct advice *a, const char *text, size_t len, const char *variant, int workers)
{
	struct wbuf w = wb_make(text, len);
	int rc;

	memset(a, 0, sizeof(*a));
	rc = advice_parse(a, w.p, w.len, "advice.tsv", variant, workers);
	/* The lines point into the buffer: keep copies before it goes. */
	for (int i = 0; i < a->nlines; i++)
		a->lines[i].text = strdup(a->lines[i].text);
	munmap(w.map, w.maplen);
	return rc;
}

static void drop(struct advice *a)
{
	for (int i = 0; i < a->nlines; i++)
		free((char *)a->lines[i].text);
	a->nlines = 0;
}

static const char FILE_OK[] =
	"# run 20261201T215523Z\n"
	"# variant\tworkers\tkind\ttext\n"
	"bare\t2\tmeasured\tBare at 2.\n"
	"bare\t2\talternative\tReuseport at 2.\n"
	"bare\t4\tmeasured\tBare at 4.\n"
	"reuseport\t2\tmeasured\tReuseport, its own, at 2.\n"
	"\n"
	"bare\t8\tmeasured\tBare at 8 \xc2\xb1 0.1.\n"
	"bare\t2\tsetting\tnginx: `accept_mutex on;`.\n"
	"bare\t4\tcost\tCost at 4.\n";

static void test_exact_count_in_file_order(void)
{
	struct advice a;

	CHECK(parse(&a, L(FILE_OK), "bare", 2) == 0 && a.found, "%s", a.why);
	CHECK(!strcmp(a.run, "20261201T215523Z"), "run %s", a.run);
	CHECK(a.workers == 2 && a.asked == 2 && a.nlines == 3, "workers %d lines %d", a.workers, a.nlines);
	CHECK(a.nlines == 3 && !strcmp(a.lines[0].kind, "measured") && !strcmp(a.lines[0].text, "Bare at 2.") &&
		      !strcmp(a.lines[1].kind, "alternative") && !strcmp(a.lines[2].kind, "setting") &&
		      !strcmp(a.lines[2].text, "nginx: `accept_mutex on;`."),
	      "the rows of bare at 2, in order");
	drop(&a);
	CHECK(parse(&a, L(FILE_OK), "bare", 8) == 0 && a.nlines == 1 && !strcmp(a.lines[0].text, "Bare at 8 \xc2\xb1 0.1."),
	      "UTF-8 text kept as it is");
	drop(&a);
}

static void test_nearest_count(void)
{
	struct advice a;
	char text[128];

	CHECK(parse(&a, L(FILE_OK), "bare", 3) == 0 && a.workers == 4 && a.asked == 3 && a.nlines == 2,
	      "3: between 2 and 4 the larger (%d)", a.workers);
	advice_count_text(&a, text, sizeof(text));
	CHECK(!strcmp(text, "measured at 4 workers, the nearest to your 3"), "%s", text);
	drop(&a);
	CHECK(parse(&a, L(FILE_OK), "bare", 1) == 0 && a.workers == 2, "1: 2 (%d)", a.workers);
	drop(&a);
	CHECK(parse(&a, L(FILE_OK), "bare", 5) == 0 && a.workers == 4, "5: 4 (%d)", a.workers);
	drop(&a);
	CHECK(parse(&a, L(FILE_OK), "bare", 64) == 0 && a.workers == 8, "64: 8 (%d)", a.workers);
	drop(&a);
	CHECK(parse(&a, L(FILE_OK), "reuseport", 16) == 0 && a.workers == 2 && a.nlines == 1, "reuseport: only 2");
	advice_count_text(&a, text, sizeof(text));
	CHECK(!strcmp(text, "measured at 2 workers, the nearest to your 16"), "%s", text);
	drop(&a);
	CHECK(parse(&a, L(FILE_OK), "bare", 2) == 0, "2");
	advice_count_text(&a, text, sizeof(text));
	CHECK(!strcmp(text, "measured at 2 workers, as diagnosed"), "%s", text);
	drop(&a);
}

static void test_no_rows(void)
{
	struct advice a;

	CHECK(parse(&a, L(FILE_OK), "blocking", 2) < 0 && !a.found && strstr(a.why, "no rows for blocking") &&
		      strstr(a.why, "20261201T215523Z"),
	      "a variant without rows: %s", a.why);
	CHECK(parse(&a, L(FILE_OK), NULL, 2) < 0 && strstr(a.why, "no closest variant"), "%s", a.why);
	CHECK(parse(&a, L(FILE_OK), "bare", 0) < 0 && strstr(a.why, "no worker"), "%s", a.why);
	CHECK(parse(&a, L("# run X\n"), "bare", 2) < 0 && strstr(a.why, "no rows for bare"), "only the run: %s", a.why);
}

/* Each malformed file is refused whole, naming the line. */
static void test_malformed(void)
{
	static const struct { const char *text; const char *says; } bad[] = {
		{ "", "empty" },
		{ "bare\t2\tmeasured\tx.\n", "line 1 is not" },
		{ "# run\n", "line 1 is not" },
		{ "# run A B\n", "line 1 is not" },
		{ "# run 2026\x01\n", "line 1 is not" },
		{ "# a comment\n# run X\n", "line 1 is not" },
		{ "# run X\nbare\t2\tmeasured\n", "line 2 has 3 tab-separated fields" },
		{ "# run X\nbare 2 measured text\n", "line 2 has 1 tab-separated field," },
		{ "# run X\nbare\t2\tmeasured\ta\tb\n", "line 2 has more than 4" },
		{ "# run X\nBare\t2\tmeasured\tx.\n", "line 2: the variant" },
		{ "# run X\n\t2\tmeasured\tx.\n", "line 2: the variant" },
		{ "# run X\nbare\ttwo\tmeasured\tx.\n", "line 2: the worker count" },
		{ "# run X\nbare\t0\tmeasured\tx.\n", "line 2: the worker count" },
		{ "# run X\nbare\t-2\tmeasured\tx.\n", "line 2: the worker count" },
		{ "# run X\nbare\t99999999999\tmeasured\tx.\n", "line 2: the worker count" },
		{ "# run X\nbare\t2\tadvice\tx.\n", "line 2: the kind" },
		{ "# run X\nbare\t2\tmeasured\t\n", "line 2: the text" },
		{ "# run X\nbare\t2\tmeasured\tbad \xff byte.\n", "line 2: the text" },
		{ "# run X\nbare\t2\tmeasured\tcut \xc2", "line 2: the text" },
		{ "# run X\nbare\t2\tmeasured\toverlong \xc0\xaf.\n", "line 2: the text" },
		{ "# run X\nbare\t2\tmeasured\tsurrogate \xed\xa0\x80.\n", "line 2: the text" },
		{ "# run X\nbare\t2\tmeasured\tbell \x07.\n", "line 2: the text" },
		{ "# run X\nreuseport\t2\tmeasured\tok.\nbare\t2\tmeasured\tok.\nbare\t2\tkind\tx.\n", "line 4: the kind" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct advice a;
		int rc = parse(&a, bad[i].text, strlen(bad[i].text), "bare", 2);

		CHECK(rc < 0 && !a.found && a.nlines == 0 && strstr(a.why, "advice.tsv: malformed") &&
			      strstr(a.why, bad[i].says) && !strchr(a.why, '\n'),
		      "case %zu: rc %d, why \"%s\", wanted \"%s\"", i, rc, a.why, bad[i].says);
	}
	{
		struct advice a;
		static const char nul[] = "# run X\nbare\t2\tmeasured\tN\0L.\n";

		CHECK(parse(&a, L(nul), "bare", 2) < 0 && strstr(a.why, "NUL"), "a NUL byte: %s", a.why);
	}
}

static void test_tolerated(void)
{
	struct advice a;

	CHECK(parse(&a, L("# run X\r\nbare\t2\tmeasured\tCRLF.\r\n\r\n# note\tTabs in a comment.\n"), "bare", 2) == 0 &&
		      a.nlines == 1 && !strcmp(a.lines[0].text, "CRLF.") && !strcmp(a.run, "X"),
	      "CRLF line ends, blank lines, a comment with tabs: %s", a.why);
	drop(&a);
	CHECK(parse(&a, L("# run X\nbare\t2\tmeasured\tno newline at the end."), "bare", 2) == 0 && a.nlines == 1,
	      "the last line without a newline");
	drop(&a);
}

static void test_many_lines(void)
{
	size_t cap = 100 * 40 + 32, off;
	char *text = malloc(cap);
	struct advice a;

	off = (size_t)snprintf(text, cap, "# run X\n");
	for (int i = 0; i < ADVICE_MAX_LINES + 5; i++)
		off += (size_t)snprintf(text + off, cap - off, "bare\t2\tsetting\tLine %d.\n", i);
	CHECK(parse(&a, text, off, "bare", 2) == 0 && a.nlines == ADVICE_MAX_LINES && a.more == 5,
	      "at most ADVICE_MAX_LINES kept, the rest counted (%d, %d)", a.nlines, a.more);
	drop(&a);
	free(text);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* $ACCEPTLAB_ADVICE, then PREFIX/share/acceptlab, then PREFIX/report. */
static void test_locate_and_find(void)
{
	char dir[] = "/tmp/test_advice.XXXXXX", bin[256], share[256], report[256], got[4096];
	struct advice a;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	mkdir(bin, 0755);
	unsetenv(ADVICE_ENV);
	memset(&a, 0, sizeof(a));
	CHECK(advice_locate(&a, bin, got, sizeof(got)) < 0 && strstr(a.why, "no advice file") &&
		      strstr(a.why, "/share/acceptlab/advice.tsv") && strstr(a.why, "/report/advice.tsv"),
	      "neither: %s", a.why);
	snprintf(report, sizeof(report), "%s/report", dir);
	mkdir(report, 0755);
	strcat(report, "/advice.tsv");
	write_file(report, "# run CLONE\nbare\t2\tmeasured\tFrom the clone.\n");
	CHECK(advice_locate(&a, bin, got, sizeof(got)) == 0 && !strcmp(got, report), "the clone's: %s", got);
	snprintf(share, sizeof(share), "%s/share", dir);
	mkdir(share, 0755);
	strcat(share, "/acceptlab");
	mkdir(share, 0755);
	strcat(share, "/advice.tsv");
	write_file(share, "# run INSTALLED\nbare\t2\tmeasured\tInstalled.\n");
	CHECK(advice_locate(&a, bin, got, sizeof(got)) == 0 && !strcmp(got, share), "installed first: %s", got);
	advice_find(&a, bin, "bare", 2);
	CHECK(a.found && !strcmp(a.run, "INSTALLED") && a.nlines == 1 && !strcmp(a.lines[0].text, "Installed.") &&
		      !strcmp(a.path, share),
	      "found: %s", a.why);
	advice_free(&a);
	setenv(ADVICE_ENV, report, 1);
	advice_find(&a, bin, "bare", 2);
	CHECK(a.found && !strcmp(a.run, "CLONE"), "the environment's first: %s", a.why);
	advice_free(&a);
	setenv(ADVICE_ENV, "/nonexistent/advice.tsv", 1);
	advice_find(&a, bin, "bare", 2);
	CHECK(!a.found && strstr(a.why, "/nonexistent/advice.tsv: No such file"), "missing: %s", a.why);
	advice_free(&a);
	setenv(ADVICE_ENV, dir, 1);
	advice_find(&a, bin, "bare", 2);
	CHECK(!a.found && strstr(a.why, "not a regular file"), "a directory: %s", a.why);
	advice_free(&a);
	unsetenv(ADVICE_ENV);
	unlink(share);
	unlink(report);
	*strrchr(share, '/') = '\0';
	rmdir(share);
	*strrchr(share, '/') = '\0';
	rmdir(share);
	*strrchr(report, '/') = '\0';
	rmdir(report);
	rmdir(bin);
	rmdir(dir);
}

int main(void)
{
	RUN(test_exact_count_in_file_order);
	RUN(test_nearest_count);
	RUN(test_no_rows);
	RUN(test_malformed);
	RUN(test_tolerated);
	RUN(test_many_lines);
	RUN(test_locate_and_find);
	return check_summary();
}

/* advice.h: bin/acceptlab-diagnose's "What to change", read from the
 * advice file report/advice.py writes from the CANONICAL run
 * (report/advice.tsv in a clone, share/acceptlab/advice.tsv installed).
 *
 * The file: lines starting with '#' are comments, and the first line is
 * "# run STAMP" (the run the figures come from); every other non-empty
 * line is
 *
 *     variant <TAB> workers <TAB> kind <TAB> text
 *
 * variant an acceptlab variant as closest_variant names it, workers the
 * worker count measured (a positive integer), kind one of measured,
 * alternative, cost, setting, and text one sentence (UTF-8, no tab or
 * control character). A file that breaks any of this is refused whole,
 * with the first line at fault named; nothing in it is used.
 *
 * The rows picked are those of the diagnosis's closest_variant at its
 * worker count, or, when the file has none at that count, at the nearest
 * count it has for that variant (between two as near, the larger), in the
 * file's order. No I/O but reading the file (advice_read); the parser
 * (advice_parse) works on memory, for the unit test. */
#ifndef ACCEPTLAB_ADVICE_H
#define ACCEPTLAB_ADVICE_H

#include <stddef.h>

#define ADVICE_MAX_LINES 64
#define ADVICE_MAX_BYTES (16 << 20) /* a larger file is refused */
#define ADVICE_ENV "ACCEPTLAB_ADVICE"

struct advice_line {
	const char *kind;       /* "measured" | "alternative" | "cost" | "setting" */
	const char *text;       /* into the advice's copy of the file */
};

struct advice {
	int found;              /* lines below; otherwise why says why not */
	char why[1024];         /* one line, no newline */
	char path[4096];        /* the file read, or "" when none was found */
	char run[64];           /* the run's stamp ("# run STAMP") */
	int asked;              /* the diagnosed worker count */
	int workers;            /* the measured count the lines are for */
	int nlines;
	int more;               /* rows of that variant and count left out (beyond ADVICE_MAX_LINES) */
	struct advice_line lines[ADVICE_MAX_LINES];
	char *buf;              /* the file's text, owned */
};

/* The advice file to read: $ACCEPTLAB_ADVICE when set and not empty, else
 * <prefix>/share/acceptlab/advice.tsv if it exists, else
 * <prefix>/report/advice.tsv, where prefix is the directory above the one
 * the executable is in (exe_dir). 0 with out filled; -1 with a->why set
 * (and found 0) when none exists. */
int advice_locate(struct advice *a, const char *exe_dir, char *out, size_t len);

/* Parses text (len bytes, in a buffer of len + 1: text[len] is written, a
 * NUL ending the last line; no copy is made, the lines point into it) as
 * an advice file and picks the rows of variant at workers (see above).
 * name is the file's name for the messages. 0 and a->found = 1 with the
 * lines; -1 with a->why (malformed, no rows for the variant, no variant,
 * no worker). */
int advice_parse(struct advice *a, char *text, size_t len, const char *name, const char *variant, int workers);

/* advice_locate, then reads and parses the file: the advice for variant at
 * workers, or a->found 0 with a->why. Never fails otherwise. */
void advice_find(struct advice *a, const char *exe_dir, const char *variant, int workers);

/* A sentence on which count the lines are for: "measured at 2 workers, as
 * diagnosed" or "measured at 4 workers, the nearest to your 3". */
void advice_count_text(const struct advice *a, char *out, size_t len);

void advice_free(struct advice *a);

#endif

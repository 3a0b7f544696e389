/* diagnose_print.h: bin/acceptlab-diagnose's output, to stdout: the human
 * table and verdict, or JSON lines ("detected", "diagnosis"). */
#ifndef ACCEPTLAB_DIAGNOSE_PRINT_H
#define ACCEPTLAB_DIAGNOSE_PRINT_H

#include <stdio.h>

#include "advice.h"
#include "detect.h"
#include "diagnosis.h"

/* s as a JSON string, quotes included (NULL: null). */
void json_string(FILE *f, const char *s);

/* {"kind":"detected",...}: the listeners, holders, registrations and the
 * threads seen waiting, as read before anything is attached. */
void diag_print_detected_json(const struct detection *d, const struct selector_found *sel);

/* {"kind":"diagnosis",...}, the last line; cannot: what was not possible
 * (not root), or NULL; adv: the advice found (or why none). */
void diag_print_json(const struct diagnosis *g, const char *cannot, const struct advice *adv);

/* The human output: a line naming the mechanism, the table of workers, the
 * listeners and holders in brief, the verdict paragraph, and "What to
 * change" (the advice's lines, or why there are none). */
void diag_print_text(const struct diagnosis *g, const struct detection *d, const char *cannot,
		     const struct advice *adv);

#endif

/* fair_split.h: how likely a split is under a fair, uniform random spread.
 *
 * n connections land on k workers independently and uniformly (each worker
 * 1/k: SO_REUSEPORT's 4-tuple hash without BPF is this), so the counts
 * X_1..X_k are multinomial(n; 1/k, ..., 1/k). These are exact chances, not
 * simulated nor approximated, for every n up to FAIR_SPLIT_MAX_N and k up
 * to FAIR_SPLIT_MAX_K, computed to floating-point accuracy: where the tests
 * check them (exact counts, an independent recurrence, the two methods
 * against each other at the top sizes) the relative error is below 1e-10,
 * and usually near 1e-15 (fair_split.c's header says how, and where the
 * error comes from; on other than x86, where it computes in double, it
 * may be about 1e-8). A call takes milliseconds; the slowest,
 * fair_split_chance_outside_2to1 at n = 100000, k = 256, about 0.4 s.
 *
 * Every function returns a chance in [0, 1], or NAN with errno EINVAL for
 * arguments out of range (n < 0 or above FAIR_SPLIT_MAX_N, k < 1 or above
 * FAIR_SPLIT_MAX_K), or ENOMEM. A chance below the smallest double
 * (about 1e-308; e.g. one worker taking all of 2000 connections over 2)
 * comes out as 0. Thread-safe: no state is kept between calls.
 *
 * Compiled into a program as a source (cc ... common/fair_split.c -lm);
 * tests/c/test_fair_split.c checks it against brute-force enumeration and
 * an independent recurrence, and tests/test_c_units.py against
 * models/spread.py's exact big-integer counts. */
#ifndef ACCEPTLAB_FAIR_SPLIT_H
#define ACCEPTLAB_FAIR_SPLIT_H

#define FAIR_SPLIT_MAX_N 100000L
#define FAIR_SPLIT_MAX_K 256

/* P(max_i X_i >= m): the chance that the busiest worker of a fair split of
 * n over k gets at least m, i.e. that a fair split is at least as uneven,
 * by its largest share, as one whose busiest worker got m. 1 for
 * m <= ceil(n/k) (some worker always gets that many), 0 for m > n. */
double fair_split_chance_max_at_least(long n, int k, long m);

/* P(lo <= X_i <= hi for every i): every worker gets between lo and hi
 * connections, both included. */
double fair_split_chance_all_within(long n, int k, long lo, long hi);

/* P(outside 2:1): max > 2 x min, a worker with none counting as outside,
 * as models/spread.py's analytic() and acceptlab/balance.py's
 * within_2to1 define it (1 when n < k). Computed as 1 - P(inside), so its
 * error is absolute, not relative (about 1e-16; the tests allow 1e-13): a
 * result under about 1e-15 says "no more than that", not its digits. */
double fair_split_chance_outside_2to1(long n, int k);

#endif

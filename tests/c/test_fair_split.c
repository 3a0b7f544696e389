/* test_fair_split.c: unit tests for common/fair_split.c, the exact chances
 * of a fair multinomial split. Checked three ways here: against brute-force
 * enumeration of every split for tiny n and k (exact integer counts),
 * against an independent recurrence in long double for medium sizes (the
 * split's workers one at a time, each a binomial of what is left), and for
 * the top sizes (n = 100000, k up to 256, where nothing else is at hand)
 * its two ways of computing P(max >= m) against each other and its
 * invariants. tests/test_c_units.py also checks it against
 * models/spread.py's big-integer counts, through --table:
 *
 *     build/test_fair_split --table < cases
 *
 * reads lines "n k m" and prints, per line, "n k m P(max >= m)
 * P(outside 2:1) P(all <= m - 1)" with 17 significant digits. */
#include "fair_split.h"

#include <errno.h>
#include <math.h>

#include "check.h"

/* |got - want| within rel of want, or within abs. */
static int close_to(double got, double want, double rel, double abs)
{
	return fabs(got - want) <= rel * fabs(want) + abs;
}

/* ---- brute force: every split of n over k, with its number of assignments */

#define BF_MAX_N 14
#define BF_MAX_K 5

struct bf {
	int n, k;
	unsigned long long total;                   /* k^n */
	unsigned long long max_ge[BF_MAX_N + 2];    /* assignments with max >= m */
	unsigned long long within[BF_MAX_N + 1][BF_MAX_N + 1]; /* all in [lo, hi] */
	unsigned long long outside;                 /* max > 2 min or min == 0 */
};

static unsigned long long binom(int n, int r)
{
	unsigned long long v = 1;

	for (int i = 1; i <= r; i++)
		v = v * (unsigned long long)(n - r + i) / (unsigned long long)i;
	return v;
}

static void bf_walk(struct bf *b, int worker, int left, int mn, int mx, unsigned long long ways)
{
	if (worker == b->k - 1) {
		int c = left;

		mn = c < mn ? c : mn;
		mx = c > mx ? c : mx;
		for (int m = 0; m <= mx; m++)
			b->max_ge[m] += ways;
		for (int lo = 0; lo <= mn; lo++)
			for (int hi = mx; hi <= b->n; hi++)
				b->within[lo][hi] += ways;
		if (mn == 0 || mx > 2 * mn)
			b->outside += ways;
		return;
	}
	for (int c = 0; c <= left; c++)
		bf_walk(b, worker + 1, left - c, c < mn ? c : mn, c > mx ? c : mx, ways * binom(left, c));
}

static void bf_count(struct bf *b, int n, int k)
{
	memset(b, 0, sizeof(*b));
	b->n = n;
	b->k = k;
	b->total = 1;
	for (int i = 0; i < n; i++)
		b->total *= (unsigned long long)k;
	bf_walk(b, 0, n, n + 1, -1, 1);
}

static void test_brute_force(void)
{
	static struct bf b;
	int bad = 0, checks = 0;

	for (int k = 1; k <= BF_MAX_K; k++)
		for (int n = 0; n <= BF_MAX_N; n++) {
			bf_count(&b, n, k);
			for (int m = 0; m <= n + 1 && !bad; m++) {
				double want = (double)b.max_ge[m] / (double)b.total, got = fair_split_chance_max_at_least(n, k, m);

				checks++;
				if (!close_to(got, want, 1e-12, 1e-300)) {
					CHECK(0, "n %d k %d: P(max >= %d) = %.17g, brute force %.17g", n, k, m, got, want);
					bad = 1;
				}
			}
			for (int lo = 0; lo <= n && !bad; lo++)
				for (int hi = lo; hi <= n && !bad; hi++) {
					double want = (double)b.within[lo][hi] / (double)b.total;
					double got = fair_split_chance_all_within(n, k, lo, hi);

					checks++;
					if (!close_to(got, want, 1e-12, 1e-300)) {
						CHECK(0, "n %d k %d: P(all in [%d, %d]) = %.17g, brute force %.17g", n, k, lo, hi,
						      got, want);
						bad = 1;
					}
				}
			if (!bad) {
				double want = (double)b.outside / (double)b.total, got = fair_split_chance_outside_2to1(n, k);

				checks++;
				if (!close_to(got, want, 1e-12, 1e-14)) {
					CHECK(0, "n %d k %d: P(outside 2:1) = %.17g, brute force %.17g", n, k, got, want);
					bad = 1;
				}
			}
		}
	CHECK(!bad && checks > 4000, "brute force: %d comparisons for n <= %d, k <= %d", checks, BF_MAX_N, BF_MAX_K);
}

/* ---- an independent recurrence (long double), for medium sizes --------- */

/* P(max_i X_i >= m), the workers taken one at a time: given s connections
 * on the first i - 1 (all of them below m), worker i's count is
 * Bin(n - s, 1/(k - i + 1)); the chance that it reaches m is added up as it
 * goes, so every term is positive and a far tail keeps its digits. */
static long double dp_max_at_least(int n, int k, int m)
{
	long double *cur = calloc((size_t)n + 1, sizeof(long double)), *next = calloc((size_t)n + 1, sizeof(long double));
	long double reached = 0;

	cur[0] = 1;
	for (int i = 1; i <= k; i++) {
		long double p = 1.0L / (long double)(k - i + 1), lq = log1pl(-p);

		memset(next, 0, sizeof(long double) * (size_t)(n + 1));
		for (int s = 0; s <= n; s++) {
			int r = n - s;

			if (cur[s] == 0)
				continue;
			if (i == k) { /* the last worker takes what is left */
				if (r >= m)
					reached += cur[s];
				continue;
			}
			/* Bin(r, p)'s terms by their ratio, from the first (long double's
			 * range holds q^r for every r here). */
			long double pmf = expl((long double)r * lq), ratio = p / (1 - p);

			for (int j = 0; j <= r; j++) {
				if (j < m)
					next[s + j] += cur[s] * pmf;
				else
					reached += cur[s] * pmf;
				pmf *= (long double)(r - j) / (long double)(j + 1) * ratio;
			}
		}
		memcpy(cur, next, sizeof(long double) * (size_t)(n + 1));
	}
	free(cur);
	free(next);
	return reached;
}

static void test_against_recurrence(void)
{
	static const int cases[][2] = { { 200, 3 }, { 500, 4 }, { 1000, 2 }, { 400, 6 }, { 300, 16 }, { 200, 40 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = cases[i][0], k = cases[i][1], mu = (n + k - 1) / k, worst_m = 0;
		double worst = 0;

		/* From the fair share up into the far tail: every way P(max >= m) is computed. */
		for (int m = mu; m <= n && m <= 3 * mu + 40; m += 1 + mu / 12) {
			long double want = dp_max_at_least(n, k, m);
			double got = fair_split_chance_max_at_least(n, k, m), err;

			if (want < 1e-250L)
				break;
			err = (double)fabsl(((long double)got - want) / want);
			if (err > worst)
				worst = err, worst_m = m;
		}
		CHECK(worst < 1e-10, "n %d k %d: P(max >= m) against the recurrence: worst relative error %.3g at m %d",
		      n, k, worst, worst_m);
		printf("recurrence n %d k %d: worst relative error %.2g (m %d)\n", n, k, worst, worst_m);
	}
}

/* ---- the top sizes ------------------------------------------------------ */

static void test_top_sizes_agree_and_are_monotone(void)
{
	static const int ks[] = { 2, 3, 16, 100, 256 };
	const long n = FAIR_SPLIT_MAX_N;

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		int k = ks[i], monotone = 1, agree = 1, compared = 0;
		long first = (n + k - 1) / k, step = (long)(sqrt(n * (1.0 / k) * (1 - 1.0 / k)) / 8) + 1;
		double prev = 1, worst = 0;

		/* From the fair share to 8 standard deviations of one worker's count above it. */
		for (long m = first; m <= first + 64 * step; m += step) {
			double p = fair_split_chance_max_at_least(n, k, m);
			double other = 1 - fair_split_chance_all_within(n, k, 0, m - 1);

			if (!(p >= 0 && p <= prev))
				monotone = 0;
			prev = p;
			/* Where both ways are accurate (the complement to about 1e-16
			 * absolute, inclusion-exclusion to S1^2/6 relative), they agree. */
			if (p > 1e-6 && p < 1e-3) {
				double err = fabs(p - other) / p;

				compared++;
				if (err > worst)
					worst = err;
				if (err > 1e-9)
					agree = 0;
			}
		}
		CHECK(monotone, "n %ld k %d: P(max >= m) not in [0, 1] or not falling with m", n, k);
		CHECK(agree && compared > 0, "n %ld k %d: the two ways disagree: worst %.3g over %d", n, k, worst, compared);
		printf("top n %ld k %d: the two ways within %.2g of each other at %d m\n", n, k, worst, compared);
	}
	CHECK(fair_split_chance_max_at_least(n, 256, (n + 255) / 256) == 1, "the fair share is always reached");
	CHECK(fair_split_chance_max_at_least(n, 256, n) == 0, "one worker taking all of 100000 underflows to 0");
	CHECK(close_to(fair_split_chance_max_at_least(n, 2, n / 2 + 1), 1 - exp(lgamma(n + 1.0) - 2 * lgamma(n / 2 + 1.0) - n * log(2.0)),
		       1e-12, 0),
	      "k 2: the busiest above half unless it is exactly even");
}

static void test_outside_2to1(void)
{
	static const struct { long n; int k; } cases[] = { { 100000, 2 }, { 100000, 16 }, { 20000, 256 }, { 3000, 64 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double p = fair_split_chance_outside_2to1(cases[i].n, cases[i].k);

		CHECK(p >= 0 && p <= 1, "n %ld k %d: P(outside 2:1) %g not in [0, 1]", cases[i].n, cases[i].k, p);
	}
	/* k = 2: exactly twice a binomial tail below ceil(n/3). */
	CHECK(close_to(fair_split_chance_outside_2to1(30, 2), 2 * 0.02138697262853384, 1e-12, 0),
	      "n 30 k 2: %.17g", fair_split_chance_outside_2to1(30, 2));
	CHECK(fair_split_chance_outside_2to1(5, 8) == 1, "fewer connections than workers: outside");
	CHECK(fair_split_chance_outside_2to1(7, 1) == 0, "one worker is never outside 2:1");
	CHECK(fair_split_chance_outside_2to1(0, 1) == 1, "one worker with none is outside");
}

static void test_bad_arguments(void)
{
	errno = 0;
	CHECK(isnan(fair_split_chance_max_at_least(-1, 2, 1)) && errno == EINVAL, "n < 0");
	errno = 0;
	CHECK(isnan(fair_split_chance_max_at_least(FAIR_SPLIT_MAX_N + 1, 2, 1)) && errno == EINVAL, "n too big");
	errno = 0;
	CHECK(isnan(fair_split_chance_all_within(10, 0, 0, 10)) && errno == EINVAL, "k 0");
	errno = 0;
	CHECK(isnan(fair_split_chance_outside_2to1(10, FAIR_SPLIT_MAX_K + 1)) && errno == EINVAL, "k too big");
	CHECK(fair_split_chance_max_at_least(10, 3, 11) == 0 && fair_split_chance_max_at_least(10, 3, -5) == 1,
	      "m above n, m below 0");
	CHECK(fair_split_chance_all_within(10, 3, 5, 4) == 0 && fair_split_chance_all_within(10, 3, 4, 100) == 0 &&
		      fair_split_chance_all_within(10, 3, -3, 3) == 0 && fair_split_chance_all_within(10, 3, -1, 99) == 1,
	      "empty, impossible and certain windows");
}

/* --table: "n k m" lines in, the three chances out (for tests/test_c_units.py). */
static int table(void)
{
	long n, m;
	int k;

	while (scanf("%ld %d %ld", &n, &k, &m) == 3)
		printf("%ld %d %ld %.17g %.17g %.17g\n", n, k, m, fair_split_chance_max_at_least(n, k, m),
		       fair_split_chance_outside_2to1(n, k), fair_split_chance_all_within(n, k, 0, m - 1));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--table") == 0)
		return table();
	RUN(test_brute_force);
	RUN(test_against_recurrence);
	RUN(test_top_sizes_agree_and_are_monotone);
	RUN(test_outside_2to1);
	RUN(test_bad_arguments);
	return check_summary();
}

/* fair_split.c: exact chances of a fair multinomial split (fair_split.h).
 *
 * The core is G(lo, hi) = P(lo <= X_i <= hi for all i), for X ~
 * multinomial(n; 1/k each):
 *
 *     G = n!/k^n [x^n] f(x)^k,   f(x) = sum_{j=lo..hi} x^j/j!.
 *
 * Evaluated as it stands, the coefficient is a huge number times a tiny one.
 * Substituting x = lambda*y turns f into lambda-tilted Poisson weights
 * e^{w_j} = lambda^(j-j0) j0!/j!, j0 = floor(n/k), so that
 *
 *     G = [n!/(j0!^k k^n)] lambda^-(n - k j0) (sum_j e^{w_j})^k P(S = n),
 *
 * where S is the sum of k independent draws from the normalised weights
 * q_j. Any lambda gives the same G; we choose the one whose weights have
 * mean n/k (Newton's method on log lambda), so that n is the centre of S's
 * distribution and P(S = n) is of order 1/sqrt(2 pi k var) (at least about
 * 1e-3 here), never a far tail. The weights come from the recurrence
 * w_{j+1} = w_j + log lambda - log(j+1) (no large lgamma differences);
 * those below e^-TRIM of the largest are dropped. P(S = n) is one
 * coefficient of the k-th convolution power of q: q's discrete Fourier
 * transform (a real one, packed into a complex one of half the size) on N
 * points, raised to the k-th power pointwise, and the one coefficient
 * summed back. N is a power of two above k (width of q), so that the
 * circular convolution is the linear one, or smaller when Bernstein's
 * inequality bounds what folds onto n from N away below e^-ALIAS. The
 * prefactor's logarithm is taken from Stirling's series with its remainder
 * (Loader's stirlerr), written so that no two large terms cancel:
 * log(n!/(j0!^k k^n)) = k j0 log1p(r/(k j0)) + r log(n/k) - r +
 * log(2 pi n)/2 - k log(2 pi j0)/2 + se(n) - k se(j0), r = n - k j0.
 * Raising to the k-th power multiplies rounding errors by k, so this part
 * runs in x86's extended precision (see ext below): G's relative error is
 * then about 1e-17, and 1 - G (as -expm1(log G)) is good to about 1e-16
 * absolute. One transform of at most 2^18 points, usually far fewer.
 *
 * P(max >= m) = 1 - G(0, m - 1) loses its relative accuracy when it is
 * small, so there inclusion-exclusion is used instead, from its first
 * terms: with p1 = P(X_1 >= m) and p12 = P(X_1 >= m, X_2 >= m),
 * S1 - S2 <= P(max >= m) <= S1 - S2 + S3, S1 = k p1, S2 = C(k,2) p12, and
 * S3 <= C(k,3) p1^3 (the multinomial's counts are negatively associated).
 * That is exact when 3m > n (no three workers can all reach m, S3 = 0;
 * when 2m > n, S2 = 0 too), and otherwise used when S1 < SMALL_S1, where
 * S3 is below S1^2/6 of S1 (a relative error under 2e-11); above it, the
 * complement's 1e-16 is under 1e-11 of the result. The binomial terms are
 * Loader's saddle-point dbinom, summed outward from where they are largest.
 *
 * P(outside 2:1) = 1 - sum_a P(min = a, max <= 2a), each term
 * G(a, 2a) - G(a + 1, 2a) from one transform (q's lowest weight taken off
 * pointwise); terms where P(min = a) is below NEGLIGIBLE are left out, and
 * from the a where P(max > 2a) is below it on, the rest of the sum is
 * P(min >= a) = G(a, n). k = 2 is a binomial tail. */
#include "fair_split.h"

#include <complex.h>
#include <errno.h>
#include <stdlib.h>
#include <tgmath.h> /* log, exp, ... of whatever type they are given: double or ext */

/* G's own arithmetic (weights, transform, prefactor): raising to the k-th
 * power multiplies a relative error by k, so with doubles G is good to
 * about k x 1e-16 (3e-14 at k = 256). x86's 64-bit-mantissa long double,
 * in hardware, makes that about 1e-17; elsewhere long double may be
 * software quad (far slower), so there it is double, and P(max >= m) near
 * the method switch is good to about 1e-8 instead of 1e-11. */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(FAIR_SPLIT_DOUBLE) /* -DFAIR_SPLIT_DOUBLE: try the plain path */
typedef long double ext;
typedef long double complex cext;
#else
typedef double ext;
typedef double complex cext;
#endif
#define EXT_PI ((ext)3.141592653589793238462643383279503L)

#define LN_2PI 1.837877066409345483560659472811L /* log(2 pi) */
/* Cut-offs of P(S = n), which is at least about 1/sqrt(2 pi n) > 1e-3: */
#define TRIM 64.0   /* weights below e^-64 (2e-28) of the largest are dropped: under 1e-18 of P(S = n) */
#define ALIAS 60.0L /* what folds onto P(S = n) from N away is below 2 e^-60: under 1e-22 of it */
#define NEGLIGIBLE 1e-20                         /* outside 2:1: a term or tail this small is left out */
/* P(max >= m): below this, inclusion-exclusion (where the complement's
 * absolute error, about 1e-16 in ext, 3e-14 in double, is the larger). */
#define SMALL_S1 (sizeof(ext) > sizeof(double) ? 1e-5 : 1e-4)

static int valid(long n, int k)
{
	if (n < 0 || n > FAIR_SPLIT_MAX_N || k < 1 || k > FAIR_SPLIT_MAX_K) {
		errno = EINVAL;
		return 0;
	}
	return 1;
}

/* ---- binomial terms (Loader, "Fast and accurate computation of binomial
 * probabilities", 2000) -------------------------------------------------- */

/* log(n!) for a small n, as a sum (lgamma is not thread-safe: signgam). */
static ext log_factorial_small(long n)
{
	ext v = 0;

	for (long i = 2; i <= n; i++)
		v += log((ext)i);
	return v;
}

/* log(n!) - log(sqrt(2 pi n) (n/e)^n), n >= 1 an integer (Stirling's remainder). */
static ext stirlerr_ext(ext n)
{
	const ext S0 = 1.0L / 12, S1 = 1.0L / 360, S2 = 1.0L / 1260, S3 = 1.0L / 1680, S4 = 1.0L / 1188;
	ext nn = n * n;

	if (n <= 15)
		return log_factorial_small((long)n) - (n + 0.5L) * log(n) + n - LN_2PI / 2;
	if (n > 500)
		return (S0 - S1 / nn) / n;
	if (n > 80)
		return (S0 - (S1 - S2 / nn) / nn) / n;
	if (n > 35)
		return (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n;
	return (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n;
}

static double stirlerr(double n)
{
	return (double)stirlerr_ext(n);
}

/* x log(x/np) + np - x, without cancellation when x is near np. */
static double bd0(double x, double np)
{
	if (fabs(x - np) < 0.1 * (x + np)) {
		double v = (x - np) / (x + np), s = (x - np) * v, ej = 2 * x * v;

		v *= v;
		for (int j = 1; j < 1000; j++) {
			double s1;

			ej *= v;
			s1 = s + ej / (2 * j + 1);
			if (s1 == s)
				return s1;
			s = s1;
		}
		return s;
	}
	return x * log(x / np) + np - x;
}

/* log P(Bin(n, p) = x), 0 < p < 1. */
static double log_dbinom(long x, long n, double p)
{
	double q = 1 - p;

	if (x < 0 || x > n)
		return -INFINITY;
	if (x == 0)
		return n * log1p(-p);
	if (x == n)
		return n * log(p);
	return stirlerr((double)n) - stirlerr((double)x) - stirlerr((double)(n - x)) - bd0((double)x, n * p) -
	       bd0((double)(n - x), n * q) +
	       0.5 * (log((double)n) - (double)LN_2PI - log((double)x) - log((double)(n - x)));
}

/* P(Bin(n, p) >= m), summed from whichever side is the tail. */
static double binom_upper(long n, double p, long m)
{
	double sum = 0, term;

	if (m <= 0)
		return 1;
	if (m > n)
		return 0;
	if (p >= 1)
		return 1;
	if (m - 1 < n * p) {
		/* The lower tail P(<= m - 1) is the short side: sum it downward. */
		long j = m - 1;

		term = exp(log_dbinom(j, n, p));
		for (; j >= 0 && term > 0; j--) {
			sum += term;
			if (term < sum * 1e-17)
				break;
			term *= (double)j / (double)(n - j + 1) * (1 - p) / p;
		}
		return sum >= 1 ? 0 : 1 - sum;
	}
	term = exp(log_dbinom(m, n, p));
	for (long j = m; j <= n && term > 0; j++) {
		sum += term;
		if (term < sum * 1e-17)
			break;
		term *= (double)(n - j) / (double)(j + 1) * p / (1 - p);
	}
	return sum > 1 ? 1 : sum;
}

/* P(Bin(n, p) <= a). */
static double binom_lower(long n, double p, long a)
{
	if (a < 0)
		return 0;
	if (a >= n)
		return 1;
	if (a < n * p) {
		double sum = 0, term = exp(log_dbinom(a, n, p));

		for (long j = a; j >= 0 && term > 0; j--) {
			sum += term;
			if (term < sum * 1e-17)
				break;
			term *= (double)j / (double)(n - j + 1) * (1 - p) / p;
		}
		return sum > 1 ? 1 : sum;
	}
	return 1 - binom_upper(n, p, a + 1);
}

/* ---- P(S = s) for S a sum of k draws from q[0..len), by one FFT -------- */

static void fft(cext *a, size_t n, const cext *tw)
{
	for (size_t i = 1, j = 0; i < n; i++) {
		size_t bit = n >> 1;

		for (; j & bit; bit >>= 1)
			j ^= bit;
		j |= bit;
		if (i < j) {
			cext t = a[i];
			a[i] = a[j];
			a[j] = t;
		}
	}
	for (size_t len = 2; len <= n; len <<= 1) {
		size_t step = n / len;

		for (size_t i = 0; i < n; i += len)
			for (size_t j = 0; j < len / 2; j++) {
				cext u = a[i + j], v = a[i + j + len / 2] * tw[j * step];
				a[i + j] = u + v;
				a[i + j + len / 2] = u - v;
			}
	}
}

static cext cpow_int(cext z, int k)
{
	cext r = 1;

	for (; k; k >>= 1) {
		if (k & 1)
			r *= z;
		z *= z;
	}
	return r;
}

/* The coefficient of y^s in (sum_j q_j y^j)^k (q sums to 1): P(S = s) for
 * S the sum of k draws from q; with diff, of that minus (sum_{j>0} q_j
 * y^j)^k: P(S = s and some draw is 0), taken pointwise, not as a
 * difference of two results. The transform has N points, a power of two:
 * N > k (len - 1) (S's whole range: no aliasing at all), or fewer when
 * Bernstein's inequality says S lies within N - 1 of s but for a chance
 * below e^-ALIAS (then the values N, 2N, ... away that fold onto s add
 * less than that). NAN on ENOMEM. */
static ext power_coefficient(const ext *q, long len, int k, long s, int diff)
{
	size_t width = (size_t)k * (size_t)(len - 1) + 1, n = 1, need = width;
	cext *a, *tw;
	ext sum, mean = 0, var = 0, x, off;

	if (s < 0 || (size_t)s >= width)
		return 0;
	if (len == 1)
		return 1; /* one value: S is k times it, and s is that (diff: every draw is 0) */
	for (long j = 0; j < len; j++)
		mean += q[j] * (ext)j;
	for (long j = 0; j < len; j++)
		var += q[j] * ((ext)j - mean) * ((ext)j - mean);
	/* P(|S - ES| >= x) <= 2 exp(-x^2 / (2 (k var + (len - 1) x / 3))) = 2 e^-ALIAS */
	x = ALIAS * (ext)(len - 1) / 3;
	x += sqrt(x * x + 2 * ALIAS * (ext)k * var);
	off = fabs((ext)k * mean - (ext)s);
	if (x + off + 1 < (ext)width)
		need = (size_t)(x + off) + 2;
	if (need < (size_t)len)
		need = (size_t)len;
	while (n < need)
		n <<= 1;
	/* q is real: its n-point transform comes from one of n/2 points, of
	 * z_j = q_2j + i q_2j+1 (the usual packing), unpacked below. */
	a = calloc(n / 2 + 1, sizeof(*a));
	tw = malloc(n / 2 * sizeof(*tw));
	if (!a || !tw) {
		free(a);
		free(tw);
		errno = ENOMEM;
		return NAN;
	}
	/* tw[j] = e^{-2 pi i j/n}, j < n/2; the second quarter from the first (times -i). */
	for (size_t j = 0; j <= n / 4; j++) {
		ext angle = 2 * EXT_PI * (ext)j / (ext)n, c = cos(angle), sn = sin(angle);

		tw[j] = c - I * sn;
		if (n / 4 + j < n / 2)
			tw[n / 4 + j] = -sn - I * c;
	}
	for (long j = 0; j < len; j++)
		a[j / 2] += (j & 1) ? I * q[j] : q[j];
	if (n == 2) {
		/* one packed point: phi_0 = q0 + q1, phi_1 = q0 - q1 */
		a[1] = creal(a[0]) - cimag(a[0]);
		a[0] = creal(a[0]) + cimag(a[0]);
	} else {
		/* the half-size transform uses every other twiddle: a table of stride 2 */
		cext *half = malloc(n / 4 * sizeof(*half));
		cext z0;

		if (!half) {
			free(a);
			free(tw);
			errno = ENOMEM;
			return NAN;
		}
		for (size_t j = 0; j < n / 4; j++)
			half[j] = tw[2 * j];
		fft(a, n / 2, half);
		free(half);
		/* phi_t = (Z_t + conj Z_{n/2-t})/2 - i tw[t] (Z_t - conj Z_{n/2-t})/2, for t = 0..n/2 */
		z0 = a[0];
		a[n / 2] = creal(z0) - cimag(z0);
		for (size_t t = 1, u = n / 2 - 1; t <= u; t++, u--) {
			cext zt = a[t], zu = a[u];
			cext et = (zt + conj(zu)) / 2, ot = -I * (zt - conj(zu)) / 2;
			cext eu = (zu + conj(zt)) / 2, ou = -I * (zu - conj(zt)) / 2;

			a[t] = et + tw[t] * ot;
			a[u] = eu + tw[u] * ou;
		}
		a[0] = creal(z0) + cimag(z0);
	}
	/* P(S = s) = (1/n) sum_t phi_t^k e^{+2 pi i t s/n}; phi_{n-t} is phi_t's
	 * conjugate: t = 0 and n/2 once, the others twice (real part). */
	s %= (long)n;
	if (diff) /* the transform of q without q_0 is phi - q_0 at every t */
		for (size_t t = 0; t <= n / 2; t++)
			a[t] = cpow_int(a[t], k) - cpow_int(a[t] - q[0], k);
	else
		for (size_t t = 0; t <= n / 2; t++)
			a[t] = cpow_int(a[t], k);
	sum = creal(a[0]);
	sum += creal(a[n / 2]) * ((s & 1) ? -1 : 1);
	for (size_t t = 1, turn = (size_t)s; t < n / 2; t++) {
		/* e^{+2 pi i turn/n}, turn = t s mod n, from the table: conj tw[turn], past n/2 its negative */
		cext e = turn < n / 2 ? conj(tw[turn]) : -conj(tw[turn - n / 2]);

		sum += 2 * creal(a[t] * e);
		turn += (size_t)s;
		if (turn >= n)
			turn -= n;
	}
	free(a);
	free(tw);
	sum /= (ext)n;
	return sum > 0 ? sum : 0;
}

/* ---- G(lo, hi) ---------------------------------------------------------- */

/* log(n!/(j0!^k k^n)) for n = k j0 + r, 0 <= r < k, without cancellation. */
static ext log_prefactor(long n, int k, long j0, long r)
{
	if (j0 == 0)
		return log_factorial_small(n) - (ext)n * log((ext)k); /* n < k <= 256 */
	return (ext)k * (ext)j0 * log1p((ext)r / ((ext)k * (ext)j0)) + (ext)r * log((ext)n / (ext)k) - (ext)r +
	       0.5L * (log((ext)n) + LN_2PI) - 0.5L * (ext)k * (log((ext)j0) + LN_2PI) + stirlerr_ext((ext)n) -
	       (ext)k * stirlerr_ext((ext)j0);
}

/* Weights w[j - lo] = log(lambda^(j - j0) j0!/j!) over [lo, hi], for
 * t = log lambda; returns the largest. In doubles for the tilt's search,
 * in ext for G itself. */
#define WEIGHTS(name, T)                                                     \
	static T name(T *w, long lo, long hi, long j0, T t)                  \
	{                                                                    \
		T wmax;                                                      \
                                                                             \
		w[j0 - lo] = 0;                                              \
		for (long j = j0 + 1; j <= hi; j++)                          \
			w[j - lo] = w[j - 1 - lo] + t - log((T)j);           \
		for (long j = j0 - 1; j >= lo; j--)                          \
			w[j - lo] = w[j + 1 - lo] - t + log((T)(j + 1));     \
		wmax = w[0];                                                 \
		for (long j = lo; j <= hi; j++)                              \
			if (w[j - lo] > wmax)                                \
				wmax = w[j - lo];                            \
		return wmax;                                                 \
	}
WEIGHTS(weights, double)
WEIGHTS(weights_ext, ext)

/* log lambda making the weights on [lo, hi] have mean mu (lo < mu < hi):
 * Newton's method on t = log lambda, kept inside a bracket (the mean grows
 * with t). Any t gives the exact G; this one only makes it well conditioned,
 * so it need not be exact. */
static double tilt(double *w, long lo, long hi, long j0, double mu)
{
	double t = log(mu > 0.5 ? mu : 0.5), tl = t - 60, th = t + 60;

	for (int it = 0; it < 200; it++) {
		double wmax = weights(w, lo, hi, j0, t), z = 0, d1 = 0, d2 = 0, dm, var, next;

		for (long j = lo; j <= hi; j++) {
			double e = w[j - lo] - wmax;

			if (e > -TRIM) {
				double p = exp(e), d = (double)j - mu;
				z += p;
				d1 += p * d;
				d2 += p * d * d;
			}
		}
		dm = d1 / z; /* mean - mu */
		var = d2 / z - dm * dm;
		if (fabs(dm) < 1e-3 * (var > 0 ? sqrt(var) : 1) + 1e-9)
			return t;
		if (dm > 0)
			th = t;
		else
			tl = t;
		next = var > 1e-12 ? t - dm / var : 0.5 * (tl + th);
		t = next > tl && next < th ? next : 0.5 * (tl + th);
		if (th - tl < 1e-12)
			return t;
	}
	return t;
}

/* log G(lo, hi) (-INFINITY when G = 0), with 0 <= lo <= hi <= n and
 * k lo < n < k hi; with diff, log(G(lo, hi) - G(lo + 1, hi)), from one
 * transform. NAN on ENOMEM. */
static ext log_all_within_tilted(long n, int k, long lo, long hi, int diff)
{
	long j0 = n / k, r = n % k, a, b;
	double mu = (double)n / k, *wd, dmax;
	ext t, wmax, z = 0, ps, *w;

	wd = malloc((size_t)(hi - lo + 1) * sizeof(*wd));
	if (!wd) {
		errno = ENOMEM;
		return NAN;
	}
	t = tilt(wd, lo, hi, j0, mu);
	/* The weights that matter, [a, b], found in doubles: those within
	 * e^-TRIM of the largest (and j0, their origin). */
	dmax = weights(wd, lo, hi, j0, (double)t);
	for (a = lo; a < j0 && wd[a - lo] - dmax <= -TRIM; a++)
		;
	for (b = hi; b > j0 && wd[b - lo] - dmax <= -TRIM; b--)
		;
	free(wd);
	if (diff && a > lo)
		return -INFINITY; /* lo's weight is negligible: so is every split where some worker gets lo */
	/* Again in ext over [a, b], then normalised in place: q_j = w[j - a]. */
	w = malloc((size_t)(b - a + 1) * sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NAN;
	}
	wmax = weights_ext(w, a, b, j0, t);
	for (long j = a; j <= b; j++)
		z += w[j - a] = exp(w[j - a] - wmax);
	for (long j = a; j <= b; j++)
		w[j - a] /= z;
	ps = power_coefficient(w, b - a + 1, k, n - (long)k * a, diff);
	free(w);
	if (isnan(ps))
		return NAN;
	if (ps <= 0)
		return -INFINITY;
	return log_prefactor(n, k, j0, r) - (ext)r * t + (ext)k * (wmax + log(z)) + log(ps);
}

/* log G(lo, hi) for any lo, hi (valid n, k): -INFINITY for 0, 0 for 1. */
static ext log_all_within(long n, int k, long lo, long hi)
{
	ext lg;

	if (lo < 0)
		lo = 0;
	if (hi > n)
		hi = n;
	if (lo > hi || (long long)k * lo > n || (long long)k * hi < n)
		return -INFINITY;
	if (k == 1 || (lo == 0 && hi == n))
		return 0;
	if ((long long)k * lo == n || (long long)k * hi == n) /* every worker gets exactly n/k */
		return log_prefactor(n, k, n / k, 0);
	lg = log_all_within_tilted(n, k, lo, hi, 0);
	return lg > 0 ? 0 : lg;
}

double fair_split_chance_all_within(long n, int k, long lo, long hi)
{
	if (!valid(n, k))
		return NAN;
	return (double)exp(log_all_within(n, k, lo, hi));
}

/* ---- P(max >= m) -------------------------------------------------------- */

/* P(X_1 >= m and X_2 >= m) = sum_{a >= m} P(X_1 = a) P(Bin(n - a, 1/(k-1)) >= m). */
static double both_at_least(long n, int k, long m)
{
	double p = 1.0 / k, sum = 0, term = exp(log_dbinom(m, n, p));

	for (long a = m; a <= n - m && term > 0; a++) {
		double part = term * binom_upper(n - a, 1.0 / (k - 1), m);

		sum += part;
		if (part < sum * 1e-17 && (double)a > n * p)
			break;
		term *= (double)(n - a) / (double)(a + 1) * p / (1 - p);
	}
	return sum;
}

double fair_split_chance_max_at_least(long n, int k, long m)
{
	double p1, s1;
	ext lg;

	if (!valid(n, k))
		return NAN;
	if (m > n)
		return 0;
	if (m <= (n + k - 1) / k) /* the busiest worker always gets ceil(n/k) */
		return 1;
	p1 = binom_upper(n, 1.0 / k, m);
	s1 = k * p1;
	if (2 * m > n) /* only one worker can reach m: the events are disjoint */
		return s1 > 1 ? 1 : s1;
	if (3 * m > n || s1 < SMALL_S1) {
		/* S1 - S2: exact when no three can reach m, else within S3 <= C(k,3) p1^3. */
		double v = s1 - 0.5 * k * (k - 1) * both_at_least(n, k, m);
		return v < 0 ? 0 : v > 1 ? 1 : v;
	}
	lg = log_all_within(n, k, 0, m - 1); /* 1 - G as -expm1(log G): no rounding of G near 1 */
	if (isnan(lg))
		return NAN;
	return (double)-expm1(lg);
}

/* ---- P(outside 2:1) ----------------------------------------------------- */

double fair_split_chance_outside_2to1(long n, int k)
{
	long top, a_lo, a_hi, lo, hi, from;
	double p = 1.0 / k, inside = 0;

	if (!valid(n, k))
		return NAN;
	if (n < k)
		return 1; /* somebody gets none */
	if (k == 1)
		return 0;
	if (k == 2) /* inside iff min >= ceil(n/3); both below it cannot happen */
		return 2 * binom_lower(n, 0.5, (n + 2) / 3 - 1);
	top = n / k; /* the most the least busy worker can get */
	/* a_lo: the least a with k P(X_1 <= a) >= NEGLIGIBLE (min below it: negligible). */
	for (lo = 0, hi = top; lo < hi;) {
		long mid = (lo + hi) / 2;
		if (k * binom_lower(n, p, mid) >= NEGLIGIBLE)
			hi = mid;
		else
			lo = mid + 1;
	}
	a_lo = lo > 1 ? lo : 1;
	/* a_hi: the least a with k P(X_1 > 2a) < NEGLIGIBLE (from there, max <= 2a all but surely). */
	for (lo = 0, hi = top + 1; lo < hi;) {
		long mid = (lo + hi) / 2;
		if (k * binom_upper(n, p, 2 * mid + 1) < NEGLIGIBLE)
			hi = mid;
		else
			lo = mid + 1;
	}
	a_hi = lo;
	from = a_hi > a_lo ? a_hi : a_lo;
	/* sum_{a_lo <= a < from} P(min = a, max <= 2a), then P(min >= from). */
	for (long a = a_lo; a < from && a <= top; a++) {
		long cap = 2 * a < n ? 2 * a : n;
		ext lg;

		if ((long long)k * cap <= n) /* none fits, or every worker gets cap > a */
			continue;
		if ((long long)k * a == n) /* every worker gets a */
			lg = log_prefactor(n, k, a, 0);
		else
			lg = log_all_within_tilted(n, k, a, cap, 1);
		if (isnan(lg))
			return NAN;
		inside += (double)exp(lg);
	}
	if (from <= top) {
		double x = fair_split_chance_all_within(n, k, from, n);

		if (isnan(x))
			return NAN;
		inside += x;
	}
	return inside >= 1 ? 0 : inside <= 0 ? 1 : 1 - inside;
}

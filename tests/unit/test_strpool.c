// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/lib/strpool.c and user/lib/slab.c (the model's shared mapping paths
 * and its mapping objects): random gets and puts of strings drawn from a small set,
 * compared after every step with a reference count per string -- one copy per distinct
 * string while it is referenced, equal bytes, a new copy after the last put -- and slab
 * objects that come back zeroed and never overlap a live one.
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "lib/slab.h"
#include "lib/strpool.h"
#include "rng.h"

#define NSTR 300
#define NHELD 5000
#define STEPS 200000

static void test_shared_copies(void **state)
{
	static char names[NSTR][48];
	static const char *held[NHELD];	/* references held, by slot */
	static int held_of[NHELD];	/* which string each holds */
	static unsigned refs[NSTR];	/* reference count per string */
	static const char *copy[NSTR];	/* its pool copy while refs > 0 */
	size_t i, step;

	(void)state;
	for (i = 0; i < NSTR; i++)
		snprintf(names[i], sizeof(names[i]), "/usr/lib/x86_64-linux-gnu/lib%zu.so.%zu",
			 i % 97, i);
	for (step = 0; step < STEPS; step++) {
		size_t slot = rng_under(NHELD);

		if (held[slot]) {
			int k = held_of[slot];

			strpool_put(held[slot]);
			held[slot] = NULL;
			if (--refs[k] == 0)
				copy[k] = NULL;
		} else {
			int k = (int)rng_under(NSTR);
			char probe[48];
			const char *s;

			memcpy(probe, names[k], sizeof(probe));	/* another buffer, same bytes */
			s = strpool_get(probe);
			assert_non_null(s);
			assert_string_equal(s, names[k]);
			if (refs[k])
				assert_ptr_equal(s, copy[k]);	/* one copy while referenced */
			copy[k] = s;
			refs[k]++;
			held[slot] = s;
			held_of[slot] = k;
		}
	}
	for (i = 0; i < NHELD; i++) {
		if (held[i])
			assert_string_equal(held[i], names[held_of[i]]);
		strpool_put(held[i]);
	}
	strpool_put(NULL);
}

struct obj {
	uint64_t a, b, c;
	char tag[21];
};

static void test_slab(void **state)
{
	static struct slab s = SLAB_INIT(struct obj);
	static struct obj *live[4000];
	size_t i, step;

	(void)state;
	assert_true(s.size >= sizeof(struct obj) && s.size % sizeof(void *) == 0);
	for (step = 0; step < 100000; step++) {
		size_t k = rng_under(4000);

		if (live[k]) {
			/* Its bytes are as written: no other object overlapped it. */
			assert_int_equal(live[k]->a, k);
			assert_int_equal(live[k]->c, ~(uint64_t)k);
			slab_free(&s, live[k]);
			live[k] = NULL;
		} else {
			struct obj *o = slab_alloc(&s);
			const char zero[sizeof(*o)] = { 0 };

			assert_non_null(o);
			assert_memory_equal(o, zero, sizeof(*o));
			o->a = k;
			o->b = rng_u64();
			o->c = ~(uint64_t)k;
			memset(o->tag, 'x', sizeof(o->tag));
			live[k] = o;
		}
	}
	for (i = 0; i < 4000; i++)
		slab_free(&s, live[i]);
	slab_free(&s, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_copies),
		cmocka_unit_test(test_slab),
	};

	rng_seed("test_strpool");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

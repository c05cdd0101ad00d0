/*
 * testutil.c — helpers shared by the cmocka tests: the leak check every test group uses as its
 * setup/teardown pair.
 */
#include "testutil.h"

static lm_memory_stats leak_start;

int lmt_leak_setup(void **state)
{
	(void)state;
	lm_clear_error();
	lm_memory_stats_get(&leak_start);
	return 0;
}

int lmt_leak_teardown(void **state)
{
	(void)state;
	lm_memory_stats now;
	lm_memory_stats_get(&now);
	if (now.live_tensors != leak_start.live_tensors || now.live_bytes != leak_start.live_bytes) {
		print_error("leak: %lld tensors, %zu bytes live (at the start: %lld, %zu)\n",
		            (long long)now.live_tensors, now.live_bytes, (long long)leak_start.live_tensors,
		            leak_start.live_bytes);
		return -1;
	}
	return 0;
}

/* testutil.h — helpers shared by the cmocka tests. */
#ifndef LUMEN_TESTUTIL_H
#define LUMEN_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "lumen/core.h"
#include "lumen/ops.h"
#include "lumen/autograd.h"
#include <string.h>

/* Leak check as a cmocka setup/teardown pair: the teardown fails when a tensor or a byte of
 * tensor memory outlives the test. LEAK_TEST(f) is a test entry with the check. */
int lmt_leak_setup(void **state);
int lmt_leak_teardown(void **state);
#define LEAK_TEST(f) cmocka_unit_test_setup_teardown(f, lmt_leak_setup, lmt_leak_teardown)

/* The call must return NULL with the given status and a message containing text. */
#define EXPECT_NULL(call, status, text)                                                             \
	do {                                                                                        \
		lm_tensor *r_ = (call);                                                                 \
		if (r_) {                                                                               \
			lm_tensor_release(r_);                                                              \
			fail_msg("%s: succeeded, expected an error", #call);                                \
		}                                                                                       \
		if (lm_last_status() != (status))                                                       \
			fail_msg("%s: status %s, expected %s (%s)", #call, lm_status_name(lm_last_status()),  \
			         lm_status_name(status), lm_last_error());                                  \
		if (!strstr(lm_last_error(), (text)))                                                   \
			fail_msg("%s: message \"%s\" lacks \"%s\"", #call, lm_last_error(), (text));      \
	} while (0)

/* The call must return the given (non-OK) status with a message containing text. */
#define EXPECT_STATUS(call, status, text)                                                           \
	do {                                                                                        \
		lm_status s_ = (call);                                                                  \
		if (s_ != (status))                                                                     \
			fail_msg("%s: status %s, expected %s (%s)", #call, lm_status_name(s_),              \
			         lm_status_name(status), lm_last_error());                                  \
		if (!strstr(lm_last_error(), (text)))                                                   \
			fail_msg("%s: message \"%s\" lacks \"%s\"", #call, lm_last_error(), (text));      \
	} while (0)

#endif

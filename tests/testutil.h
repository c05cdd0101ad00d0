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
#endif

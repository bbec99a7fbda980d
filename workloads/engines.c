// SPDX-License-Identifier: GPL-2.0
/* The engine registry: the one place that lists the engines. */
#include "engine.h"

const struct engine_ops *const engine_registry[] = {
	&engine_psync,
	&engine_sync,
	&engine_io_uring,
	&engine_libaio,
};

const struct opt_value engine_values[] = {
	{ "psync", 0 },
	{ "sync", 1 },
	{ "io_uring", 2 },
	{ "libaio", 3 },
	{ NULL, 0 },
};

const int engine_default = 0;

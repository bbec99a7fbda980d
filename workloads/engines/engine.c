// SPDX-License-Identifier: GPL-2.0
/* The engine registry: the one place that lists the engines. The option
 * table's names and the numbering both come from ENGINE_LIST, so an engine's
 * index, its ops and the name users type cannot drift apart. */
#include "engines/engine.h"

#define ENGINE_OPS(id, name) &engine_##id,
const struct engine_ops *const engine_registry[] = { ENGINE_LIST(ENGINE_OPS) };

#define ENGINE_VALUE(id, name) { name, ENGINE_##id },
const struct opt_value engine_values[] = { ENGINE_LIST(ENGINE_VALUE) { NULL, 0 } };

const int engine_default = ENGINE_sync_psync;

// SPDX-License-Identifier: GPL-2.0
/* The engine registry: the one place that lists the engines. The option
 * table's names (job/options.c) and the numbering both come from ENGINE_LIST,
 * so an engine's index, its ops and the name users type cannot drift apart. */
#include "engines/engine.h"

#define ENGINE_OPS(id, name) &engine_##id,
const struct engine_ops *const engine_registry[] = { ENGINE_LIST(ENGINE_OPS) };

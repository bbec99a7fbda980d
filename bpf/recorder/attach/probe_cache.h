/* SPDX-License-Identifier: GPL-2.0 */
/* What the kernel answered when a probe group's attach kind was tried (alone,
 * or in the object's load or attach), kept for the next recorder start on the
 * same boot, with the same modules, capabilities and BPF object: each such try
 * opens and loads the object once more, which is most of a start's time where
 * the verifier runs slowly (an emulated CPU, a small one). */
#ifndef LOCKSCOPE_PROBE_CACHE_H
#define LOCKSCOPE_PROBE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* Read the cache that matches this start, if any (LOCKSCOPE_PROBE_CACHE_DIR,
 * default /run/lockscope; "off" keeps none). The BPF object's bytes are part
 * of the key. */
void probe_cache_open(const void *object, size_t size);
/* true with *err (0: the kind worked) and its reason when (group, kind) was
 * tried before under the same key. */
bool probe_cache_get(const char *group, const char *kind, int *err, char *why, size_t len);
/* Keep an answer; only answers that do not change while the key holds are
 * kept (a refusal for the program or the kernel, not a lack of memory). */
void probe_cache_put(const char *group, const char *kind, int err, const char *why);
/* Write the cache if it gained an answer (atomically: starts run side by side). */
void probe_cache_save(void);

#endif

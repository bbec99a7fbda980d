/* SPDX-License-Identifier: GPL-2.0 */
/* Value syntax as fio reads it: sizes with k/m/g suffixes (k = 1024), times in
 * seconds unless suffixed, booleans as integers. */
#ifndef LOAD_VALUES_H
#define LOAD_VALUES_H

#include <stdbool.h>
#include <stdint.h>

/* "4k" -> 4096, "1g" -> 2^30, "1KiB" -> 1000 (fio's kb_base=1024 convention). */
int values_parse_size(const char *s, uint64_t *out);
/* "5" -> 5 s, "500ms", "2m", "1h"; fractions allowed ("0.5"). Result in microseconds. */
int values_parse_time_us(const char *s, uint64_t *out);
int values_parse_uint64(const char *s, uint64_t *out);
int values_parse_bool(const char *s, bool *out);

/* "1.5 GiB" style, for messages. */
const char *values_format_bytes(uint64_t v, char *buf, unsigned len);

#endif

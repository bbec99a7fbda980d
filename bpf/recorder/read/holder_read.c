// SPDX-License-Identifier: GPL-2.0
/* Lock holders: the maps of kern/holder.bpf.inc read back (emit/holder_json.c
 * writes them). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "record.h"
#include "record.skel.h"
#include "read/holder_read.h"

/* A per-CPU map of holder_key -> holder_val, summed over the CPUs. */
static int read_rows(int fd, int ncpu, struct rec_holder **rows, size_t *nr)
{
	struct holder_key key, next, *prev = NULL;
	struct holder_val *vals = calloc(ncpu, sizeof(*vals));
	size_t cap = 0;
	int c;

	if (!vals)
		return -ENOMEM;
	while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		if (*nr == cap) {
			struct rec_holder *n = realloc(*rows, (cap = cap ? cap * 2 : 64) * sizeof(*n));

			if (!n)
				break;
			*rows = n;
		}
		(*rows)[*nr].k = key;
		memset(&(*rows)[*nr].v, 0, sizeof((*rows)[*nr].v));
		for (c = 0; c < ncpu; c++) {
			(*rows)[*nr].v.count += vals[c].count;
			(*rows)[*nr].v.wait_ns += vals[c].wait_ns;
		}
		(*nr)++;
	}
	free(vals);
	return 0;
}

int holder_read_maps(struct record_bpf *skel, struct rec_holders *h)
{
	int ncpu = libbpf_num_possible_cpus(), fd, c, err;
	__u64 *cvals;
	__u32 i;

	memset(h, 0, sizeof(*h));
	if (ncpu <= 0)
		return -EINVAL;
	err = read_rows(bpf_map__fd(skel->maps.holder_stats), ncpu, &h->rows, &h->nr);
	err = err ?: read_rows(bpf_map__fd(skel->maps.releaser_stats), ncpu, &h->releasers,
			       &h->nr_releasers);
	cvals = calloc(ncpu, sizeof(*cvals));
	if (err || !cvals) {
		free(cvals);
		return err ?: -ENOMEM;
	}
	fd = bpf_map__fd(skel->maps.holder_counts);
	for (i = 0; i < HC_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, cvals))
			continue;
		for (c = 0; c < ncpu; c++)
			h->counts[i] += cvals[c];
	}
	free(cvals);
	return 0;
}

void holder_read_free(struct rec_holders *h)
{
	free(h->rows);
	free(h->releasers);
	memset(h, 0, sizeof(*h));
}

static struct rec_holder *copy_rows(const struct rec_holder *rows, size_t nr)
{
	struct rec_holder *out = malloc((nr ? nr : 1) * sizeof(*out));

	if (out)
		memcpy(out, rows, nr * sizeof(*out));
	return out;
}

int holder_read_copy(const struct rec_holders *src, struct rec_holders *dst)
{
	*dst = *src;
	dst->rows = copy_rows(src->rows, src->nr);
	dst->releasers = copy_rows(src->releasers, src->nr_releasers);
	if (dst->rows && dst->releasers)
		return 0;
	holder_read_free(dst);
	return -ENOMEM;
}

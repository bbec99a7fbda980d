// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/verify.h"

static uint32_t hdr_check(const struct verify_hdr *h)
{
	uint64_t x = h->magic ^ (h->offset * 0x9e3779b97f4a7c15ULL) ^
		     (h->seed * 0xbf58476d1ce4e5b9ULL) ^ h->len;

	return (uint32_t)(x ^ (x >> 32));
}

/* The data after the header: xorshift64* from (seed, offset). */
static inline uint64_t data_state(uint64_t seed, uint64_t offset)
{
	uint64_t s = seed ^ (offset * 0x94d049bb133111ebULL) ^ 0x2545f4914f6cdd1dULL;

	return s ? s : 1;
}

static inline uint64_t data_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

void verify_fill(void *buf, uint32_t len, uint64_t offset, uint64_t seed)
{
	struct verify_hdr h = { VERIFY_MAGIC, offset, seed, len, 0 };
	unsigned char *p = buf;
	uint64_t s = data_state(seed, offset), w;
	uint32_t i;

	h.hdr_check = hdr_check(&h);
	memcpy(p, &h, sizeof(h));
	for (i = sizeof(h); i + 8 <= len; i += 8) {
		w = data_next(&s);
		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		w = data_next(&s);
		memcpy(p + i, &w, len - i);
	}
}

static bool all_zero(const unsigned char *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

int verify_check(const void *buf, uint32_t len, uint64_t offset, char *reason, size_t rlen)
{
	const unsigned char *p = buf;
	struct verify_hdr h;
	uint64_t s, w;
	uint32_t i;

	memcpy(&h, p, sizeof(h));
	if (h.magic != VERIFY_MAGIC || h.hdr_check != hdr_check(&h)) {
		if (all_zero(p, len))
			return VERIFY_ZERO;
		snprintf(reason, rlen, "no valid header");
		return VERIFY_BAD;
	}
	if (h.offset != offset) {
		snprintf(reason, rlen, "header says offset %llu", (unsigned long long)h.offset);
		return VERIFY_BAD;
	}
	if (h.len != len) {
		snprintf(reason, rlen, "header says length %u", h.len);
		return VERIFY_BAD;
	}
	s = data_state(h.seed, offset);
	for (i = sizeof(h); i + 8 <= len; i += 8) {
		w = data_next(&s);
		if (memcmp(p + i, &w, 8))
			goto bad;
	}
	if (i < len) {
		w = data_next(&s);
		if (memcmp(p + i, &w, len - i))
			goto bad;
	}
	return VERIFY_OK;
bad:
	for (uint32_t k = 0; k < 8 && i + k < len; k++) {
		if (p[i + k] != ((unsigned char *)&w)[k]) {
			i += k;
			break;
		}
	}
	snprintf(reason, rlen, "data differs at byte %u of the block", i);
	return VERIFY_BAD;
}

void verify_account(struct verify_stats *v, int fd, const void *buf, uint32_t len,
		    uint64_t offset)
{
	char reason[80];
	off_t data;

	v->blocks++;
	switch (verify_check(buf, len, offset, reason, sizeof(reason))) {
	case VERIFY_OK:
		v->ok++;
		return;
	case VERIFY_ZERO:
		/* zeros are fine where nothing was ever written; in written
		 * blocks they mean the data was lost */
		data = lseek(fd, (off_t)offset, SEEK_DATA);
		if ((data < 0 && errno == ENXIO) ||
		    (data >= 0 && (uint64_t)data >= offset + len)) {
			v->unwritten++;
			return;
		}
		stats_verify_mismatch(v, offset, "all zeros in a written block");
		return;
	default:
		stats_verify_mismatch(v, offset, reason);
	}
}

int verify_file(struct lfile *lf, volatile int *stop)
{
	uint64_t per_read = lf->grid_bs >= (1u << 20) ? 1 : (1u << 20) / lf->grid_bs;
	size_t buflen = (size_t)(per_read * lf->grid_bs);
	unsigned char *buf = NULL;
	int fd, ret = 0;

	memset(&lf->verify_result, 0, sizeof(lf->verify_result));
	fd = open(lf->path, O_RDONLY | (lf->direct ? O_DIRECT : 0));
	if (fd < 0)
		return -errno;
	if (posix_memalign((void **)&buf, 4096, (buflen + 4095) & ~(size_t)4095)) {
		close(fd);
		return -ENOMEM;
	}
	for (uint64_t b = 0; b < lf->grid_blocks && !*stop; b += per_read) {
		uint64_t n = lf->grid_blocks - b < per_read ? lf->grid_blocks - b : per_read;
		uint64_t off = lf->grid_start + b * lf->grid_bs;
		size_t want = (size_t)(n * lf->grid_bs);
		ssize_t got = pread(fd, buf, want, (off_t)off);

		if (got < 0) {
			ret = -errno;
			break;
		}
		for (uint64_t k = 0; k < n; k++) {
			uint64_t boff = off + k * lf->grid_bs;

			if ((uint64_t)got < (k + 1) * lf->grid_bs) {
				/* past the end of the file: nothing there to check */
				lf->verify_result.blocks++;
				stats_verify_mismatch(&lf->verify_result, boff, "short read (file "
						     "ends before the block)");
				continue;
			}
			verify_account(&lf->verify_result, fd, buf + k * lf->grid_bs,
				       (uint32_t)lf->grid_bs, boff);
		}
	}
	lf->verified = ret == 0;
	free(buf);
	close(fd);
	return ret;
}

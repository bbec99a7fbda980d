// SPDX-License-Identifier: GPL-2.0
/* Reading flag tables out of tracefs `format` files. The values there are C
 * expressions such as `( int) (( __kernel_rwf_t)0x00000002)` or
 * `((((1UL))) << (5))`: a small evaluator handles casts, numbers, unary
 * minus, `<<` and `|`. */
#define _GNU_SOURCE /* O_DIRECT */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <bpf/btf.h>
#include "setup/tpfmt.h"

#define TRACEFS "/sys/kernel/tracing"

bool tpfmt_ensure_tracefs(void)
{
	if (access(TRACEFS "/events", F_OK) != 0)
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	return access(TRACEFS "/events", F_OK) == 0;
}

struct expr {
	const char *p;
	const char *end;
	int err;
};

static void skip_ws(struct expr *e)
{
	while (e->p < e->end && isspace((unsigned char)*e->p))
		e->p++;
}

static unsigned long long ex_or(struct expr *e);

/* "( int)" or "( __kernel_rwf_t)": only identifier characters inside. */
static bool at_cast(const struct expr *e)
{
	const char *q = e->p + 1;
	bool ident = false;

	while (q < e->end && isspace((unsigned char)*q))
		q++;
	if (q >= e->end || !(isalpha((unsigned char)*q) || *q == '_'))
		return false;
	for (; q < e->end && *q != ')'; q++) {
		if (isalnum((unsigned char)*q) || *q == '_')
			ident = true;
		else if (!isspace((unsigned char)*q))
			return false;
	}
	return ident && q < e->end;
}

static unsigned long long ex_unary(struct expr *e)
{
	unsigned long long v;
	char *num_end;

	skip_ws(e);
	if (e->p >= e->end) {
		e->err = 1;
		return 0;
	}
	if (*e->p == '-') {
		e->p++;
		return -ex_unary(e);
	}
	if (*e->p == '~') {
		e->p++;
		return ~ex_unary(e);
	}
	if (*e->p == '(') {
		if (at_cast(e)) {
			e->p = memchr(e->p, ')', e->end - e->p) + 1;
			return ex_unary(e);
		}
		e->p++;
		v = ex_or(e);
		skip_ws(e);
		if (e->p >= e->end || *e->p != ')')
			e->err = 1;
		else
			e->p++;
		return v;
	}
	if (!isdigit((unsigned char)*e->p)) {
		e->err = 1; /* an identifier such as IOPRIO_CLASS_NONE */
		return 0;
	}
	v = strtoull(e->p, &num_end, 0);
	e->p = num_end;
	while (e->p < e->end && (*e->p == 'u' || *e->p == 'U' || *e->p == 'l' || *e->p == 'L'))
		e->p++;
	return v;
}

static unsigned long long ex_shift(struct expr *e)
{
	unsigned long long v = ex_unary(e);

	for (;;) {
		skip_ws(e);
		if (e->end - e->p >= 2 && e->p[0] == '<' && e->p[1] == '<') {
			unsigned long long s;

			e->p += 2;
			s = ex_unary(e);
			v = s < 64 ? v << s : 0;
		} else {
			return v;
		}
	}
}

static unsigned long long ex_or(struct expr *e)
{
	unsigned long long v = ex_shift(e);

	for (;;) {
		skip_ws(e);
		if (e->p < e->end && *e->p == '|' && (e->p + 1 >= e->end || e->p[1] != '|')) {
			e->p++;
			v |= ex_shift(e);
		} else {
			return v;
		}
	}
}

static char *read_format(const char *sys, const char *event)
{
	char path[256], *buf;
	size_t cap = 16384, len = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/format", sys, event);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[len] = 0;
	return buf;
}

/* Finds "__print_flags(REC->field," or "__print_symbolic(REC->field,"; returns
 * the position after the field's comma, and whether it is a flags table. */
static const char *find_table(const char *fmt, const char *field, bool *flags)
{
	static const char *const calls[] = { "__print_flags(", "__print_symbolic(" };
	char pat[128];
	size_t i;

	for (i = 0; i < 2; i++) {
		const char *p;

		snprintf(pat, sizeof(pat), "%sREC->%s,", calls[i], field);
		p = strstr(fmt, pat);
		if (p) {
			*flags = i == 0;
			return p + strlen(pat);
		}
	}
	/* A guarded field: __print_flags(REC->found ? REC->status : 0, "", ...) */
	for (i = 0; i < 2; i++) {
		const char *p;

		snprintf(pat, sizeof(pat), "? REC->%s : 0,", field);
		p = strstr(fmt, pat);
		if (p && strstr(fmt, calls[i]) && strstr(fmt, calls[i]) < p) {
			*flags = i == 0;
			return p + strlen(pat);
		}
	}
	return NULL;
}

int tpfmt_symbols(const char *sys, const char *event, const char *field,
		  struct tpfmt_sym *out, int max)
{
	char *fmt = read_format(sys, event);
	const char *p, *print;
	bool flags;
	int n = 0;

	if (!fmt)
		return -errno ? -errno : -ENOENT;
	print = strstr(fmt, "print fmt:");
	p = print ? find_table(print, field, &flags) : NULL;
	if (!p) {
		free(fmt);
		return -ENOENT;
	}
	if (flags) { /* skip the delimiter argument: "|" or "" */
		p = strchr(p, '"');
		p = p ? strchr(p + 1, '"') : NULL;
		if (!p) {
			free(fmt);
			return -EINVAL;
		}
		p++;
	}
	while (n < max) {
		const char *open, *quote, *comma, *close_quote, *close;
		struct expr e;
		size_t len;

		while (*p && (isspace((unsigned char)*p) || *p == ','))
			p++;
		if (*p != '{')
			break;
		open = p;
		quote = strchr(open, '"');
		close = strchr(open, '}');
		if (!quote || !close || quote > close)
			break;
		for (comma = quote; comma > open && *comma != ','; comma--)
			;
		close_quote = strchr(quote + 1, '"');
		if (comma == open || !close_quote)
			break;
		e = (struct expr){ .p = open + 1, .end = comma };
		out[n].value = ex_or(&e);
		skip_ws(&e);
		len = close_quote - quote - 1;
		if (!e.err && e.p == e.end && len < TPFMT_NAME_LEN) {
			memcpy(out[n].name, quote + 1, len);
			out[n].name[len] = 0;
			n++;
		}
		p = close + 1;
	}
	free(fmt);
	return n;
}

/* "\tfield:ino_t ino;\toffset:16;\tsize:8;\tsigned:0;": the name is the
 * declaration's last word before ';'. */
int tpfmt_field(const char *sys, const char *event, const char *name, struct rec_tpfield *out)
{
	char *fmt = read_format(sys, event), *line, *save = NULL;
	size_t nlen = strlen(name);
	int err = -ENOENT;

	if (!fmt)
		return -ENOENT;
	for (line = strtok_r(fmt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *decl = strstr(line, "field:"), *semi = decl ? strchr(decl, ';') : NULL;
		unsigned int off, size;
		const char *o, *sz;

		if (!semi || semi - decl < (long)nlen + 7 || memcmp(semi - nlen, name, nlen) ||
		    !(isspace((unsigned char)semi[-(long)nlen - 1]) || semi[-(long)nlen - 1] == '*'))
			continue;
		o = strstr(semi, "offset:");
		sz = strstr(semi, "size:");
		if (o && sz && sscanf(o, "offset:%u;", &off) == 1 &&
		    sscanf(sz, "size:%u;", &size) == 1 && off <= 0xffff && size <= 0xffff) {
			out->off = off;
			out->size = size;
			err = 0;
		}
		break;
	}
	free(fmt);
	return err;
}

static bool sym_value(const struct tpfmt_sym *s, int n, const char *name, unsigned long long *v)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(s[i].name, name)) {
			*v = s[i].value;
			return true;
		}
	}
	return false;
}

/* One decoded field: which rec_bits members it fills, by symbol name. A
 * table with `pairs` names lock classes: NAME_EXCL | NAME_SHARED. */
struct bit_rule {
	const char *name;
	size_t offset;      /* of the __u32 in struct rec_bits */
};

struct table_rule {
	const char *sys, *event, *field;
	bool pairs;
	struct bit_rule rules[6];
};

#define B(name, member) { name, __builtin_offsetof(struct rec_bits, member) }

/* The values used where a format (or BTF) cannot be read: the kernel's own
 * (include/trace/events/lock.h LCB_F_*, include/linux/fs.h IOCB_*,
 * include/linux/iomap.h IOMAP_*, fs/xfs/xfs_inode.h XFS_*LOCK_*). The only
 * copy: the BPF side's `bits` is set from the decoded result before load. */
const struct rec_bits tpfmt_default_bits = {
	.lcb_spin = 1, .lcb_read = 2, .lcb_write = 4, .lcb_rt = 8, .lcb_percpu = 16,
	.lcb_mutex = 32, .iocb_write = 1 << 18, .iocb_dsync = 2, .iocb_sync = 4,
	.iomap_hole = 0, .iomap_unwritten = 3, .iomap_mapped = 2, .iomap_f_new = 1,
	.iomap_dio_force_wait = 1, .iomap_dio_overwrite_only = 2,
	.xfs_iolock = 3, .xfs_ilock = 12, .xfs_mmaplock = 48,
	.o_direct = O_DIRECT, .o_dsync = O_DSYNC, .queue_flag_stats = 0xff, .rqf_stats = 0,
};

static const struct table_rule tables[TPFMT_NR_SOURCES - 1] = {
	{ "lock", "contention_begin", "flags", false,
	  { B("SPIN", lcb_spin), B("READ", lcb_read), B("WRITE", lcb_write), B("RT", lcb_rt),
	    B("PERCPU", lcb_percpu), B("MUTEX", lcb_mutex) } },
	{ "iomap", "iomap_dio_rw_begin", "ki_flags", false,
	  { B("WRITE", iocb_write), B("DSYNC", iocb_dsync), B("SYNC", iocb_sync) } },
	{ "iomap", "iomap_dio_rw_begin", "dio_flags", false,
	  { B("DIO_FORCE_WAIT", iomap_dio_force_wait),
	    B("DIO_OVERWRITE_ONLY", iomap_dio_overwrite_only) } },
	{ "iomap", "iomap_iter_dstmap", "type", false,
	  { B("HOLE", iomap_hole), B("UNWRITTEN", iomap_unwritten), B("MAPPED", iomap_mapped) } },
	{ "iomap", "iomap_iter_dstmap", "flags", false, { B("NEW", iomap_f_new) } },
	{ "ext4", "ext4_ext_map_blocks_exit", "mflags", false,
	  { B("M", ext4_map_mapped), B("U", ext4_map_unwritten) } },
	{ "ext4", "ext4_ext_map_blocks_exit", "flags", false, { B("CREATE", ext4_gb_create) } },
	{ "ext4", "ext4_es_lookup_extent_exit", "status", false,
	  { B("W", ext4_es_written), B("U", ext4_es_unwritten), B("H", ext4_es_hole) } },
	{ "ext4", "ext4_allocate_blocks", "flags", false, { B("HINT_DATA", ext4_mb_hint_data) } },
	{ "xfs", "xfs_ilock", "lock_flags", true,
	  { B("IOLOCK", xfs_iolock), B("ILOCK", xfs_ilock), B("MMAPLOCK", xfs_mmaplock) } },
};

static bool rule_value(const struct table_rule *tr, const struct bit_rule *r,
		       const struct tpfmt_sym *syms, int n, unsigned long long *v)
{
	char excl[TPFMT_NAME_LEN], shared[TPFMT_NAME_LEN];
	unsigned long long e, sh;

	if (!tr->pairs)
		return sym_value(syms, n, r->name, v);
	snprintf(excl, sizeof(excl), "%s_EXCL", r->name);
	snprintf(shared, sizeof(shared), "%s_SHARED", r->name);
	if (!sym_value(syms, n, excl, &e) || !sym_value(syms, n, shared, &sh))
		return false;
	*v = e | sh;
	return true;
}

/* An enumerator's value from kernel BTF, whichever (maybe anonymous) enum
 * holds it. */
static bool btf_enum_value(const struct btf *btf, const char *name, long long *value)
{
	__u32 id, n = btf ? btf__type_cnt(btf) : 0;

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e;
		int i;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (i = 0; i < btf_vlen(t); i++, e++) {
			if (!strcmp(btf__name_by_offset(btf, e->name_off), name)) {
				*value = e->val;
				return true;
			}
		}
	}
	return false;
}

/* Block-layer bits: include/linux/blkdev.h QUEUE_FLAG_STATS and
 * include/linux/blk-mq.h __RQF_STATS, anonymous enums (no CO-RE). */
static bool decode_block_bits(struct rec_bits *bits)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long long qf, rqf;
	bool ok = btf_enum_value(btf, "QUEUE_FLAG_STATS", &qf) &&
		  btf_enum_value(btf, "__RQF_STATS", &rqf) && qf >= 0 && qf < 64 && rqf >= 0 && rqf < 32;

	if (ok) {
		bits->queue_flag_stats = qf;
		bits->rqf_stats = 1u << rqf;
	}
	btf__free(btf);
	return ok;
}

void tpfmt_decode_bits(struct rec_bits *bits, struct tpfmt_source src[TPFMT_NR_SOURCES])
{
	struct tpfmt_sym syms[TPFMT_MAX_SYMS];
	int t, r, n;

	src[TPFMT_NR_SOURCES - 1].event = "btf:enum";
	src[TPFMT_NR_SOURCES - 1].field = "QUEUE_FLAG_STATS,__RQF_STATS";
	src[TPFMT_NR_SOURCES - 1].decoded = decode_block_bits(bits);
	for (t = 0; t < TPFMT_NR_SOURCES - 1; t++) {
		const struct table_rule *tr = &tables[t];
		static char names[TPFMT_NR_SOURCES][64];
		bool ok;

		snprintf(names[t], sizeof(names[t]), "%s:%s", tr->sys, tr->event);
		src[t].event = names[t];
		src[t].field = tr->field;
		n = tpfmt_symbols(tr->sys, tr->event, tr->field, syms, TPFMT_MAX_SYMS);
		ok = n > 0;
		for (r = 0; ok && r < 6 && tr->rules[r].name; r++) {
			unsigned long long v;

			if (rule_value(tr, &tr->rules[r], syms, n, &v))
				*(__u32 *)((char *)bits + tr->rules[r].offset) = v;
			else
				ok = false;
		}
		src[t].decoded = ok;
	}
}

/* lock:contention_begin's flag names with their default values (the first
 * table's rules over tpfmt_default_bits). */
static int default_lock_syms(struct tpfmt_sym *out, int max)
{
	const struct table_rule *tr = &tables[0];
	int r;

	for (r = 0; r < 6 && r < max && tr->rules[r].name; r++) {
		out[r].value = *(const __u32 *)((const char *)&tpfmt_default_bits + tr->rules[r].offset);
		snprintf(out[r].name, sizeof(out[r].name), "%s", tr->rules[r].name);
	}
	return r;
}

int tpfmt_lock_flag_names(unsigned int flags, const char **names, int max)
{
	static struct tpfmt_sym syms[TPFMT_MAX_SYMS];
	static int n = -1;
	int i, out = 0;

	if (n < 0)
		n = tpfmt_symbols("lock", "contention_begin", "flags", syms, TPFMT_MAX_SYMS);
	if (n <= 0)
		n = default_lock_syms(syms, TPFMT_MAX_SYMS);
	for (i = 0; i < n && out < max; i++)
		if (syms[i].value && (flags & syms[i].value) == syms[i].value)
			names[out++] = syms[i].name;
	return out;
}

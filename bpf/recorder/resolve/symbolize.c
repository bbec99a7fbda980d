// SPDX-License-Identifier: GPL-2.0
/* Kernel symbols from /proc/kallsyms and user symbols from ELF files, both
 * as sorted arrays searched by binary search. See symbolize.h for formats. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "setup/kallsyms_snapshot.h"
#include "resolve/symbolize.h"

/* ---- shared helpers ---------------------------------------------------- */

/* One symbol: [addr, end) named name. Arrays of these are sorted by addr,
 * hold one entry per address, and are searched by sym_find. */
struct sym {
	uint64_t addr;
	uint64_t end;
	const char *name;
	char *shown;         /* user symbols: name demangled, made on first use */
};

/* Candidate symbol while a table is built: several may share an address. */
struct cand {
	uint64_t addr;
	uint64_t end;
	uint64_t rank;   /* lower wins among aliases at one address */
	size_t name;     /* offset into the names pool */
	bool sized;      /* end comes from st_size, not from a guess */
	bool text;       /* kernel: text rather than data */
};

/* Aliases at one address: prefer the name with fewer leading underscores
 * ("write" over "__libc_write"), then global over weak over local binding,
 * then the first one listed. */
static uint64_t alias_rank(const char *name, unsigned binding, uint32_t seq)
{
	uint64_t under = 0;

	while (name[under] == '_' && under < 255)
		under++;
	return under << 40 | (uint64_t)binding << 32 | seq;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Last symbol with addr <= a, if a is inside it. */
static const struct sym *sym_find(const struct sym *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= v[lo - 1].end)
		return NULL;
	return &v[lo - 1];
}

static const char *put(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (len == 0)
		return buf;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

/* Grows *arr so that it holds at least need elements of size elem. */
static int grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **p = arr;
	size_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*p, ncap * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = ncap;
	return 0;
}

/* ---- kernel symbols ---------------------------------------------------- */

/* No sizes in kallsyms: a symbol ends where the next one (of any kind)
 * starts; the very last one gets this much. */
#define KSYM_LAST_SPAN 4096

struct ksyms {
	char *raw;          /* the file; names are NUL-terminated in place */
	struct sym *text;
	struct sym *data;
	size_t ntext;
	size_t ndata;
};

static bool ktype_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static bool ktype_data(char t)
{
	return strchr("dDbBrR", t) != NULL;
}

/* Names that bound a section rather than name an object. */
static bool section_marker(const char *name)
{
	static const char *const exact[] = {
		"_sdata", "_edata", "__bss_start", "__bss_stop", "_end",
		"__init_begin", "__init_end", "_sinittext", "_einittext",
		"__end_rodata", "__per_cpu_start", "__per_cpu_end",
	};

	if (!strncmp(name, "__start_", 8) || !strncmp(name, "__stop_", 7))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	return false;
}

/* Parses "addr type name[\t[module]]" lines in place into cands. Names are
 * offsets into raw. */
static int kallsyms_parse(char *raw, struct cand **out, size_t *nout, bool *hidden)
{
	struct cand *c = NULL;
	size_t n = 0, cap = 0;
	uint64_t pcpu_lo = 0, pcpu_hi = 0;
	uint32_t seq = 0;
	char *line = raw;

	*hidden = true;
	while (*line) {
		char *nl = strchr(line, '\n'), *p, *name;
		uint64_t addr;
		char type;

		if (nl)
			*nl = '\0';
		addr = strtoull(line, &p, 16);
		if (p != line && p[0] == ' ' && p[1] && p[2] == ' ') {
			type = p[1];
			name = p + 3;
			name[strcspn(name, " \t")] = '\0';
			if (addr)
				*hidden = false;
			if (!strcmp(name, "__per_cpu_start"))
				pcpu_lo = addr;
			else if (!strcmp(name, "__per_cpu_end"))
				pcpu_hi = addr;
			if (*name && (ktype_text(type) || ktype_data(type))) {
				unsigned bind = type == 'w' || type == 'W' ? 1 :
						(type >= 'a' && type <= 'z') ? 2 : 0;

				if (grow(&c, &cap, n + 1, sizeof(*c))) {
					free(c);
					return -ENOMEM;
				}
				c[n++] = (struct cand){
					.addr = addr,
					.rank = alias_rank(name, bind, seq++),
					.name = name - raw,
					.text = ktype_text(type),
				};
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	/* Per-CPU variables are listed at their offsets in the per-CPU area,
	 * not at addresses: drop them. */
	if (pcpu_hi > pcpu_lo) {
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (c[i].text || c[i].addr < pcpu_lo || c[i].addr >= pcpu_hi)
				c[k++] = c[i];
		n = k;
	}
	*out = c;
	*nout = n;
	return 0;
}

/* Sorted cands -> one sym per address in each kind, ending at the next
 * address of any kind. */
static int ksyms_build(struct ksyms *ks, struct cand *c, size_t n)
{
	uint64_t next = 0;
	size_t ntext = 0;

	for (size_t i = 0; i < n; i++)
		ntext += c[i].text;
	ks->text = calloc(ntext + 1, sizeof(*ks->text));
	ks->data = calloc(n - ntext + 1, sizeof(*ks->data));
	if (!ks->text || !ks->data)
		return -ENOMEM;
	for (size_t i = n; i-- > 0;) {
		if (i + 1 < n && c[i + 1].addr != c[i].addr)
			next = c[i + 1].addr;
		c[i].end = i + 1 < n && next > c[i].addr ? next : c[i].addr + KSYM_LAST_SPAN;
	}
	for (size_t i = 0; i < n; i++) {
		struct sym *v = c[i].text ? ks->text : ks->data;
		size_t *nv = c[i].text ? &ks->ntext : &ks->ndata;

		if (*nv && v[*nv - 1].addr == c[i].addr)
			continue;  /* a worse-ranked alias */
		v[(*nv)++] = (struct sym){ c[i].addr, c[i].end, ks->raw + c[i].name, NULL };
	}
	return 0;
}

struct ksyms *symbolize_kernel_load(void)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	struct cand *c = NULL;
	size_t len, n = 0;
	bool hidden;
	int err;

	if (!ks)
		return NULL;
	ks->raw = kallsyms_snapshot_take(&len);   /* parsed in place: its own */
	if (!ks->raw) {
		err = -errno;
		goto fail;
	}
	err = kallsyms_parse(ks->raw, &c, &n, &hidden);
	if (err)
		goto fail;
	if (hidden) {
		err = -EPERM;
		goto fail;
	}
	if (n)
		qsort(c, n, sizeof(*c), cand_cmp);
	err = ksyms_build(ks, c, n);
	if (err)
		goto fail;
	free(c);
	return ks;
fail:
	free(c);
	symbolize_kernel_free(ks);
	errno = -err;
	return NULL;
}

void symbolize_kernel_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->text);
	free(ks->data);
	free(ks->raw);
	free(ks);
}

const char *symbolize_kernel_format(const struct ksyms *ks, uint64_t addr, char *buf, size_t len)
{
	const struct sym *s = ks ? sym_find(ks->text, ks->ntext, addr) : NULL;

	if (!s)
		return put(buf, len, "%s", SYM_UNKNOWN);
	return put(buf, len, "%s+0x%" PRIx64, s->name, addr - s->addr);
}

const char *symbolize_kernel_data_name(const struct ksyms *ks, uint64_t addr, char *buf, size_t len)
{
	const struct sym *s = ks ? sym_find(ks->data, ks->ndata, addr) : NULL;

	if (!s)
		return NULL;
	if (s->addr == addr)
		return put(buf, len, "%s", s->name);
	if (section_marker(s->name))
		return NULL;
	return put(buf, len, "%s+0x%" PRIx64, s->name, addr - s->addr);
}

/* ---- user symbols: one ELF file --------------------------------------- */

struct seg {              /* a PT_LOAD: file offsets -> virtual addresses */
	uint64_t off;
	uint64_t filesz;
	uint64_t vaddr;
};

struct elf_syms {         /* one file, shared by every process mapping it */
	dev_t dev;
	uint64_t ino;
	struct sym *syms;
	size_t nsyms;
	char *names;
	struct seg *segs;     /* none: not an ELF file we could read */
	size_t nsegs;
};

static void elf_syms_free(struct elf_syms *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->syms && i < f->nsyms; i++)
		free(f->syms[i].shown);
	free(f->syms);
	free(f->names);
	free(f->segs);
	free(f);
}

struct pool {             /* growing string pool */
	char *p;
	size_t len;
	size_t cap;
};

static long pool_add(struct pool *pl, const char *s)
{
	size_t n = strlen(s) + 1;
	long at = pl->len;

	if (grow(&pl->p, &pl->cap, pl->len + n, 1))
		return -1;
	memcpy(pl->p + pl->len, s, n);
	pl->len += n;
	return at;
}

static int elf_load_segs(Elf *e, struct elf_syms *f)
{
	size_t n, cap = 0;

	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (grow(&f->segs, &cap, f->nsegs + 1, sizeof(*f->segs)))
			return -ENOMEM;
		f->segs[f->nsegs++] = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
	return f->nsegs ? 0 : -EINVAL;
}

/* Function symbols of one symbol table section into cands. */
static int elf_scan_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct pool *pl,
			   struct cand **c, size_t *n, size_t *cap, uint32_t *seq)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t cnt = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	if (!d)
		return 0;
	for (size_t i = 1; i < cnt; i++) {
		GElf_Sym s;
		GElf_Shdr ssh;
		Elf_Scn *in;
		const char *name;
		unsigned type, bind;
		long off;

		if (!gelf_getsym(d, i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !s.st_value ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		in = elf_getscn(e, s.st_shndx);
		if (!name || !*name || !in || !gelf_getshdr(in, &ssh))
			continue;
		off = pool_add(pl, name);
		if (off < 0 || grow(c, cap, *n + 1, sizeof(**c)))
			return -ENOMEM;
		bind = GELF_ST_BIND(s.st_info);
		(*c)[(*n)++] = (struct cand){
			.addr = s.st_value,
			/* unsized (often hand-written asm): at most to its section's end */
			.end = s.st_size ? s.st_value + s.st_size : ssh.sh_addr + ssh.sh_size,
			.rank = alias_rank(name, bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
					   (*seq)++),
			.name = off,
			.sized = s.st_size != 0,
		};
	}
	return 0;
}

/* Sorted cands -> f->syms, one per address. Aliases pool their sizes; an
 * unsized symbol also ends where the next one starts. */
static int elf_build_syms(struct elf_syms *f, struct cand *c, size_t n, const char *names)
{
	size_t k = 0;

	f->syms = calloc(n ? n : 1, sizeof(*f->syms));
	if (!f->syms)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		uint64_t sized_end = 0, guess_end = 0, end;
		bool sized = false;
		size_t j;

		for (j = i; j < n && c[j].addr == c[i].addr; j++) {
			uint64_t *e = c[j].sized ? &sized_end : &guess_end;

			sized |= c[j].sized;
			if (c[j].end > *e)
				*e = c[j].end;
		}
		end = sized ? sized_end : guess_end;
		if (!sized && j < n && c[j].addr < end)
			end = c[j].addr;
		f->syms[k++] = (struct sym){ c[i].addr, end, names + c[i].name, NULL };
		i = j;
	}
	f->nsyms = k;
	return 0;
}

/* The GNU build-id of an ELF image as lowercase hex into hex; false if none. */
static bool elf_build_id(Elf *e, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *id = (const unsigned char *)d->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + name_off, "GNU", 4) ||
			    nh.n_descsz < 2 || nh.n_descsz * 2 + 1 > len)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", id[i]);
			return true;
		}
	}
	return false;
}

/* Where separate debug files are installed (a -dbg or -dbgsym package):
 * <root>/.build-id/xx/yyyy.debug. LOCKSCOPE_DEBUG_ROOT replaces the root. */
static const char *debug_root(void)
{
	const char *r = getenv("LOCKSCOPE_DEBUG_ROOT");

	return r && *r ? r : "/usr/lib/debug";
}

static int scan_symbols(Elf *e, bool debug_file, struct pool *pl, struct cand **c, size_t *n,
			size_t *cap, uint32_t *seq);

/* Adds the .symtab of the separate debug file of e, when one is installed.
 * Its symbols carry the same virtual addresses as e's. */
static int debug_file_scan(Elf *e, struct pool *pl, struct cand **c, size_t *n, size_t *cap,
			   uint32_t *seq)
{
	char id[2 * 64 + 1], path[PATH_MAX];
	Elf *de;
	int fd, err = 0;

	if (!elf_build_id(e, id, sizeof(id)))
		return 0;
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_root(), id, id + 2);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	de = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (de && elf_kind(de) == ELF_K_ELF)
		err = scan_symbols(de, true, pl, c, n, cap, seq);
	elf_end(de);
	close(fd);
	return err;
}

/* Function symbols of .symtab and .dynsym into cands; a stripped file's
 * installed debug file adds its .symtab. */
static int scan_symbols(Elf *e, bool debug_file, struct pool *pl, struct cand **c, size_t *n,
			size_t *cap, uint32_t *seq)
{
	Elf_Scn *scn = NULL;
	bool has_symtab = false;
	int err = 0;

	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		has_symtab |= sh.sh_type == SHT_SYMTAB;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			err = elf_scan_symtab(e, scn, &sh, pl, c, n, cap, seq);
	}
	if (!err && !has_symtab && !debug_file)
		err = debug_file_scan(e, pl, c, n, cap, seq);
	return err;
}

/* Reads segments and the function symbols of an ELF image (scan_symbols).
 * Returns NULL only on allocation failure; a file that is not ELF gives an
 * entry with no segments. */
static struct elf_syms *elf_syms_read(Elf *e)
{
	struct elf_syms *f = calloc(1, sizeof(*f));
	struct pool pl = { 0 };
	struct cand *c = NULL;
	size_t n = 0, cap = 0;
	uint32_t seq = 0;
	int err;

	if (!f)
		return NULL;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_load_segs(e, f)) {
		free(f->segs);
		f->segs = NULL;
		f->nsegs = 0;
		return f;
	}
	err = scan_symbols(e, false, &pl, &c, &n, &cap, &seq);
	if (!err) {
		if (n)
			qsort(c, n, sizeof(*c), cand_cmp);
		f->names = pl.p;
		pl.p = NULL;
		err = elf_build_syms(f, c, n, f->names);
	}
	free(c);
	free(pl.p);
	if (err) {
		elf_syms_free(f);
		return NULL;
	}
	return f;
}

static struct elf_syms *elf_syms_from_fd(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct elf_syms *f = elf_syms_read(e);

	elf_end(e);
	return f;
}

/* The vDSO is the same image in every process of our ABI: read our own,
 * size bytes of it (the traced process's [vdso] mapping). Reading through
 * /proc/self/mem turns a size mismatch into a short read, not a fault. */
static struct elf_syms *elf_syms_vdso(size_t size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct elf_syms *f = NULL;
	char *copy;
	int fd;
	Elf *e;

	if (!base || !size)
		return NULL;
	copy = malloc(size);
	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (copy && fd >= 0 && pread(fd, copy, size, (off_t)base) == (ssize_t)size) {
		e = elf_memory(copy, size);
		f = elf_syms_read(e);
		elf_end(e);
	}
	if (fd >= 0)
		close(fd);
	free(copy);
	return f;
}

/* ---- user symbols: processes ------------------------------------------ */

struct umap {             /* one executable mapping */
	uint64_t start;
	uint64_t end;
	uint64_t off;
	struct elf_syms *elf; /* NULL: unreadable file */
	char *name;           /* basename, for "[name+0x...]" */
};

struct uproc {
	int pid;
	int err;              /* symbolize_user_add_pid's result, kept for repeats */
	struct umap *maps;    /* sorted by start */
	size_t nmaps;
	uint64_t loaded_ns;   /* when maps were read (CLOCK_MONOTONIC) */
};

struct usyms {
	struct uproc *procs;  /* sorted by pid */
	size_t nprocs;
	size_t cap_procs;
	struct elf_syms **files;
	size_t nfiles;
	size_t cap_files;
	struct elf_syms *vdso;
	bool vdso_tried;
};

struct usyms *symbolize_user_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOTSUP;
		return NULL;
	}
	return calloc(1, sizeof(struct usyms));
}

static void uproc_clear(struct uproc *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		free(p->maps[i].name);
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
}

void symbolize_user_free(struct usyms *us)
{
	if (!us)
		return;
	for (size_t i = 0; i < us->nprocs; i++)
		uproc_clear(&us->procs[i]);
	for (size_t i = 0; i < us->nfiles; i++)
		elf_syms_free(us->files[i]);
	elf_syms_free(us->vdso);
	free(us->procs);
	free(us->files);
	free(us);
}

/* Index of pid in us->procs, or where it would go (*found = false). */
static size_t proc_pos(const struct usyms *us, int pid, bool *found)
{
	size_t lo = 0, hi = us->nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (us->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < us->nprocs && us->procs[lo].pid == pid;
	return lo;
}

/* An fd on the mapped file: map_files is exact and works for deleted files;
 * otherwise the path seen from the process's root, then from ours, each
 * checked against the inode. */
static int open_mapped(int pid, uint64_t start, uint64_t end, const char *path,
		       bool deleted, uint64_t ino)
{
	char p[PATH_MAX + 64];
	const char *tries[2] = { p, path };
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || deleted)
		return fd;
	snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path);
	for (int i = 0; i < 2; i++) {
		fd = open(tries[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && st.st_ino == ino)
			return fd;
		close(fd);
	}
	return -1;
}

/* The cached symbols of (dev, ino), loading them on first sight. NULL when
 * the file cannot be opened (not cached: another pid may succeed). */
static struct elf_syms *file_get(struct usyms *us, int pid, uint64_t start, uint64_t end,
				 dev_t dev, uint64_t ino, const char *path, bool deleted)
{
	struct elf_syms *f;
	int fd;

	/* linear: a few hundred distinct files at most, and only at load time */
	for (size_t i = 0; i < us->nfiles; i++)
		if (us->files[i]->dev == dev && us->files[i]->ino == ino)
			return us->files[i];
	fd = open_mapped(pid, start, end, path, deleted, ino);
	if (fd < 0)
		return NULL;
	f = elf_syms_from_fd(fd);
	close(fd);
	if (!f)
		return NULL;
	if (grow(&us->files, &us->cap_files, us->nfiles + 1, sizeof(*us->files))) {
		elf_syms_free(f);
		return NULL;
	}
	f->dev = dev;
	f->ino = ino;
	us->files[us->nfiles++] = f;
	return f;
}

static const char DELETED[] = " (deleted)";

/* Parses one maps line into m when it is an executable mapping we can name.
 * Returns 1 when m was filled, 0 to skip the line, negative on error. */
static int parse_map_line(struct usyms *us, int pid, char *line, struct umap *m)
{
	uint64_t start, end, off, ino;
	unsigned maj, min;
	char perms[8], *path, *base;
	size_t plen, dlen = strlen(DELETED);
	bool deleted = false;
	int pos = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &start, &end, perms, &off, &maj, &min, &ino, &pos) < 7 || !pos)
		return 0;
	if (strlen(perms) < 3 || perms[2] != 'x')
		return 0;
	path = line + pos;
	path[strcspn(path, "\n")] = '\0';
	plen = strlen(path);
	*m = (struct umap){ .start = start, .end = end, .off = off };
	if (!strcmp(path, "[vdso]")) {
		if (!us->vdso_tried) {
			us->vdso = elf_syms_vdso(end - start);
			us->vdso_tried = true;
		}
		m->elf = us->vdso;
		m->name = strdup("vdso");
		return m->name ? 1 : -ENOMEM;
	}
	if (path[0] != '/')
		return 0;  /* anonymous or JIT code: nothing to read */
	if (plen > dlen && !strcmp(path + plen - dlen, DELETED)) {
		deleted = true;
		path[plen - dlen] = '\0';
	}
	m->elf = file_get(us, pid, start, end, makedev(maj, min), ino, path, deleted);
	base = strrchr(path, '/');
	m->name = strdup(base ? base + 1 : path);
	return m->name ? 1 : -ENOMEM;
}

static int load_maps(struct usyms *us, struct uproc *p)
{
	char path[64], *line = NULL;
	size_t cap = 0, mcap = 0;
	FILE *fp;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	fp = fopen(path, "re");
	if (!fp)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, fp) > 0) {
		struct umap m;
		int r;

		if (grow(&p->maps, &mcap, p->nmaps + 1, sizeof(*p->maps))) {
			err = -ENOMEM;
			break;
		}
		r = parse_map_line(us, p->pid, line, &m);
		if (r < 0) {
			err = r;
			break;
		}
		if (r)
			p->maps[p->nmaps++] = m;
	}
	free(line);
	fclose(fp);
	if (!err && !p->nmaps)
		err = -ESRCH;  /* a kernel thread, or it exited while we read */
	if (err)
		uproc_clear(p);
	return err;
}

int symbolize_user_add_pid(struct usyms *us, int pid)
{
	struct uproc p = { .pid = pid };
	bool found;
	size_t at;

	if (!us)
		return -EINVAL;
	at = proc_pos(us, pid, &found);
	if (found)
		return us->procs[at].err;
	if (grow(&us->procs, &us->cap_procs, us->nprocs + 1, sizeof(*us->procs)))
		return -ENOMEM;
	p.err = load_maps(us, &p);
	p.loaded_ns = clock_ns(CLOCK_MONOTONIC);
	memmove(&us->procs[at + 1], &us->procs[at], (us->nprocs - at) * sizeof(*us->procs));
	us->procs[at] = p;
	us->nprocs++;
	return p.err;
}

static const struct umap *map_find(const struct uproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

/* File offset -> ELF virtual address through the PT_LOAD that holds it. */
static bool file_to_vaddr(const struct elf_syms *f, uint64_t foff, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct seg *s = &f->segs[i];

		if (foff >= s->off && foff < s->off + s->filesz) {
			*vaddr = foff - s->off + s->vaddr;
			return true;
		}
	}
	return false;
}

/* libstdc++'s demangler (the C++ ABI's): C++ names are mangled in ELF. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Cuts a demangled function name before its own parameter list (the last
 * balanced "(...)", with any qualifiers after it): flame graphs and name
 * matching want "ns::Class::method", and frames have a bounded length. */
static void strip_params(char *name)
{
	char *p = strrchr(name, ')');
	int depth = 0;

	for (; p && p > name; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && --depth == 0)
			break;
	}
	if (p && p > name && *p == '(')
		*p = '\0';
}

/* The name a user symbol is shown by: demangled once, then kept. */
static const char *shown_name(const struct sym *s)
{
	struct sym *w = (struct sym *)s;
	int status = -1;
	char *d;

	if (s->shown)
		return s->shown;
	if (strncmp(s->name, "_Z", 2))
		return s->name;
	d = __cxa_demangle(s->name, NULL, NULL, &status);
	if (!d || status) {
		free(d);
		return s->name;
	}
	strip_params(d);
	w->shown = d;
	return d;
}

/* A process's mappings are read again for an address outside them (a
 * library loaded since), at most this often. */
#define MAPS_REFRESH_NS 1000000000ULL

/* Reads pid's maps again; the old ones stay when that fails (it exited). */
static void refresh_maps(struct usyms *us, struct uproc *p)
{
	struct uproc fresh = { .pid = p->pid };
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (now - p->loaded_ns < MAPS_REFRESH_NS)
		return;
	p->loaded_ns = now;
	if (load_maps(us, &fresh))
		return;
	uproc_clear(p);
	p->maps = fresh.maps;
	p->nmaps = fresh.nmaps;
}

const char *symbolize_user_format(struct usyms *us, int pid, uint64_t addr, char *buf, size_t len)
{
	const struct umap *m;
	const struct sym *s;
	uint64_t foff, va;
	bool found;
	size_t at;

	if (!us || symbolize_user_add_pid(us, pid))
		return put(buf, len, "%s", SYM_UNKNOWN);
	at = proc_pos(us, pid, &found);
	m = map_find(&us->procs[at], addr);
	if (!m) {
		refresh_maps(us, &us->procs[at]);
		m = map_find(&us->procs[at], addr);
	}
	if (!m)
		return put(buf, len, "%s", SYM_UNKNOWN);
	foff = addr - m->start + m->off;
	if (!m->elf || !file_to_vaddr(m->elf, foff, &va))
		return put(buf, len, "[%s+0x%" PRIx64 "]", m->name, foff);
	s = sym_find(m->elf->syms, m->elf->nsyms, va);
	if (s)
		return put(buf, len, "%s+0x%" PRIx64, shown_name(s), va - s->addr);
	return put(buf, len, "[%s+0x%" PRIx64 "]", m->name, va);
}

// SPDX-License-Identifier: GPL-2.0
/* DWARF unwinding of copied user stacks with elfutils libdwfl. See unwind.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "record.h"
#include "resolve/unwind.h"

#if defined(__x86_64__)
#define UNWIND_NREGS 17   /* rax..r15 and the return address column (rip) */
#define UNWIND_SP 7
#define UNWIND_IP 16
#elif defined(__aarch64__)
#define UNWIND_NREGS 32   /* x0..x30, sp; the pc is passed on its own */
#define UNWIND_SP 31
#define UNWIND_IP 32
#else
#error "unwind.c: unsupported architecture"
#endif

#define MAX_PROCS 256
#define POLL_MS 50
/* A process's mappings are read again for a sample outside them, at most
 * this often (a new library, or JIT code that no file describes). */
#define REBUILD_NS 1000000000ULL

struct uproc_dwfl {
	int pid;
	Dwfl *dwfl;                          /* NULL: could not be built */
	__u64 built_ns;
	const struct ustack_sample *cur;     /* the sample being unwound */
};

struct unwinder {
	struct ring_buffer *rb;
	unwind_sink sink;
	void *arg;
	pthread_t thread;
	bool running;
	volatile bool stop;
	struct uproc_dwfl procs[MAX_PROCS];
	int nprocs;
	int next_evict;
	struct unwind_stats stats;   /* read after the thread ends */
};

/* ---- libdwfl callbacks: one thread, frozen in the sample -------------- */

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct uproc_dwfl *p = dwfl_arg;

	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return p->cur->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	struct uproc_dwfl *p = dwfl_arg;

	*thread_argp = p;
	return p->cur && (__u32)tid == p->cur->tid;
}

/* Only the copied stack is memory: the live process has moved on, and
 * reading its stack now would mix two moments. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct uproc_dwfl *p = dwfl_arg;
	const struct ustack_sample *s = p->cur;
	__u64 sp = s->regs[UNWIND_SP], size = s->size < REC_USTACK_BYTES ? s->size : REC_USTACK_BYTES;

	if (addr < sp || addr - sp + sizeof(*result) > size)
		return false;
	memcpy(result, s->data + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct uproc_dwfl *p = thread_arg;
	Dwarf_Word regs[UNWIND_NREGS];
	int i;

	for (i = 0; i < UNWIND_NREGS; i++)
		regs[i] = p->cur->regs[i];
#if UNWIND_IP >= UNWIND_NREGS
	dwfl_thread_state_register_pc(thread, p->cur->regs[UNWIND_IP]);
#endif
	return dwfl_thread_state_registers(thread, 0, UNWIND_NREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static char *debuginfo_path;   /* libdwfl's default: build-id and debuglink */

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* ---- one Dwfl per process --------------------------------------------- */

static void proc_build(struct uproc_dwfl *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->built_ns = clock_ns(CLOCK_MONOTONIC);
	p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl)
		return;
	dwfl_report_begin(p->dwfl);
	if (dwfl_linux_proc_report(p->dwfl, p->pid) || dwfl_report_end(p->dwfl, NULL, NULL) ||
	    !dwfl_attach_state(p->dwfl, NULL, p->pid, &thread_callbacks, p)) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
}

static struct uproc_dwfl *proc_get(struct unwinder *u, int pid)
{
	struct uproc_dwfl *p;
	int i;

	for (i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	if (u->nprocs < MAX_PROCS) {
		p = &u->procs[u->nprocs++];
	} else {              /* the oldest entry goes */
		p = &u->procs[u->next_evict];
		u->next_evict = (u->next_evict + 1) % MAX_PROCS;
		if (p->dwfl)
			dwfl_end(p->dwfl);
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	proc_build(p);
	return p;
}

/* ---- unwinding -------------------------------------------------------- */

struct walk {
	__u64 pcs[REC_MAX_STACK_DEPTH];
	int n;
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = activation ? pc : pc - 1;
	return w->n < REC_MAX_STACK_DEPTH ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static void unwind_in(struct uproc_dwfl *p, const struct ustack_sample *s, struct walk *w)
{
	w->n = 0;
	if (!p->dwfl)
		return;
	p->cur = s;
	/* ends with an error at the outermost frame or where the copy ends;
	 * the frames found up to there stand */
	dwfl_getthread_frames(p->dwfl, s->tid, frame_cb, w);
	p->cur = NULL;
}

static bool outside_modules(struct uproc_dwfl *p, const struct walk *w, __u64 ip)
{
	if (!p->dwfl)
		return true;
	if (!dwfl_addrmodule(p->dwfl, ip))
		return true;
	return w->n > 0 && !dwfl_addrmodule(p->dwfl, w->pcs[w->n - 1]);
}

static int on_sample(void *ctx, void *data, size_t len)
{
	struct unwinder *u = ctx;
	const struct ustack_sample *s = data;
	__u64 ip;
	struct uproc_dwfl *p;
	struct walk w;

	if (len < sizeof(*s))
		return 0;
	ip = s->regs[UNWIND_IP];
	p = proc_get(u, s->pid);
	unwind_in(p, s, &w);
	if (outside_modules(p, &w, ip) && clock_ns(CLOCK_MONOTONIC) - p->built_ns > REBUILD_NS) {
		proc_build(p);
		unwind_in(p, s, &w);
	}
	if (!w.n) {             /* no CFI for the IP: it alone */
		w.pcs[0] = ip;
		w.n = 1;
	}
	u->sink(u->arg, s->id, s->pid, w.pcs, w.n);
	u->stats.samples++;
	return 0;
}

static void *run(void *arg)
{
	struct unwinder *u = arg;

	/* The kernel side wakes us only when the ring fills up; otherwise the
	 * copies wait at most POLL_MS, and a burst costs one wakeup. */
	while (!u->stop) {
		int r = ring_buffer__poll(u->rb, POLL_MS);

		if (r >= 0 || r == -EINTR)
			r = ring_buffer__consume(u->rb);
		if (r < 0 && r != -EINTR)
			break;
	}
	u->stats.cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

struct unwinder *unwind_start(int ringbuf_fd, unwind_sink sink, void *arg)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return NULL;
	u->sink = sink;
	u->arg = arg;
	u->rb = ring_buffer__new(ringbuf_fd, on_sample, u, NULL);
	if (!u->rb) {
		err = errno;
		free(u);
		errno = err;
		return NULL;
	}
	err = pthread_create(&u->thread, NULL, run, u);
	if (err) {
		ring_buffer__free(u->rb);
		free(u);
		errno = err;
		return NULL;
	}
	u->running = true;
	return u;
}

void unwind_stop(struct unwinder *u, struct unwind_stats *stats)
{
	int i;

	if (!u)
		return;
	u->stop = true;
	if (u->running)
		pthread_join(u->thread, NULL);
	ring_buffer__consume(u->rb);
	ring_buffer__free(u->rb);
	for (i = 0; i < u->nprocs; i++)
		if (u->procs[i].dwfl)
			dwfl_end(u->procs[i].dwfl);
	if (stats)
		*stats = u->stats;  /* cpu_ns: the thread's, read as it ended */
	free(u);
}

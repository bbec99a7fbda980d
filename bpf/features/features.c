// SPDX-License-Identifier: GPL-2.0
/* lockscope-features: load and attach one tiny program per attach type, and
 * look up tracepoints in kernel BTF (modules included, as lockscope-record
 * does: kernel_btf.h) and tracefs. Prints one JSON object.
 *
 * usage: lockscope-features [SYSTEM:EVENT ...]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>
#include <bpf/bpf.h>
#include "features.skel.h"
#include "json_out.h"
#include "kernel_btf.h"

struct attach_kind {
	const char *name;      /* key in the JSON */
	const char *prog;      /* program name in features.bpf.c */
	int needs_perf_event;  /* attach through a perf event fd */
};

static const struct attach_kind kinds[] = {
	{ "tp_btf", "probe_tp_btf", 0 },
	{ "raw_tp", "probe_raw_tp", 0 },
	{ "tracepoint", "probe_tracepoint", 0 },
	{ "kprobe", "probe_kprobe", 0 },
	{ "fentry", "probe_fentry", 0 },
	{ "perf_event", "probe_perf_event", 1 },
};

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

static int open_cpu_clock(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = 49,
	};
	return syscall(__NR_perf_event_open, &attr, -1, 0, -1, 0);
}

/* Returns 0 when the program loaded and attached, else a negative errno. */
static int try_kind(const struct attach_kind *kind, const char **stage)
{
	struct features_bpf *skel;
	struct bpf_program *prog, *want = NULL;
	struct bpf_link *link = NULL;
	int err, pfd = -1;

	*stage = "open";
	skel = features_bpf__open();
	if (!skel)
		return -errno;
	bpf_object__for_each_program(prog, skel->obj) {
		int mine = strcmp(bpf_program__name(prog), kind->prog) == 0;
		bpf_program__set_autoload(prog, mine);
		if (mine)
			want = prog;
	}
	*stage = "load";
	err = features_bpf__load(skel);
	if (err)
		goto out;
	*stage = "attach";
	if (kind->needs_perf_event) {
		pfd = open_cpu_clock();
		if (pfd < 0) {
			err = -errno;
			goto out;
		}
		link = bpf_program__attach_perf_event(want, pfd);
	} else {
		link = bpf_program__attach(want);
	}
	err = link ? 0 : -errno;
out:
	bpf_link__destroy(link);
	if (pfd >= 0)
		close(pfd);
	features_bpf__destroy(skel);
	return err;
}

/* The bpf() syscall itself: create and free the smallest map. */
static void bpf_syscall_json(struct json_out *j)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "probe", 4, 4, 1, NULL);

	json_begin_object(j);
	json_bool(j, "ok", fd >= 0);
	if (fd < 0) {
		json_int(j, "errno", errno);
		json_string(j, "error", strerror(errno));
	} else {
		close(fd);
	}
	json_end_object(j);
}

static void tracepoint_json(struct json_out *j, struct kernel_btf *btf, const char *spec)
{
	char sys[128], event[128], path[400];
	const char *colon = strchr(spec, ':');

	if (!colon || colon - spec >= (long)sizeof(sys) || strlen(colon + 1) >= sizeof(event))
		return;
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - spec), spec);
	snprintf(event, sizeof(event), "%s", colon + 1);
	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/format", sys, event);
	json_key(j, spec);
	json_begin_object(j);
	json_bool(j, "btf", kernel_btf_has_tracepoint(btf, spec));
	json_bool(j, "tracefs", access(path, R_OK) == 0);
	json_end_object(j);
}

int main(int argc, char **argv)
{
	struct json_out j = JSON_OUT_INIT(stdout);
	struct kernel_btf btf;
	size_t i;

	libbpf_set_print(silent_print);
	kernel_btf_open(&btf);

	json_begin_object(&j);
	json_key(&j, "bpf_syscall");
	bpf_syscall_json(&j);
	json_bool(&j, "btf", btf.vmlinux != NULL);
	json_key(&j, "attach");
	json_begin_object(&j);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const char *stage = "";
		int err = try_kind(&kinds[i], &stage);

		json_key(&j, kinds[i].name);
		json_begin_object(&j);
		json_bool(&j, "ok", err == 0);
		if (err) {
			json_string(&j, "stage", stage);
			json_int(&j, "errno", -err);
			json_string(&j, "error", strerror(-err));
		}
		json_end_object(&j);
	}
	json_end_object(&j);
	json_key(&j, "tracepoints");
	json_begin_object(&j);
	for (i = 1; i < (size_t)argc; i++)
		tracepoint_json(&j, &btf, argv[i]);
	json_end_object(&j);
	json_end_object(&j);
	fputc('\n', stdout);
	kernel_btf_close(&btf);
	return 0;
}

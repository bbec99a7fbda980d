// SPDX-License-Identifier: GPL-2.0
/* lockscope-symtest: drives the symbolizer and the path lookups (paths.c) for the tests.
 * Prints one result per line. Not installed. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "resolve/paths.h"
#include "resolve/symbolize.h"

static const char usage[] =
	"usage: lockscope-symtest ksym ADDR...\n"
	"       lockscope-symtest kdata ADDR...         (\"-\" when no data symbol)\n"
	"       lockscope-symtest usym [-w] PID ADDR... (-w: load, print \"loaded\",\n"
	"                                                resolve after a line on stdin)\n"
	"       lockscope-symtest kdev KDEV             (prints MAJ:MIN USER_DEV)\n"
	"       lockscope-symtest path-fd [-k] PID DEV INO\n"
	"       lockscope-symtest path-mount [-k] DEV INO [MAX_ENTRIES]\n"
	"       lockscope-symtest path-cache KDEV MAX_ENTRIES INO... (one line per INO,\n"
	"                                                \"-\" when not found, then \"walks N\")\n"
	"       lockscope-symtest bench\n"
	"DEV is MAJ:MIN or a number: a user dev_t, or with -k the kernel's encoding.\n";

static int bad_usage(void)
{
	fputs(usage, stderr);
	return 2;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

static int parse_dev(const char *s, int kernel, dev_t *dev)
{
	unsigned maj, min;
	uint64_t v;
	char c;

	if (sscanf(s, "%u:%u%c", &maj, &min, &c) == 2) {
		*dev = makedev(maj, min);
		return 0;
	}
	if (parse_u64(s, &v))
		return -1;
	*dev = kernel ? paths_kdev_to_udev((uint32_t)v) : (dev_t)v;
	return 0;
}

static int cmd_kernel(int argc, char **argv, int data)
{
	struct ksyms *ks = symbolize_kernel_load();
	char buf[256];
	int ret = 0;

	if (!ks) {
		fprintf(stderr, "symbolize_kernel_load: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		uint64_t a;
		const char *s;

		if (parse_u64(argv[i], &a)) {
			ret = bad_usage();
			break;
		}
		s = data ? symbolize_kernel_data_name(ks, a, buf, sizeof(buf)) : symbolize_kernel_format(ks, a, buf, sizeof(buf));
		puts(s ? s : "-");
	}
	symbolize_kernel_free(ks);
	return ret;
}

static int cmd_usym(int argc, char **argv)
{
	int wait = argc > 0 && !strcmp(argv[0], "-w");
	struct usyms *us;
	char buf[256];
	uint64_t pid;
	int err, ret = 0;

	argv += wait;
	argc -= wait;
	if (argc < 1 || parse_u64(argv[0], &pid))
		return bad_usage();
	us = symbolize_user_new();
	if (!us) {
		fprintf(stderr, "symbolize_user_new: %s\n", strerror(errno));
		return 1;
	}
	err = symbolize_user_add_pid(us, (int)pid);
	if (err)
		fprintf(stderr, "symbolize_user_add_pid %d: %s\n", (int)pid, strerror(-err));
	if (wait) {
		printf("loaded\n");
		fflush(stdout);
		while ((err = getchar()) != EOF && err != '\n')
			;
	}
	for (int i = 1; i < argc; i++) {
		uint64_t a;

		if (parse_u64(argv[i], &a)) {
			ret = bad_usage();
			break;
		}
		puts(symbolize_user_format(us, (int)pid, a, buf, sizeof(buf)));
	}
	symbolize_user_free(us);
	return ret;
}

static int cmd_kdev(int argc, char **argv)
{
	uint64_t k;
	dev_t d;

	if (argc != 1 || parse_u64(argv[0], &k))
		return bad_usage();
	d = paths_kdev_to_udev((uint32_t)k);
	printf("%u:%u %ju\n", major(d), minor(d), (uintmax_t)d);
	return 0;
}

static int cmd_path(int argc, char **argv, int by_fd)
{
	int kernel = argc > 0 && !strcmp(argv[0], "-k");
	uint64_t pid = 0, ino, max = 0;
	char buf[4096];
	dev_t dev;
	int err;

	argv += kernel;
	argc -= kernel;
	if (by_fd && (argc != 3 || parse_u64(argv[0], &pid)))
		return bad_usage();
	argv += by_fd;
	argc -= by_fd;
	if (argc < 2 || argc > 2 + !by_fd || parse_dev(argv[0], kernel, &dev) ||
	    parse_u64(argv[1], &ino) || (argc == 3 && parse_u64(argv[2], &max)))
		return bad_usage();
	err = by_fd ? paths_from_fds((int)pid, dev, ino, buf, sizeof(buf))
		    : paths_from_mount(dev, ino, buf, sizeof(buf), (unsigned)max);
	if (err) {
		fprintf(stderr, "not found: %s\n", strerror(-err));
		return 1;
	}
	puts(buf);
	return 0;
}

/* The recorder's cache: every INO wanted first, then looked up as a
 * document does (no pid: only the walk can name them). */
static int cmd_path_cache(int argc, char **argv)
{
	uint64_t kdev, max, ino;
	struct rec_paths *p;

	if (argc < 3 || parse_u64(argv[0], &kdev) || parse_u64(argv[1], &max))
		return bad_usage();
	p = paths_new((unsigned)max);
	if (!p)
		return 1;
	for (int i = 2; i < argc; i++) {
		if (parse_u64(argv[i], &ino)) {
			paths_free(p);
			return bad_usage();
		}
		paths_want(p, (__u32)kdev, ino);
	}
	for (int i = 2; i < argc; i++) {
		const char *path;

		parse_u64(argv[i], &ino);
		path = paths_lookup(p, (__u32)kdev, ino, 0);
		puts(path ? path : "-");
	}
	printf("walks %u\n", paths_walks(p));
	paths_free(p);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Load times and lookup rates, as "key value" lines. */
static int cmd_bench(void)
{
	const uint64_t n = 1000000;
	uint64_t kbase = 0, sink = 0;
	struct ksyms *ks;
	struct usyms *us;
	char buf[256];
	double t;
	FILE *fp;

	/* lookups spread over the first 64 MiB of kernel text */
	fp = fopen("/proc/kallsyms", "re");
	if (!fp || fscanf(fp, "%" SCNx64, &kbase) != 1) {
		if (fp)
			fclose(fp);
		return 1;
	}
	fclose(fp);
	t = now();
	ks = symbolize_kernel_load();
	if (!ks)
		return 1;
	printf("ksyms_load_ms %.1f\n", (now() - t) * 1e3);
	t = now();
	for (uint64_t i = 0; i < n; i++)
		sink += symbolize_kernel_format(ks, kbase + (i * 2654435761u) % (64u << 20), buf, sizeof(buf))[0];
	printf("ksyms_format_per_s %.0f\n", n / (now() - t));
	symbolize_kernel_free(ks);

	us = symbolize_user_new();
	if (!us)
		return 1;
	t = now();
	symbolize_user_add_pid(us, getpid());
	printf("usyms_add_pid_self_ms %.2f\n", (now() - t) * 1e3);
	t = now();
	symbolize_user_add_pid(us, getppid());
	printf("usyms_add_pid_parent_ms %.2f\n", (now() - t) * 1e3);
	t = now();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = (uintptr_t)(i & 1 ? (void *)puts : (void *)cmd_bench) + i % 64;

		sink += symbolize_user_format(us, getpid(), a, buf, sizeof(buf))[0];
	}
	printf("usyms_format_per_s %.0f\n", n / (now() - t));
	symbolize_user_free(us);
	return sink == 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return bad_usage();
	if (!strcmp(argv[1], "ksym") && argc > 2)
		return cmd_kernel(argc - 2, argv + 2, 0);
	if (!strcmp(argv[1], "kdata") && argc > 2)
		return cmd_kernel(argc - 2, argv + 2, 1);
	if (!strcmp(argv[1], "usym"))
		return cmd_usym(argc - 2, argv + 2);
	if (!strcmp(argv[1], "kdev"))
		return cmd_kdev(argc - 2, argv + 2);
	if (!strcmp(argv[1], "path-fd"))
		return cmd_path(argc - 2, argv + 2, 1);
	if (!strcmp(argv[1], "path-mount"))
		return cmd_path(argc - 2, argv + 2, 0);
	if (!strcmp(argv[1], "path-cache"))
		return cmd_path_cache(argc - 2, argv + 2);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench();
	return bad_usage();
}

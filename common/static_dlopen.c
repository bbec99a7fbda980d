// SPDX-License-Identifier: GPL-2.0
/* A dlopen that always fails, linked into the static recorder (bpf/Makefile) in place of
 * glibc's: with -Wl,--wrap=dlopen, the program's calls of dlopen call __wrap_dlopen.
 *
 * The one dlopen in those programs is libdw's (libdwfl/debuginfod-client.c): when a
 * module's debug information is not on disk, libdw loads libdebuginfod.so.1 to ask a
 * debuginfod server. A statically linked program cannot load a shared library safely:
 * the library brings the host's libc.so.6 next to the libc linked in, and glibc only
 * supports that when both are the same version (ld warns: "Using 'dlopen' in statically
 * linked applications requires at runtime the shared libraries from the glibc version
 * used for linking"), which a release built once for every host cannot promise. With
 * this, libdw sees libdebuginfod as absent, as on a host that does not have it: the
 * unwinder and the symbolizer use the ELF files and the debug files on disk only.
 */
#include <stddef.h>

void *__wrap_dlopen(const char *file, int mode);

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}

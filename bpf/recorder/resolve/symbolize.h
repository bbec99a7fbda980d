/* SPDX-License-Identifier: GPL-2.0 */
/* Stack symbolization for the recorder: kernel addresses through
 * /proc/kallsyms, user addresses through the ELF symbol tables of each
 * process's executable mappings.
 *
 * Output formats (all NUL-terminated, truncated to the caller's buffer):
 *   "func+0xoff"       a symbol contains the address (offset always printed)
 *   "[file+0xvaddr]"   user address inside a file mapping with no symbol for
 *                      it; file is the mapping's basename and vaddr the ELF
 *                      virtual address (what addr2line -e FILE wants), or the
 *                      file offset when the file could not be read as ELF
 *   "[unknown]"        nothing known about the address
 *
 * Addresses are resolved as given: callers that hold return addresses and
 * want the call site may pass addr - 1. Nothing here is thread-safe.
 */
#ifndef LOCKSCOPE_SYMBOLIZE_H
#define LOCKSCOPE_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#define SYM_UNKNOWN "[unknown]"

struct ksyms;

/* Loads and sorts /proc/kallsyms. NULL with errno set on failure; EPERM when
 * the kernel hides the addresses (they all read as zero: not root, or
 * kptr_restrict). */
struct ksyms *symbolize_kernel_load(void);
void symbolize_kernel_free(struct ksyms *ks);

/* Text symbol containing addr as "func+0xoff", else "[unknown]". Returns buf. */
const char *symbolize_kernel_format(const struct ksyms *ks, uint64_t addr, char *buf, size_t len);

/* Data symbol (kallsyms types d D b B r R) containing addr: "sym" when exact,
 * "sym+0xoff" otherwise. Section markers (__start_*, __stop_*, ...) only match
 * exactly, since they bound sections rather than name objects. NULL if none;
 * kernels without CONFIG_KALLSYMS_ALL list only such markers. */
const char *symbolize_kernel_data_name(const struct ksyms *ks, uint64_t addr, char *buf, size_t len);

struct usyms;

/* An empty cache; NULL with errno set on failure. */
struct usyms *symbolize_user_new(void);
void symbolize_user_free(struct usyms *us);

/* Snapshots /proc/PID/maps and loads the symbol tables (.symtab and .dynsym)
 * of its executable file mappings now, so that the pid stays resolvable after
 * it exits. Files are cached by (dev, inode) and shared between processes.
 * Idempotent: a pid seen before (even one that failed) costs a lookup.
 * Returns 0, or a negative errno when the pid could not be read. */
int symbolize_user_add_pid(struct usyms *us, int pid);

/* Resolves addr in pid (loading the pid first if it was never added).
 * Returns buf, formatted as described at the top of this file. */
const char *symbolize_user_format(struct usyms *us, int pid, uint64_t addr, char *buf, size_t len);

#endif
